"""The CLI resolves a ClusterProfile name as the operator does and reaches a standard profile's
cluster with the operator's words (docs/multicluster.md#the-standard-cluster-inventory,
docs/multicluster.md#diff-against-the-remote-cluster). The hub is a fake answering ``request()``
by path (the real comparison: tests/e2e/test_inventory_cli_e2e.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from oam_operator.cli import remotediff
from oam_operator.cli.profiles import INVENTORY_NAMESPACES_ENV, ProfileReader, inventory_namespaces
from oam_operator.cli.remotediff import OPERATOR_NAMESPACE_ENV, RemoteCluster, RemoteRefused, remote_cluster
from oam_operator.reconciler.errors import PermanentApiError

OWN = "/apis/oam-operator.dev/v1alpha1/clusterprofiles"


def std(namespace: str, name: str, labels: dict[str, str] | None = None, typed: bool = True,
        health: str | None = None, providers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace, "labels": labels or {}}}
    if typed:
        profile.update(apiVersion="multicluster.x-k8s.io/v1alpha1", kind="ClusterProfile")
    status: dict[str, Any] = {"accessProviders": providers if providers is not None else [
        {"name": "secretreader", "cluster": {"server": "https://spoke:6443"}}]}
    if health is not None:
        status["conditions"] = [{"type": "ControlPlaneHealthy", "status": health, "message": "api down"}]
    profile["status"] = status
    return profile


def path(namespace: str, name: str = "") -> str:
    base = f"/apis/multicluster.x-k8s.io/v1alpha1/namespaces/{namespace}/clusterprofiles"
    return f"{base}/{name}" if name else base


class FakeHub:
    """Answers a GET of a known path, else 404 (or the status given for a path)."""

    def __init__(self, objects: dict[str, Any], statuses: dict[str, int] | None = None) -> None:
        self.objects, self.statuses = objects, statuses or {}
        self.paths: list[str] = []

    def request(self, verb: str, method: str, path: str, **_: Any) -> Any:
        self.paths.append(path)
        status = self.statuses.get(path) or (0 if path in self.objects else 404)
        if status:
            raise PermanentApiError(f"{status} refused", status=status, reason="Refused", verb=verb)
        return self.objects[path]


def test_the_inventory_namespaces_come_from_the_option_else_the_operators_variable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert INVENTORY_NAMESPACES_ENV == "OAM_OPERATOR_INVENTORY_NAMESPACES"
    monkeypatch.setenv(INVENTORY_NAMESPACES_ENV, "fleet-a, fleet-b,fleet-a")
    assert inventory_namespaces() == ("fleet-a", "fleet-b")
    assert inventory_namespaces("x,,y") == ("x", "y")
    monkeypatch.delenv(INVENTORY_NAMESPACES_ENV)
    assert inventory_namespaces() == ()


def test_the_own_kind_wins_a_name_else_the_first_inventory_namespace_holding_it() -> None:
    own = {"metadata": {"name": "eu"}, "spec": {}}
    hub = FakeHub({f"{OWN}/eu": own, path("b", "eu"): std("b", "eu"), path("b", "us"): std("b", "us", typed=False),
                   path("a", "us"): std("a", "us")})
    reader = ProfileReader(hub, ["a", "b"])  # type: ignore[arg-type]
    assert reader.get("eu") == own
    found = reader.get("us")
    assert found is not None and found["metadata"]["namespace"] == "a"
    assert reader.get("none") is None
    assert hub.paths[-3:] == [f"{OWN}/none", path("a", "none"), path("b", "none")]


def test_a_profile_read_the_user_may_not_do_is_an_error_not_none() -> None:
    hub = FakeHub({}, {path("a", "us"): 403})
    with pytest.raises(PermanentApiError):
        ProfileReader(hub, ["a"]).get("us")  # type: ignore[arg-type]


def test_all_is_one_list_per_kind_and_namespace_merged_by_the_operators_rule() -> None:
    hub = FakeHub({
        OWN: {"items": [{"metadata": {"name": "eu"}, "spec": {}}]},
        path("a"): {"items": [std("a", "eu", typed=False), std("a", "us", {"env": "prod"}, typed=False)]},
        # path("b") absent: no CRD there, or none yet (404) is no profile
    })
    profiles = ProfileReader(hub, ["a", "b"]).all()  # type: ignore[arg-type]
    assert sorted(profiles) == ["eu", "us"]
    assert "apiVersion" not in profiles["eu"]  # the own kind's
    assert profiles["us"]["apiVersion"] == "multicluster.x-k8s.io/v1alpha1"
    assert hub.paths == [OWN, path("a"), path("b")]


SECRET = "/api/v1/namespaces/oam-system/secrets/us"
WHERE = "ClusterProfile fleet/us (multicluster.x-k8s.io)"


@pytest.fixture
def operator_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OPERATOR_NAMESPACE_ENV, "oam-system")


@pytest.mark.usefixtures("operator_namespace")
@pytest.mark.parametrize(("objects", "statuses", "message"), [
    ({}, {SECRET: 403}, f"{WHERE} delivers to the cluster with the token in the Secret oam-system/us, which you may "
                        "not read: the diff needs get on it"),
    ({}, {}, f'{WHERE}: token Secret oam-system/us of access provider "secretreader" not found'),
    ({SECRET: {"data": {"other": "eA=="}}}, {}, f'{WHERE}: Secret oam-system/us has no key "token" (its keys: other)'),
])
def test_the_token_secret_refusals(objects: dict[str, Any], statuses: dict[str, int], message: str) -> None:
    hub = FakeHub(objects, statuses)
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(hub, "us", std("fleet", "us"))  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert hub.paths == [SECRET]


@pytest.mark.usefixtures("operator_namespace")
def test_no_access_provider_is_the_operators_refusal() -> None:
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(FakeHub({}), "us", std("fleet", "us", providers=[]))  # type: ignore[arg-type]
    assert str(caught.value) == (f'{WHERE}: no access provider "secretreader" in status.accessProviders or '
                                 "status.credentialProviders (it has: none)")


def test_without_the_operators_namespace_the_token_secret_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OPERATOR_NAMESPACE_ENV, raising=False)
    hub = FakeHub({})
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(hub, "us", std("fleet", "us"))  # type: ignore[arg-type]
    assert str(caught.value) == (f"{WHERE}: its token Secret us is in the operator's namespace: name it with "
                                 "--operator-namespace (OAM_OPERATOR_OPERATOR_NAMESPACE)")
    assert hub.paths == []


@pytest.mark.usefixtures("operator_namespace")
def test_an_unhealthy_control_plane_is_compared_with_and_warned_of(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def connected(document: dict[str, Any], server: str, profile: str) -> RemoteCluster:
        seen.update(document=document)
        return RemoteCluster(None, server, "uid", profile)  # type: ignore[arg-type]

    monkeypatch.setattr(remotediff, "_connected", connected)
    token = {"data": {"token": base64.b64encode(b"abc").decode()}}
    remote = remote_cluster(FakeHub({SECRET: token}), "us", std("fleet", "us", health="False"))  # type: ignore[arg-type]
    assert remote is not None
    assert remote.label == "cluster https://spoke:6443 (ClusterProfile fleet/us (multicluster.x-k8s.io))"
    assert remote.warning == (f"{WHERE}: ControlPlaneHealthy is False: api down; the operator connects once it is "
                              "True")
    assert seen["document"]["users"] == [{"name": "us", "user": {"token": "abc"}}]
