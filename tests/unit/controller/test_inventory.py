"""The standard cluster inventory's pure rules (docs/multicluster.md#the-standard-cluster-inventory):
which profile a name means, the access provider and the token Secret, the refusals and the
health message, word for word."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from oam_operator.controller.reconcile.delivery import DeliveryRefused
from oam_operator.controller.reconcile.inventory import (
    access_of,
    delivery_view,
    is_standard,
    kubeconfig_of,
    merged,
    token_of,
    transform_view,
    unhealthy,
)
from oam_operator.controller.service.inventory import StandardProfiles
from oam_operator.controller.service.targets import TargetProfiles

SERVER = "https://spoke.example:6443"


def standard(name: str = "spoke-a", namespace: str = "fleet", *, labels: dict[str, str] | None = None,
             providers: list[dict[str, Any]] | None = None, credential_providers: list[dict[str, Any]] | None = None,
             conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": conditions or []}
    if providers is not None:
        status["accessProviders"] = providers
    if credential_providers is not None:
        status["credentialProviders"] = credential_providers
    return {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "spec": {"clusterManager": {"name": "test"}}, "status": status}


def provider(name: str = "secretreader", cluster_name: str | None = None, **cluster: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"server": SERVER, **cluster}
    if cluster_name is not None:
        body["extensions"] = [{"name": "client.authentication.k8s.io/exec",
                               "extension": {"clusterName": cluster_name}}]
    return {"name": name, "cluster": body}


def own(name: str) -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": name},
            "spec": {}}


def secret(**data: str) -> dict[str, Any]:
    return {"metadata": {"uid": "u", "resourceVersion": "1"},
            "data": {key: base64.b64encode(value.encode()).decode() for key, value in data.items()}}


def test_the_kind_is_told_by_its_api_group() -> None:
    assert is_standard(standard())
    assert not is_standard(own("a"))
    assert not is_standard(None)


def test_the_access_provider_gives_the_server_and_the_exec_extension_the_secret_name() -> None:
    profile = standard(providers=[provider("other"), provider(cluster_name="spoke-a-token",
                                                              **{"certificate-authority-data": "Q0E="})])
    access = access_of(profile, "secretreader", "oam-system")
    assert (access.secret_namespace, access.secret_name) == ("oam-system", "spoke-a-token")
    config = kubeconfig_of(profile, access, "the-token")
    assert config.server == SERVER
    assert config.document["clusters"] == [{"name": "spoke-a", "cluster": {
        "server": SERVER, "certificate-authority-data": "Q0E="}}]
    assert config.document["users"] == [{"name": "spoke-a", "user": {"token": "the-token"}}]


def test_without_the_extension_the_secret_is_named_after_the_profile() -> None:
    access = access_of(standard(providers=[provider()]), "secretreader", "oam-system")
    assert str(access) == "oam-system/spoke-a"


def test_access_providers_win_over_the_deprecated_credential_providers() -> None:
    profile = standard(providers=[provider(cluster_name="new")],
                       credential_providers=[provider(cluster_name="old")])
    assert access_of(profile, "secretreader", "ns").secret_name == "new"
    only_old = standard(credential_providers=[provider(cluster_name="old")])
    assert access_of(only_old, "secretreader", "ns").secret_name == "old"


def test_refusals_word_for_word() -> None:
    with pytest.raises(DeliveryRefused) as refused:
        access_of(standard(providers=[provider("gcp")], credential_providers=[provider("aws")]), "secretreader", "ns")
    assert str(refused.value) == ('ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): no access provider '
                                  '"secretreader" in status.accessProviders or status.credentialProviders '
                                  "(it has: aws, gcp)")
    with pytest.raises(DeliveryRefused) as refused:
        access_of(standard(), "secretreader", "ns")
    assert str(refused.value).endswith("(it has: none)")
    with pytest.raises(DeliveryRefused) as refused:
        access_of(standard(providers=[{"name": "secretreader", "cluster": {}}]), "secretreader", "ns")
    assert str(refused.value) == ('ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): access provider '
                                  '"secretreader" has no cluster.server')
    access = access_of(standard(providers=[provider()]), "secretreader", "oam-system")
    with pytest.raises(DeliveryRefused) as refused:
        token_of(standard(), access, None)
    assert str(refused.value) == ('ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): token Secret '
                                  'oam-system/spoke-a of access provider "secretreader" not found')
    with pytest.raises(DeliveryRefused) as refused:
        token_of(standard(), access, secret(value="x", ca="y"))
    assert str(refused.value) == ('ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): Secret oam-system/spoke-a '
                                  'has no key "token" (its keys: ca, value)')
    assert token_of(standard(), access, secret(token="abc\n")) == "abc"


def test_a_file_reference_is_refused_as_in_a_kubeconfig_secret() -> None:
    with pytest.raises(DeliveryRefused) as refused:
        access_of(standard(providers=[provider(**{"certificate-authority": "/etc/ca.crt"})]), "secretreader", "ns")
    assert str(refused.value) == ('ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): access provider '
                                  '"secretreader" reads the file certificate-authority, which the operator does not '
                                  "read (use certificate-authority-data)")


@pytest.mark.parametrize(("status", "message", "expected"), [
    ("False", "etcd is down", "ControlPlaneHealthy is False: etcd is down"),
    ("Unknown", "", "ControlPlaneHealthy is Unknown: no message"),
])
def test_an_unhealthy_control_plane_waits_with_its_message(status: str, message: str, expected: str) -> None:
    profile = standard(conditions=[{"type": "ControlPlaneHealthy", "status": status, "message": message}])
    assert unhealthy(profile) == (f"ClusterProfile fleet/spoke-a (multicluster.x-k8s.io): {expected}; the operator "
                                  "connects once it is True")


def test_a_healthy_or_unreported_control_plane_connects() -> None:
    assert unhealthy(standard(conditions=[{"type": "ControlPlaneHealthy", "status": "True"}])) is None
    assert unhealthy(standard(conditions=[{"type": "Other", "status": "False"}])) is None


def test_the_operators_own_kind_wins_a_name_and_the_first_namespace_another() -> None:
    mine = {"spoke-a": own("spoke-a")}
    found = {("fleet", "spoke-a"): standard(), ("fleet", "spoke-b"): standard("spoke-b"),
             ("other", "spoke-b"): standard("spoke-b", "other"), ("other", "spoke-c"): standard("spoke-c", "other")}
    profiles, shadowed = merged(mine, found, ["other", "fleet"])
    assert profiles["spoke-a"] is mine["spoke-a"]
    assert profiles["spoke-b"]["metadata"]["namespace"] == "other"
    assert sorted(profiles) == ["spoke-a", "spoke-b", "spoke-c"]
    assert [str(item) for item in shadowed] == [
        "clusterprofiles.multicluster.x-k8s.io fleet/spoke-a is ignored: clusterprofiles.oam-operator.dev "
        "spoke-a has the same name, and the operator's own kind wins",
        "clusterprofiles.multicluster.x-k8s.io fleet/spoke-b is ignored: clusterprofiles.multicluster.x-k8s.io "
        "other/spoke-b has the same name, and namespace other comes first in --inventory-namespaces",
    ]


class _Listing:
    namespaces = ("fleet",)

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Any] = {}

    def profiles(self) -> dict[tuple[str, str], Any]:
        return dict(self.items)

    def get(self, key: tuple[str, str]) -> Any:
        return self.items.get(key)


def test_a_shadowed_profile_is_logged_once_while_it_is(caplog: pytest.LogCaptureFixture) -> None:
    listing = _Listing()
    targets = TargetProfiles({}, listing)  # type: ignore[arg-type]
    listing.items[("fleet", "spoke-a")] = standard()
    assert targets.standard_changed(("fleet", "spoke-a"), None) == (None, listing.items[("fleet", "spoke-a")])
    with caplog.at_level(logging.WARNING, logger="oam_operator.controller"):
        targets.own_changed("spoke-a", own("spoke-a"))
        targets.own_changed("spoke-a", {**own("spoke-a"), "spec": {"gitopsEngine": "fluxcd"}})
    assert [r.getMessage() for r in caplog.records] == [
        "clusterprofiles.multicluster.x-k8s.io fleet/spoke-a is ignored: clusterprofiles.oam-operator.dev "
        "spoke-a has the same name, and the operator's own kind wins"]
    assert targets.get("spoke-a") == {**own("spoke-a"), "spec": {"gitopsEngine": "fluxcd"}}
    old, new = targets.own_changed("spoke-a", None)
    assert new is listing.items[("fleet", "spoke-a")] and old is not None and not is_standard(old)


def test_the_transform_sees_an_empty_profile_of_its_name() -> None:
    assert transform_view(standard()) == {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile",
                                          "metadata": {"name": "spoke-a"}, "spec": {}}


def test_health_and_the_provider_wake_but_other_status_does_not() -> None:
    base = standard(providers=[provider()], conditions=[{"type": "ControlPlaneHealthy", "status": "True",
                                                        "lastTransitionTime": "t1"}])
    later = {**base, "status": {**base["status"], "version": {"kubernetes": "1.37"}}}
    assert delivery_view(base, "secretreader") == delivery_view(later, "secretreader")
    sick = standard(providers=[provider()], conditions=[{"type": "ControlPlaneHealthy", "status": "False"}])
    assert delivery_view(base, "secretreader") != delivery_view(sick, "secretreader")
    moved = standard(providers=[provider(cluster_name="x")], conditions=base["status"]["conditions"])
    assert delivery_view(base, "secretreader") != delivery_view(moved, "secretreader")


class _FakeClient:
    """Answers the LIST of a namespace's standard ClusterProfiles; no watch events."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        assert path == "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles"
        return {"metadata": {"resourceVersion": "5"}, "items": self.items}


