"""``status NAME --tree`` of a fleet Application lists each cluster with its cluster
Application's bundles and items under it (cli/fleetstatus.py,
docs/multicluster.md#the-clusters-in-status-and-diff)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from oam_operator.cli import plainkube
from oam_operator.cli.apifailure import ApiFailure
from oam_operator.cli.fleetstatus import NOT_CREATED, cluster_tree_lines, fleet_selector
from oam_operator.cli.statusview import build_view

CLUSTERS = [{"name": "eu-west", "application": "web-eu-west", "state": "Ready", "message": "Applied revision 1",
             "fleetRevision": 1},
            {"name": "us", "application": "web-us", "state": "Pending", "message": "not created yet"}]


def application(name: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "shop", "generation": 1, "uid": f"uid-{name}"},
            "status": {"observedGeneration": 1, "state": "Ready", "objects": 1, "readyObjects": 1, **status}}


def child() -> dict[str, Any]:
    return application("web-eu-west", bundles=[
        {"name": "web", "objects": 1, "ready": 1, "state": "Ready", "waves": {"first": 0, "last": 0}}],
        inventory=[{"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "settings",
                    "phase": "Current", "status": "Ready", "applyOrder": 0, "digest": "d"}])


def test_each_cluster_is_headed_by_its_name_and_application_with_its_items_under_it() -> None:
    view = build_view(application("web", clusters=CLUSTERS))
    lines = cluster_tree_lines(view, [child()], "oam-operator.dev")
    assert lines == [
        "",
        "Cluster eu-west (Application web-eu-west)  State: Ready  Objects: 1/1 ready",
        "  web       Ready     1/1",
        "  └── ConfigMap settings                    Current    Ready",
        "",
        "Cluster us (Application web-us)",
        NOT_CREATED,
    ]
    assert NOT_CREATED == "  (its Application is not created yet)"


def test_a_cluster_application_without_bundles_says_so() -> None:
    view = build_view(application("web", clusters=CLUSTERS[:1]))
    lines = cluster_tree_lines(view, [application("web-eu-west")], "oam-operator.dev")
    assert lines[-1] == "  (no bundles yet)"


def test_the_cluster_applications_are_listed_by_the_fleet_label() -> None:
    assert fleet_selector(application("web"), "example.org") == "example.org/fleet=uid-web"
    assert fleet_selector({"metadata": {"name": "web"}}, "example.org") is None


def test_the_list_call_asks_by_label_and_names_the_fleet_application_when_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def answer(_conn: Any, path: str) -> tuple[int, str, str]:
        asked.append(path)
        if "refused" in path:
            return 403, "Forbidden", json.dumps({"message": 'applications is forbidden: User "u" cannot list'})
        return 200, "OK", json.dumps({"items": [application("web-eu")]})

    monkeypatch.setattr(plainkube, "_request", answer)
    found = plainkube.list_applications(None, "shop", "oam-operator.dev/fleet=uid-web", "web")  # type: ignore[arg-type]
    assert [a["metadata"]["name"] for a in found] == ["web-eu"]
    assert asked == ["/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications"
                     "?labelSelector=oam-operator.dev%2Ffleet%3Duid-web"]
    with pytest.raises(ApiFailure) as refused:
        plainkube.list_applications(None, "refused", "x=y", "web")  # type: ignore[arg-type]
    assert refused.value.message == ('listing the cluster Applications of application "web" in namespace "refused": '
                                     '403 Forbidden: applications is forbidden: User "u" cannot list')
