"""Which cluster ``oam-operator diff`` compares with (docs/multicluster.md#diff-against-the-remote-cluster):
none for a profile without kubeConfig, and the exact messages when the user may not read the
Secret, the Secret is missing or its kubeconfig cannot be used. The hub is a fake answering
``request()`` (the real comparison: tests/e2e/test_multicluster_e2e.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from oam_operator.cli.remotediff import OPERATOR_NAMESPACE_ENV, RemoteRefused, remote_cluster
from oam_operator.reconciler.errors import PermanentApiError

PROFILE = {"spec": {"kubeConfig": {"secretRef": {"name": "eu"}}}}


class FakeHub:
    def __init__(self, status: int = 0, secret: dict[str, Any] | None = None) -> None:
        self.status, self.secret = status, secret
        self.paths: list[str] = []

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.paths.append(path)
        if self.status:
            raise PermanentApiError(f"{self.status} refused", status=self.status, reason="Refused", verb=verb)
        assert self.secret is not None
        return self.secret


@pytest.fixture(autouse=True)
def operator_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OPERATOR_NAMESPACE_ENV, "oam-system")


def test_a_profile_without_kubeconfig_is_the_operators_own_cluster() -> None:
    hub = FakeHub()
    assert remote_cluster(hub, "plain", {"spec": {}}) is None  # type: ignore[arg-type]
    assert remote_cluster(hub, "plain", None) is None  # type: ignore[arg-type]
    assert hub.paths == []


@pytest.mark.parametrize(("status", "message"), [
    (403, "ClusterProfile eu delivers to the cluster in the Secret oam-system/eu, which you may not read: the diff "
          "needs get on it"),
    (404, "ClusterProfile eu: kubeconfig Secret oam-system/eu not found"),
])
def test_a_secret_the_user_cannot_read(status: int, message: str) -> None:
    hub = FakeHub(status)
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(hub, "eu", PROFILE)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert hub.paths == ["/api/v1/namespaces/oam-system/secrets/eu"]


def test_a_kubeconfig_the_operator_would_refuse_is_refused_with_its_words() -> None:
    secret = {"data": {"value": base64.b64encode(b"clusters: []\n").decode()}}
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(FakeHub(secret=secret), "eu", PROFILE)  # type: ignore[arg-type]
    assert str(caught.value) == 'ClusterProfile eu: Secret oam-system/eu key "value": the kubeconfig names no current-context'


def test_without_the_operators_namespace_the_secret_cannot_be_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OPERATOR_NAMESPACE_ENV)
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(FakeHub(), "eu", PROFILE)  # type: ignore[arg-type]
    assert str(caught.value) == ("ClusterProfile eu: its kubeconfig Secret eu is in the operator's namespace: name it "
                                 "with --operator-namespace (OAM_OPERATOR_OPERATOR_NAMESPACE)")


def test_the_operators_namespace_given_by_the_caller_wins_over_the_environment() -> None:
    hub = FakeHub(404)
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(hub, "eu", PROFILE, "platform")  # type: ignore[arg-type]
    assert str(caught.value) == "ClusterProfile eu: kubeconfig Secret platform/eu not found"
    assert hub.paths == ["/api/v1/namespaces/platform/secrets/eu"]


def test_an_empty_operators_namespace_from_the_caller_is_refused() -> None:
    with pytest.raises(RemoteRefused) as caught:
        remote_cluster(FakeHub(), "eu", PROFILE, "")  # type: ignore[arg-type]
    assert str(caught.value).endswith("is in the operator's namespace: name it with --operator-namespace "
                                      "(OAM_OPERATOR_OPERATOR_NAMESPACE)")
