"""The connection per remote cluster (docs/multicluster.md#connections): one client per kubeconfig
Secret, shared by every Application going there; a new resourceVersion reconnects; the remote
cluster's id read once per connection. The hub and the remote clients are fakes that answer
``request()`` from dictionaries and forbid the Secrets' watch, so each pass reads the Secret
(the watch: test_profilesecrets.py; the real clients: the integration and e2e tests)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from oam_operator.controller.reconcile.delivery import DeliveryRefused, Kubeconfig, NamespaceNotAllowed
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.remotes import RemoteClusters
from oam_operator.reconciler.errors import PermanentApiError, TransientApiError

KUBECONFIG = {
    "clusters": [{"name": "c", "cluster": {"server": "https://spoke.example:6443"}}],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    "current-context": "c",
}
PROFILE = {"spec": {"kubeConfig": {"secretRef": {"name": "spoke"}}}}


class FakeHub:
    def __init__(self) -> None:
        self.secrets: dict[str, dict[str, Any]] = {}
        self.reads: list[str] = []

    def put(self, name: str, version: str, document: Any = KUBECONFIG) -> None:
        data = base64.b64encode(json.dumps(document).encode()).decode()
        self.secrets[f"/api/v1/namespaces/oam-system/secrets/{name}"] = {
            "metadata": {"uid": f"uid-{name}", "resourceVersion": version}, "data": {"value": data}}

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        if verb == "list":  # the Secret's watch may not run here: each pass reads it (profilesecrets.py)
            raise PermanentApiError("403 Forbidden", status=403, reason="Forbidden", verb=verb)
        self.reads.append(path)
        if path not in self.secrets:
            raise PermanentApiError("404 Not Found", status=404, reason="NotFound", verb=verb)
        return self.secrets[path]


class FakeRemote:
    def __init__(self, kubeconfig: Kubeconfig, failures: int) -> None:
        self.server = kubeconfig.server
        self.failures = failures
        self.closed = False
        self.impersonated_user = None

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        assert path == "/api/v1/namespaces/kube-system"
        if self.failures:
            self.failures -= 1
            raise TransientApiError("connection error: refused", status=0, reason="ConnectionError", verb=verb)
        return {"metadata": {"uid": "remote-uid"}}

    def close(self) -> None:
        self.closed = True


def remotes(hub: FakeHub, failures: int = 0) -> tuple[RemoteClusters, list[FakeRemote]]:
    made: list[FakeRemote] = []

    def make(kubeconfig: Kubeconfig) -> Any:
        made.append(FakeRemote(kubeconfig, failures))
        return made[-1]

    return RemoteClusters(hub, Settings(), "oam-system", make_client=make), made  # type: ignore[arg-type]


def test_applications_going_to_one_cluster_share_one_connection() -> None:
    hub = FakeHub()
    hub.put("spoke", "1")
    clusters, made = remotes(hub)
    first = clusters.target("p", PROFILE, "team-a")
    second = clusters.target("q", PROFILE, "team-b")
    assert first is not None and second is not None
    assert len(made) == 1 and clusters.connections() == 1
    assert first.clients is second.clients
    assert (first.cluster_id, first.server) == ("remote-uid", "https://spoke.example:6443")
    assert first.label == "cluster https://spoke.example:6443 (ClusterProfile p)"
    assert hub.reads == ["/api/v1/namespaces/oam-system/secrets/spoke"] * 2  # the Secret, once per pass


def test_a_rotated_secret_reconnects_and_closes_the_old_client() -> None:
    hub = FakeHub()
    hub.put("spoke", "1")
    clusters, made = remotes(hub)
    clusters.target("p", PROFILE, "team-a")
    hub.put("spoke", "2")
    target = clusters.target("p", PROFILE, "team-a")
    assert len(made) == 2 and made[0].closed and not made[1].closed
    assert target is not None and target.clients.operator_client is made[1]
    clusters.close()
    assert made[1].closed


def test_a_profile_without_kubeconfig_is_the_operators_own_cluster() -> None:
    hub = FakeHub()
    clusters, made = remotes(hub)
    assert clusters.target("p", {"spec": {"capabilities": {}}}, "team-a") is None
    assert clusters.target("", None, "team-a") is None
    assert hub.reads == [] and made == []


def test_the_namespace_rule_applies_to_passes_but_not_to_deletion() -> None:
    hub = FakeHub()
    hub.put("spoke", "1")
    clusters, _ = remotes(hub)
    profile = {"spec": {**PROFILE["spec"], "allowedNamespaces": ["team-a"]}}
    with pytest.raises(NamespaceNotAllowed) as caught:
        clusters.target("p", profile, "team-b")
    assert str(caught.value) == "ClusterProfile p does not allow Applications of namespace team-b (allowedNamespaces: team-a)"
    assert hub.reads == []  # refused before the Secret is read
    assert clusters.target("p", profile, None) is not None


def test_a_missing_secret_is_refused() -> None:
    clusters, _ = remotes(FakeHub())
    with pytest.raises(DeliveryRefused) as caught:
        clusters.target("p", PROFILE, "team-a")
    assert str(caught.value) == "ClusterProfile p: kubeconfig Secret oam-system/spoke not found"


def test_an_unreachable_cluster_names_itself_and_is_asked_again_at_the_next_pass() -> None:
    hub = FakeHub()
    hub.put("spoke", "1")
    clusters, made = remotes(hub, failures=1)
    with pytest.raises(TransientApiError) as caught:
        clusters.target("p", PROFILE, "team-a")
    assert str(caught.value) == "cluster https://spoke.example:6443 (ClusterProfile p): connection error: refused"
    target = clusters.target("p", PROFILE, "team-a")
    assert target is not None and target.cluster_id == "remote-uid"
    assert len(made) == 1  # the connection was kept; only the id was read again


def test_a_kubeconfig_the_client_library_cannot_load_is_refused() -> None:
    from kubernetes.config import ConfigException

    hub = FakeHub()
    hub.put("spoke", "1")

    def refuse(kubeconfig: Kubeconfig) -> Any:
        raise ConfigException("Invalid kube-config file. Expected key token in kube-config/users/u/user")

    clusters = RemoteClusters(hub, Settings(), "oam-system", make_client=refuse)  # type: ignore[arg-type]
    with pytest.raises(DeliveryRefused) as caught:
        clusters.target("p", PROFILE, "team-a")
    assert str(caught.value) == ('ClusterProfile p: Secret oam-system/spoke key "value": the kubeconfig cannot be '
                                 "loaded: Invalid kube-config file. Expected key token in kube-config/users/u/user")
    assert clusters.connections() == 0


def test_the_real_client_factory_shares_the_accounting_pool_and_leader_fence() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from oam_operator.controller.service.fence import FencedRateLimiter
    from oam_operator.reconciler.accounting import RequestAccounting
    from oam_operator.reconciler.ratelimit import RateLimiter

    leading = [True]
    hub: Any = FakeHub()
    hub.rate_limiter = FencedRateLimiter(RateLimiter(0, 1))
    hub.rate_limiter.fence = lambda: leading[0]  # set later, as Runtime.fence() does
    hub.accounting, hub.executor = RequestAccounting(), ThreadPoolExecutor(1)
    real = RemoteClusters(hub, Settings(), "oam-system")
    made = real._client_from(Kubeconfig(KUBECONFIG, "c", "https://spoke.example:6443"))
    try:
        assert made._api.configuration.host == "https://spoke.example:6443"
        assert made.accounting is hub.accounting and made.executor is hub.executor
        made.rate_limiter.acquire()
        leading[0] = False
        with pytest.raises(TransientApiError) as caught:
            made.rate_limiter.acquire()
        assert caught.value.reason == "NotLeader"
    finally:
        made.close()
        hub.executor.shutdown()


class FakeWatches:
    def __init__(self, cluster_id: str) -> None:
        self.cluster_id = cluster_id
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


def watched_remotes(hub_id: str = "") -> tuple[RemoteClusters, list[FakeWatches]]:
    """Remote clusters of a hub holding Secret ``spoke``, recording the watches they start."""
    hub = FakeHub()
    hub.put("spoke", "1")
    started: list[FakeWatches] = []

    def watches(client: Any, owner_cluster: str) -> Any:
        started.append(FakeWatches(owner_cluster))
        return started[-1]

    clusters = RemoteClusters(hub, Settings(), "oam-system", make_client=lambda k: FakeRemote(k, 0),  # type: ignore[arg-type]
                              watches=watches, hub_id=hub_id)
    return clusters, started


def test_one_set_of_watches_per_connection_started_with_the_remote_id_and_stopped_on_rotation() -> None:
    clusters, started = watched_remotes()
    hub: FakeHub = clusters.hub  # type: ignore[assignment]
    first = clusters.target("p", PROFILE, "team-a")
    second = clusters.target("q", PROFILE, "team-b")
    assert first is not None and second is not None
    assert [w.cluster_id for w in started] == ["remote-uid"] and first.owned is second.owned is started[0]
    hub.put("spoke", "2")
    clusters.target("p", PROFILE, "team-a")
    assert len(started) == 2 and started[0].stopped and not started[1].stopped
    clusters.close()
    assert started[1].stopped


def test_the_owner_ids_on_a_remote_cluster_carry_the_hubs_id() -> None:
    """docs/multicluster.md#owner-id-on-the-remote-cluster: the watches there recognise the owner
    ids ``<remote id>@<hub id>/…`` and the pass writes them; the cluster id stays the remote's."""
    clusters, started = watched_remotes("hub-uid")
    target = clusters.target("p", PROFILE, "team-a")
    assert target is not None
    assert (target.cluster_id, target.owner_cluster) == ("remote-uid", "remote-uid@hub-uid")
    assert [w.cluster_id for w in started] == ["remote-uid@hub-uid"]


def test_one_watch_of_grants_per_connection_stopped_with_it() -> None:
    """A grant on the remote cluster wakes the Applications it refused (docs/multicluster.md#faults):
    its Roles and RoleBindings are watched once per connection, through that cluster's client."""
    hub = FakeHub()
    hub.put("spoke", "1")
    started: list[tuple[Any, str, FakeWatches]] = []

    def grants(client: Any, label: str) -> Any:
        started.append((client, label, FakeWatches("")))
        return started[-1][2]

    clusters = RemoteClusters(hub, Settings(), "oam-system", make_client=lambda k: FakeRemote(k, 0),  # type: ignore[arg-type]
                              grants=grants)
    first = clusters.target("p", PROFILE, "team-a")
    clusters.target("q", PROFILE, "team-b")
    assert first is not None and len(started) == 1
    assert started[0][0] is first.clients.operator_client  # the remote's client, not the hub's
    assert started[0][1] == "cluster https://spoke.example:6443 (ClusterProfile p)"  # how its log names it
    hub.put("spoke", "2")
    clusters.target("p", PROFILE, "team-a")
    assert len(started) == 2 and started[0][2].stopped and not started[1][2].stopped
    clusters.close()
    assert started[1][2].stopped
