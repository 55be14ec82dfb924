"""The ClusterProfile's own Ready condition (docs/multicluster.md#the-clusterprofiles-status): written
once per change however many passes report it, kept when the profile says it already, its
transition time kept while the status stays, and given up after a 403. The client is a fake
recording ``request()`` (the real write: tests/e2e/test_multicluster_e2e.py)."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.profilestatus import ProfileStatus, ready_condition
from oam_operator.reconciler.errors import PermanentApiError

PATH = "/apis/oam-operator.dev/v1alpha1/clusterprofiles/eu/status"
MISSING = ("False", "ClusterUnusable", "ClusterProfile eu: kubeconfig Secret oam-system/eu not found")
CONNECTED = ("True", "Connected", "connected to cluster https://eu:6443 (id 42)")


class FakeClient:
    def __init__(self, status: int = 0) -> None:
        self.patches: list[tuple[str, Any]] = []
        self.status = status

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        self.patches.append((path, body))
        if self.status:
            raise PermanentApiError(f"{self.status} Forbidden", status=self.status, reason="Forbidden", verb=verb)
        return {}


def profile_saying(observation: tuple[str, str, str]) -> dict[str, Any]:
    status, reason, message = observation
    return {"status": {"conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                                       "lastTransitionTime": "2026-12-02T19:00:00Z"}]}}


def test_one_write_per_change_however_many_passes_report_it() -> None:
    client = FakeClient()
    writer = ProfileStatus(client, lambda name: {})  # type: ignore[arg-type]
    for _ in range(5):
        writer.observe("eu", MISSING)
    assert [path for path, _ in client.patches] == [PATH]
    ((_, body),) = client.patches
    (written,) = body["status"]["conditions"]
    assert {k: written[k] for k in ("type", "status", "reason", "message")} == {
        "type": "Ready", "status": "False", "reason": "ClusterUnusable", "message": MISSING[2]}
    writer.observe("eu", CONNECTED)
    assert len(client.patches) == 2 and client.patches[1][1]["status"]["conditions"][0]["status"] == "True"


def test_nothing_is_written_when_the_profile_says_it_already() -> None:
    client = FakeClient()
    writer = ProfileStatus(client, lambda name: profile_saying(CONNECTED))  # type: ignore[arg-type]
    writer.observe("eu", CONNECTED)
    assert client.patches == []


def test_the_own_cluster_is_written_only_to_correct_a_stale_condition() -> None:
    own = ("True", "Connected", "delivers to the operator's own cluster")
    client = FakeClient()
    ProfileStatus(client, lambda name: {}).observe("eu", own, only_stale=True)  # type: ignore[arg-type]
    assert client.patches == []
    ProfileStatus(client, lambda name: profile_saying(MISSING)).observe("eu", own, only_stale=True)  # type: ignore[arg-type]
    assert [path for path, _ in client.patches] == [PATH]


def test_the_transition_time_is_kept_while_the_status_stays() -> None:
    previous = profile_saying(MISSING)["status"]["conditions"][0]
    other = ("False", "ClusterUnreachable", "cluster https://eu:6443 (ClusterProfile eu): connection error: refused")
    assert ready_condition(other, previous, "2026-12-02T20:00:00Z")["lastTransitionTime"] == "2026-12-02T19:00:00Z"
    assert ready_condition(CONNECTED, previous, "2026-12-02T20:00:00Z")["lastTransitionTime"] == "2026-12-02T20:00:00Z"
    assert ready_condition(CONNECTED, None, "2026-12-02T20:00:00Z")["lastTransitionTime"] == "2026-12-02T20:00:00Z"


def test_a_forbidden_write_is_not_tried_again() -> None:
    client = FakeClient(status=403)
    writer = ProfileStatus(client, lambda name: {})  # type: ignore[arg-type]
    writer.observe("eu", MISSING)
    writer.observe("eu", CONNECTED)
    assert len(client.patches) == 1


def test_a_failed_write_is_tried_again_by_the_next_pass() -> None:
    client = FakeClient(status=500)
    writer = ProfileStatus(client, lambda name: {})  # type: ignore[arg-type]
    writer.observe("eu", MISSING)
    writer.observe("eu", MISSING)
    assert len(client.patches) == 2
