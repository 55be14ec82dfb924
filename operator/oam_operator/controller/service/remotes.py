"""The remote clusters the ClusterProfiles name, one connection each (docs/multicluster.md#connections).

``RemoteClusters.target`` answers, for one pass, which cluster an Application goes to: ``None``
for the operator's own, else a ``Target`` with that cluster's tenant clients, id and watches. The
Secret is read from its watch (profilesecrets.py: one watch per Secret in use, with the operator's
identity), so a no-op pass reads nothing from the hub; the connection is kept per Secret and its
``resourceVersion``, so every Application going to one cluster shares one client (one connection
pool, one rate limiter sized like the operator's own) and one set of watches of owned objects
(ownedwatch.py, started by the ``watches`` factory once the cluster's id is known) and of its
Roles and RoleBindings (grantwatch.py, by the ``grants`` factory: a grant there wakes the
Applications it refused, docs/multicluster.md#faults). A rotated
Secret — a new ``resourceVersion`` — connects anew without a restart; the old client and watches
are closed. The remote cluster's id (its ``kube-system`` UID, with the hub's the cluster part of
the owner ids there, docs/multicluster.md#owner-id-on-the-remote-cluster) is read once per
connection.

A standard ``multicluster.x-k8s.io`` ClusterProfile (docs/multicluster.md#the-standard-cluster-inventory)
goes the same way: its access provider and the token of its Secret (read through the same Secret
watches) make a kubeconfig (reconcile/inventory.py), its connection keyed by that Secret and the
profile, and changed with either; nothing is written to it, and while its ``ControlPlaneHealthy``
is not True the pass does not connect (``ControlPlaneUnhealthy``).

Bad input is a ``DeliveryRefused`` (the exact message of delivery.py or inventory.py); a cluster that cannot be
reached, or refuses the credentials, a ``TransientApiError`` whose message names the cluster:
the pass retries on its backoff and nothing is deleted anywhere.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kubernetes.config import ConfigException

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError, TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter

from ..reconcile.delivery import (
    DeliveryRefused,
    Kubeconfig,
    NamespaceNotAllowed,
    SecretKey,
    Target,
    namespace_refusal,
    owner_cluster,
    parse_kubeconfig,
    secret_key_of,
)
from ..reconcile.delivery import secret_value as read_secret_value
from ..reconcile.inventory import (
    TOKEN_KEY,
    ControlPlaneUnhealthy,
    access_of,
    display,
    is_standard,
    kubeconfig_of,
    token_of,
    unhealthy,
)
from ..reconcile.tenancy import TenantClients
from .fence import FencedRateLimiter
from .ownedwatch import OwnedObjects
from .profilesecrets import SecretWatches
from .profilestatus import CONNECTED, UNREACHABLE, UNUSABLE, ProfileStatus

__all__ = ["RemoteClusters", "Target"]

log = logging.getLogger("oam_operator.controller")


class Stoppable(Protocol):
    def stop(self) -> None: ...


@dataclass
class _Connection:
    version: tuple[str, ...]  # the Secret's uid and resourceVersion (and a standard profile's cluster)
    server: str
    client: ClusterClient
    clients: TenantClients
    cluster_id: str = ""
    owner_cluster: str = ""
    owned: OwnedObjects | None = None
    grants: Stoppable | None = None

    def close(self) -> None:
        for watch in (self.owned, self.grants):
            if watch is not None:
                watch.stop()
        self.client.close()


ClientFactory = Callable[[Kubeconfig], ClusterClient]
#: Starts the watches of owned objects on a remote cluster (its client and the cluster part of the
#: owner ids there), ``None``: no watches.
WatchFactory = Callable[[ClusterClient, str], OwnedObjects | None]
#: Starts the watch of Roles and RoleBindings on a remote cluster (its client and how the log names
#: it), ``None``: none.
GrantFactory = Callable[[ClusterClient, str], Stoppable | None]


class RemoteClusters:
    """The connections to remote clusters, keyed by their Secret; thread-safe."""

    def __init__(self, hub: ClusterClient, settings: Settings, operator_namespace: str, *,
                 user_agent: str = "oam-operator", make_client: ClientFactory | None = None,
                 watches: WatchFactory | None = None, on_secret_change: Callable[[str, str], None] | None = None,
                 status: ProfileStatus | None = None, hub_id: str = "", grants: GrantFactory | None = None) -> None:
        self.hub = hub  # reads the Secrets, with the operator's identity
        self.hub_id = hub_id  # the operator's own cluster id, in the owner ids on remote clusters
        self.secrets = SecretWatches(hub, on_secret_change)
        self.status = status  # the profiles' Ready conditions (profilestatus.py); ``None``: not written
        self.user_agent = user_agent
        self.settings = settings
        self.operator_namespace = operator_namespace
        self.other_namespaces: Sequence[str] = settings.profile_secret_namespaces
        self.make_client = make_client or self._client_from
        self.watches = watches
        self.grants = grants
        #: by (Secret namespace, name, key), or ("", token Secret namespace, name, profile) of a standard one
        self._connections: dict[tuple[str, ...], _Connection] = {}
        self._lock = threading.Lock()

    def target(self, profile_name: str, profile: Mapping[str, Any] | None, namespace: str | None) -> Target | None:
        """Where an Application of ``namespace`` using ``profile`` goes (``namespace=None``: its
        deletion, which the namespace rule never stops); raises ``DeliveryRefused`` or
        ``TransientApiError`` (docs/multicluster.md#refusals); a standard ClusterProfile whose control
        plane is not healthy raises ``ControlPlaneUnhealthy``
        (docs/multicluster.md#the-standard-cluster-inventory)."""
        if profile is not None and is_standard(profile):
            return self._reach_standard(profile_name, profile)
        spec = (profile or {}).get("spec") or {}
        if not isinstance(spec, Mapping):
            return None
        refused = None if namespace is None else namespace_refusal(profile_name, spec, namespace)
        if refused is not None:
            raise NamespaceNotAllowed(refused)
        try:
            target = self._reach(profile_name, spec)
        except DeliveryRefused as refused:
            self._observed(profile_name, ("False", UNUSABLE, str(refused)))
            raise
        except TransientApiError as error:
            self._observed(profile_name, ("False", UNREACHABLE, str(error)))
            raise
        if target is None:
            self._observed(profile_name, ("True", CONNECTED, "delivers to the operator's own cluster"), only_stale=True)
        else:
            self._observed(profile_name, ("True", CONNECTED,
                                          f"connected to cluster {target.server} (id {target.cluster_id})"))
        return target

    def _reach(self, profile_name: str, spec: Mapping[str, Any]) -> Target | None:
        ref = secret_key_of(profile_name, spec, self.operator_namespace, self.other_namespaces)
        if ref is None:
            return None
        secret = self._secret(profile_name, ref)
        meta = secret.get("metadata") or {}
        version = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
        connection = self._connection(profile_name, ref, secret, version)
        if not connection.cluster_id:
            label = Target(profile_name, connection.server, "", connection.clients).label
            self._identify(connection, label)
        return Target(profile_name, connection.server, connection.cluster_id, connection.clients, connection.owned,
                      connection.owner_cluster)

    def _reach_standard(self, profile_name: str, profile: Mapping[str, Any]) -> Target:
        """A standard ClusterProfile's cluster: its health first, then its access provider and the
        token Secret (read through the same Secret watches as the kubeconfig Secrets). Nothing is
        written to the profile: its cluster manager owns it."""
        waiting = unhealthy(profile)
        if waiting is not None:
            raise ControlPlaneUnhealthy(waiting)
        access = access_of(profile, self.settings.inventory_access_provider, self.operator_namespace)
        ref = SecretKey(access.secret_namespace, access.secret_name, TOKEN_KEY)
        try:
            secret = self.secrets.secret(ref.namespace, ref.name)
        except ApiError as error:
            raise error.with_context(f"reading the token Secret {ref} of ClusterProfile {display(profile)}") from None
        token = token_of(profile, access, secret)
        kubeconfig = kubeconfig_of(profile, access, token)
        meta = (secret or {}).get("metadata") or {}
        # The connection changes with the Secret and with the provider's cluster (its server, CA, …).
        version = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""),
                   json.dumps(kubeconfig.document.get("clusters"), sort_keys=True))
        key = ("", ref.namespace, ref.name, profile_name)
        with self._lock:
            connection = self._connections.get(key)
        if connection is None or connection.version != version:
            where = f"ClusterProfile {display(profile)}"
            connection = self._connect(where, where, key, version, kubeconfig)
        if not connection.cluster_id:
            self._identify(connection, Target(profile_name, connection.server, "", connection.clients).label)
        return Target(profile_name, connection.server, connection.cluster_id, connection.clients, connection.owned,
                      connection.owner_cluster)

    def _observed(self, profile_name: str, observation: tuple[str, str, str], *, only_stale: bool = False) -> None:
        if self.status is not None:
            self.status.observe(profile_name, observation, only_stale=only_stale)

    def connections(self) -> int:
        """How many remote clusters are connected (one per Secret)."""
        with self._lock:
            return len(self._connections)

    def close(self) -> None:
        self.secrets.stop()
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        for connection in connections:
            connection.close()

    # -- internals ------------------------------------------------------------------------------

    def _secret(self, profile_name: str, ref: SecretKey) -> Mapping[str, Any]:
        try:
            secret = self.secrets.secret(ref.namespace, ref.name)
        except ApiError as error:
            raise error.with_context(f"reading the kubeconfig Secret {ref} of ClusterProfile {profile_name}") from None
        if secret is None:
            raise DeliveryRefused(f"ClusterProfile {profile_name}: kubeconfig Secret {ref} not found")
        return secret

    def _connection(self, profile_name: str, ref: SecretKey, secret: Mapping[str, Any],
                    version: tuple[str, str]) -> _Connection:
        key = (ref.namespace, ref.name, ref.key)
        with self._lock:
            known = self._connections.get(key)
            if known is not None and known.version == version:
                return known
        kubeconfig = parse_kubeconfig(profile_name, ref, read_secret_value(profile_name, ref, secret))
        return self._connect(f'ClusterProfile {profile_name}: Secret {ref} key "{ref.key}"', f"kubeconfig Secret {ref}",
                             key, version, kubeconfig)

    def _connect(self, where: str, what: str, key: tuple[str, ...], version: tuple[str, ...],
                 kubeconfig: Kubeconfig) -> _Connection:
        """A new connection of ``key`` at ``version``, unless another pass made it first (``where``
        begins a refusal, ``what`` names the changed source in the log)."""
        try:
            client = self.make_client(kubeconfig)
        except (ConfigException, ValueError) as error:  # say, certificate data that is not base64
            raise DeliveryRefused(f"{where}: the kubeconfig cannot be loaded: {error}") from None
        settings = self.settings
        connection = _Connection(version, kubeconfig.server, client, TenantClients(
            client, default_service_account=settings.default_service_account,
            require_service_account=settings.require_service_account,
            use_operator_identity=settings.use_operator_identity))
        with self._lock:
            replaced = self._connections.get(key)
            if replaced is not None and replaced.version == version:  # another pass connected first
                client.close()
                return replaced
            self._connections[key] = connection
        if replaced is not None:
            log.info("%s changed: reconnecting to %s", what, kubeconfig.server)
            replaced.close()
        return connection

    def _identify(self, connection: _Connection, label: str) -> None:
        """Read the remote cluster's id, then start its watches (once per connection)."""
        try:
            namespace = connection.client.request("read", "GET", "/api/v1/namespaces/kube-system")
        except ApiError as error:
            raise TransientApiError(f"{label}: {error}", status=error.status, reason=error.reason,
                                    verb="read") from None
        cluster_id = str(namespace["metadata"]["uid"])
        owner = owner_cluster(cluster_id, self.hub_id)
        owned = self.watches(connection.client, owner) if self.watches is not None else None
        grants = self.grants(connection.client, label) if self.grants is not None else None
        with self._lock:
            if connection.cluster_id:  # another pass identified it first
                for watch in (owned, grants):
                    if watch is not None:
                        watch.stop()
                return
            connection.cluster_id, connection.owner_cluster, connection.owned = cluster_id, owner, owned
            connection.grants = grants

    def _client_from(self, kubeconfig: Kubeconfig) -> ClusterClient:
        """A client of its own for the remote cluster, sharing the operator's thread pool, request
        accounting and leader-election fence (fence.py)."""
        from kubernetes import client as k8s
        from kubernetes import config

        configuration = k8s.Configuration()
        config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            dict(kubeconfig.document), client_configuration=configuration, persist_config=False)
        size = self.settings.max_concurrent_reconciles * self.settings.apply_concurrency
        configuration.connection_pool_maxsize = max(size, configuration.connection_pool_maxsize or 0)
        hub_limiter = self.hub.rate_limiter
        limiter: RateLimiter = RateLimiter(self.settings.kube_api_qps, self.settings.kube_api_burst)
        if isinstance(hub_limiter, FencedRateLimiter):
            limiter = FencedRateLimiter(limiter, fence=lambda: hub_limiter.fence())
        api = k8s.ApiClient(configuration)
        try:
            return ClusterClient(api, rate_limiter=limiter, executor=self.hub.executor,
                                 accounting=self.hub.accounting, user_agent=self.user_agent)
        finally:
            api.close()  # type: ignore[no-untyped-call]
