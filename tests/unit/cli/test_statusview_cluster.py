"""``oam-operator status`` names the remote cluster an Application's objects are on
(cli/statusview.py, docs/multicluster.md#how-a-pass-delivers)."""

from __future__ import annotations

from typing import Any

from oam_operator.cli.statusview import build_view, render_text, to_json


def app(**status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "status": {"observedGeneration": 1, "state": "Ready", "revision": 1, "objects": 0, "readyObjects": 0,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                                   "message": "Applied revision 1: 0 objects ready"}], **status},
    }


def test_the_header_names_the_remote_cluster_and_its_profile() -> None:
    view = build_view(app(cluster="9f1c-uid", profile="eu-west"))
    assert render_text(view).splitlines() == [
        "Application shop/web  State: Ready  Ready: True  Revision: 1  Objects: 0/0 ready",
        "Cluster: 9f1c-uid (ClusterProfile eu-west)",
        "Message: Applied revision 1: 0 objects ready",
    ]
    assert to_json(view)["cluster"] == "9f1c-uid"


def test_no_cluster_line_for_the_operators_own_cluster() -> None:
    view = build_view(app(profile="default"))
    assert not any(line.startswith("Cluster:") for line in render_text(view, tree=True).splitlines())
    assert "cluster" not in to_json(view)