def test_a_list_replaces_what_the_namespace_held_and_tells_each_change() -> None:
    seen: list[tuple[Any, ...]] = []
    store = StandardProfiles(_FakeClient([]), ["fleet"],  # type: ignore[arg-type]
                             lambda key, old, new: seen.append((key, old is None, new is None)))
    first = {**standard(), "metadata": {**standard()["metadata"], "uid": "1", "resourceVersion": "1"}}
    store._replace("fleet", [first])
    store._replace("fleet", [first])  # unchanged: nothing told
    store._replace("fleet", [])
    assert seen == [(("fleet", "spoke-a"), True, False), (("fleet", "spoke-a"), False, True)]
    assert store.profiles() == {}


def test_a_standard_profile_connects_with_the_token_and_writes_no_status() -> None:
    from oam_operator.controller.reconcile.delivery import Kubeconfig
    from oam_operator.controller.reconcile.inventory import ControlPlaneUnhealthy
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.remotes import RemoteClusters
    from tests.unit.controller.test_remotes import FakeHub, FakeRemote

    hub, made, observed = FakeHub(), [], []
    hub.secrets["/api/v1/namespaces/oam-system/secrets/spoke-a"] = secret(token="abc")

    def make(kubeconfig: Kubeconfig) -> Any:
        made.append((kubeconfig, FakeRemote(kubeconfig, 0)))
        return made[-1][1]

    class Status:
        def observe(self, *args: Any, **kw: Any) -> None:
            observed.append(args)

    clusters = RemoteClusters(hub, Settings(), "oam-system", make_client=make,  # type: ignore[arg-type]
                              status=Status())  # type: ignore[arg-type]
    profile = standard(providers=[provider()])
    target = clusters.target("spoke-a", profile, "team-a")
    assert target is not None and (target.server, target.cluster_id) == (SERVER, "remote-uid")
    assert made[0][0].document["users"] == [{"name": "spoke-a", "user": {"token": "abc"}}]
    assert clusters.target("spoke-a", profile, "team-b") is not None and len(made) == 1  # one connection
    sick = standard(providers=[provider()], conditions=[{"type": "ControlPlaneHealthy", "status": "False",
                                                         "message": "apiserver down"}])
    with pytest.raises(ControlPlaneUnhealthy) as waiting:
        clusters.target("spoke-a", sick, "team-a")
    assert waiting.value.retryable
    del hub.secrets["/api/v1/namespaces/oam-system/secrets/spoke-a"]
    with pytest.raises(DeliveryRefused):
        clusters.target("spoke-a", profile, "team-a")
    assert observed == []


