"""The cluster ``oam-operator diff`` compares with when the Application's profile delivers to
another one (docs/multicluster.md#diff-against-the-remote-cluster).

The CLI reads the profile's kubeconfig Secret with the user's own credentials — so only a user
who may read that Secret sees the remote cluster — and checks it with the operator's own rules
(controller/reconcile/delivery.py), so the refusals have the operator's words. The Secret's namespace,
when the profile names none, is the operator's: ``--operator-namespace``, whose environment
variable ``OAM_OPERATOR_OPERATOR_NAMESPACE`` is the operator's own setting too.

A standard ClusterProfile (``multicluster.x-k8s.io``) is reached as the operator reaches it
(controller/reconcile/inventory.py): its access provider's server and CA, the token of the Secret
``<operator namespace>/<clusterName>``, read with the user's credentials too. Its
``ControlPlaneHealthy`` not True is a warning, not a refusal: the diff only reads and dry-runs, and
a cluster that answers is worth comparing with (docs/multicluster.md#diff-against-the-remote-cluster).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.cli.profiles import access_provider
from oam_operator.controller.reconcile import inventory
from oam_operator.controller.reconcile.delivery import DeliveryRefused, parse_kubeconfig, secret_key_of, secret_value
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.ratelimit import RateLimiter

__all__ = ["OPERATOR_NAMESPACE_ENV", "RemoteCluster", "RemoteRefused", "remote_cluster"]

OPERATOR_NAMESPACE_ENV = "OAM_OPERATOR_OPERATOR_NAMESPACE"


class RemoteRefused(Exception):
    """The remote cluster cannot be compared with; ``str()`` is the message."""


@dataclass
class RemoteCluster:
    """The client of the remote cluster, its server and its id (the cluster part of the owner ids)."""

    client: ClusterClient
    server: str
    cluster_id: str
    profile: str  # as messages name it: <p>, or <ns>/<p> (multicluster.x-k8s.io) for a standard one
    warning: str = ""  # a standard profile's ControlPlaneHealthy not True: compared with all the same

    @property
    def label(self) -> str:
        return f"cluster {self.server} (ClusterProfile {self.profile})"


def remote_cluster(hub: ClusterClient, profile_name: str, profile: Mapping[str, Any] | None,
                   operator_namespace: str | None = None) -> RemoteCluster | None:
    """The remote cluster ``profile`` delivers to, ``None`` for the operator's own; raises
    ``RemoteRefused``. ``operator_namespace`` ``None``: the environment variable's."""
    if operator_namespace is None:
        operator_namespace = os.environ.get(OPERATOR_NAMESPACE_ENV, "")
    if profile is not None and inventory.is_standard(profile):
        return _standard_cluster(hub, profile, operator_namespace)
    spec = (profile or {}).get("spec") or {}
    if not isinstance(spec, Mapping):
        return None
    ref_fields = spec.get("kubeConfig", {}).get("secretRef") if isinstance(spec.get("kubeConfig"), Mapping) else None
    if isinstance(ref_fields, Mapping) and ref_fields.get("name") and not ref_fields.get("namespace") \
            and not operator_namespace:
        raise RemoteRefused(f"ClusterProfile {profile_name}: its kubeconfig Secret {ref_fields['name']} is in the "
                            f"operator's namespace: name it with --operator-namespace ({OPERATOR_NAMESPACE_ENV})")
    try:
        ref = secret_key_of(profile_name, spec, operator_namespace, _explicit_namespace(spec))
        if ref is None:
            return None
        try:
            secret = hub.request("read", "GET", f"/api/v1/namespaces/{ref.namespace}/secrets/{ref.name}")
        except ApiError as error:
            if error.status == 404:
                raise DeliveryRefused(f"ClusterProfile {profile_name}: kubeconfig Secret {ref} not found") from None
            if error.status == 403:
                raise RemoteRefused(f"ClusterProfile {profile_name} delivers to the cluster in the Secret {ref}, "
                                    "which you may not read: the diff needs get on it") from None
            raise
        kubeconfig = parse_kubeconfig(profile_name, ref, secret_value(profile_name, ref, secret))
    except DeliveryRefused as refused:
        raise RemoteRefused(str(refused)) from None
    return _connected(kubeconfig.document, kubeconfig.server, profile_name)


def _standard_cluster(hub: ClusterClient, profile: Mapping[str, Any], operator_namespace: str) -> RemoteCluster:
    """The cluster of a standard profile, through the operator's access provider and token Secret."""
    where = f"ClusterProfile {inventory.display(profile)}"
    try:
        access = inventory.access_of(profile, access_provider(), operator_namespace or "-")
        if not operator_namespace:
            raise RemoteRefused(f"{where}: its token Secret {access.secret_name} is in the operator's namespace: "
                                f"name it with --operator-namespace ({OPERATOR_NAMESPACE_ENV})")
        try:
            secret = hub.request("read", "GET", f"/api/v1/namespaces/{access.secret_namespace}/secrets/"
                                                f"{access.secret_name}")
        except ApiError as error:
            if error.status == 404:
                secret = None
            elif error.status == 403:
                raise RemoteRefused(f"{where} delivers to the cluster with the token in the Secret {access}, "
                                    "which you may not read: the diff needs get on it") from None
            else:
                raise
        kubeconfig = inventory.kubeconfig_of(profile, access, inventory.token_of(profile, access, secret))
    except DeliveryRefused as refused:
        raise RemoteRefused(str(refused)) from None
    remote = _connected(kubeconfig.document, kubeconfig.server, inventory.display(profile))
    remote.warning = inventory.unhealthy(profile) or ""
    return remote


def _connected(document: Mapping[str, Any], server: str, profile: str) -> RemoteCluster:
    """A client of the cluster ``document`` reaches, and its id; raises ``RemoteRefused``."""
    client = _client(dict(document))
    label = f"cluster {server} (ClusterProfile {profile})"
    try:
        cluster_id = str(client.request("read", "GET", "/api/v1/namespaces/kube-system")["metadata"]["uid"])
    except ApiError as error:
        client.close()
        raise RemoteRefused(f"{label}: {error}") from None
    return RemoteCluster(client, server, cluster_id, profile)


def _explicit_namespace(spec: Mapping[str, Any]) -> list[str]:
    """A namespace the profile names itself is the platform team's choice: the CLI does not know
    the operator's ``--profile-secret-namespaces`` and lets the read decide."""
    ref = (spec.get("kubeConfig") or {}).get("secretRef") if isinstance(spec.get("kubeConfig"), Mapping) else None
    namespace = ref.get("namespace") if isinstance(ref, Mapping) else None
    return [str(namespace)] if namespace else []


def _client(document: dict[str, Any]) -> ClusterClient:
    from kubernetes import client as k8s
    from kubernetes import config

    configuration = k8s.Configuration()
    config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
        document, client_configuration=configuration, persist_config=False)
    api = k8s.ApiClient(configuration)
    try:
        return ClusterClient(api, rate_limiter=RateLimiter(0, 1), user_agent="oam-operator-diff")
    finally:
        api.close()  # type: ignore[no-untyped-call]