def test_standard_profile_events_wake_who_uses_it_on_health_provider_and_labels() -> None:
    from kubernetes.client import ApiClient, Configuration

    from oam_operator.controller.reconcile.seams import Memory
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.runtime import Runtime
    from oam_operator.reconciler.client import ClusterClient

    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    woken: list[str] = []
    runtime = Runtime(Settings(cluster_id="c", inventory_namespaces="fleet"), ClusterClient(ApiClient(configuration)),
                      None, waker=woken.append)
    assert runtime.standard is not None
    runtime.memory.update({"u-fleet": Memory(status={"clusterSummary": "1/1"}),
                           "u-uses": Memory(status={"profile": "spoke-a"}),
                           "u-other": Memory(status={"profile": "us"})})

    def event(body: dict[str, Any] | None, version: str) -> list[str]:
        woken.clear()
        if body is not None:
            body = {**body, "metadata": {**body["metadata"], "uid": "1", "resourceVersion": version}}
        runtime.standard._store(("fleet", "spoke-a"), body)  # type: ignore[union-attr]
        return sorted(woken)

    healthy = [{"type": "ControlPlaneHealthy", "status": "True"}]
    assert event(standard(providers=[provider()], conditions=healthy), "1") == ["u-fleet", "u-uses"]  # came
    assert runtime.profile("spoke-a") is not None and "spoke-a" in runtime.env.all_profiles()
    later = standard(providers=[provider()], conditions=healthy)
    later["status"]["version"] = {"kubernetes": "1.37"}
    assert event(later, "2") == []  # nothing it delivers by
    sick = standard(providers=[provider()], conditions=[{"type": "ControlPlaneHealthy", "status": "False"}])
    assert event(sick, "3") == ["u-uses"]  # health
    assert event(standard(providers=[provider()], labels={"env": "prod"},
                          conditions=[{"type": "ControlPlaneHealthy", "status": "False"}]), "4") == ["u-fleet"]
    assert event(None, "5") == ["u-fleet", "u-uses"]  # went
    assert runtime.profile("spoke-a") is None


def test_a_changed_token_secret_wakes_the_applications_of_its_profile() -> None:
    from kubernetes.client import ApiClient, Configuration

    from oam_operator.controller.reconcile.seams import Memory
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.runtime import Runtime
    from oam_operator.reconciler.client import ClusterClient

    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    woken: list[str] = []
    settings = Settings(cluster_id="c", inventory_namespaces="fleet", operator_namespace="oam-system")
    runtime = Runtime(settings, ClusterClient(ApiClient(configuration)), None, waker=woken.append)
    runtime.memory.update({"u-uses": Memory(status={"profile": "spoke-a"}),
                           "u-other": Memory(status={"profile": "us"})})
    body = standard(providers=[provider(cluster_name="spoke-a-token")])
    runtime.standard._store(("fleet", "spoke-a"), {**body, "metadata": {**body["metadata"], "uid": "1"}})  # type: ignore[union-attr]
    woken.clear()
    runtime._on_secret_change("oam-system", "spoke-a-token")
    assert woken == ["u-uses"]
    woken.clear()
    runtime._on_secret_change("oam-system", "spoke-a")  # the profile's name is not its Secret's here
    assert woken == []


def test_without_inventory_namespaces_nothing_is_watched() -> None:
    from kubernetes.client import ApiClient, Configuration

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.runtime import Runtime
    from oam_operator.reconciler.client import ClusterClient

    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    runtime = Runtime(Settings(cluster_id="c"), ClusterClient(ApiClient(configuration)), None)
    assert runtime.standard is None and runtime.targets.all() == {}


def test_a_namespace_that_cannot_be_read_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    from oam_operator.reconciler.errors import PermanentApiError

    class Missing:
        def request(self, verb: str, method: str, path: str, **_: Any) -> Any:
            store.stop()  # one try is enough here
            raise PermanentApiError("404 Not Found: the server could not find the requested resource", status=404,
                                    reason="NotFound", verb=verb)

    store = StandardProfiles(Missing(), ["fleet"])  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="oam_operator.controller"):
        store._run("fleet")
    assert [r.getMessage() for r in caplog.records] == [
        "cannot read clusterprofiles.multicluster.x-k8s.io in namespace fleet (404 Not Found: the server could not "
        "find the requested resource): retrying every 30s"]


def test_a_transient_failure_is_tried_again_soon_and_not_called_unreadable(caplog: pytest.LogCaptureFixture) -> None:
    from oam_operator.reconciler.errors import TransientApiError

    calls: list[str] = []

    class Initializing:
        def request(self, verb: str, method: str, path: str, **_: Any) -> Any:
            calls.append(path)
            store.stop()
            raise TransientApiError("429 Too Many Requests: storage is (re)initializing", status=429,
                                    reason="TooManyRequests", verb=verb)

    store = StandardProfiles(Initializing(), ["fleet"])  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="oam_operator.controller"):
        store._run("fleet")
    assert [r.getMessage() for r in caplog.records] == [
        "listing clusterprofiles.multicluster.x-k8s.io in namespace fleet failed (429 Too Many Requests: storage is "
        "(re)initializing): retrying in 5s"]
    assert len(calls) == 1
