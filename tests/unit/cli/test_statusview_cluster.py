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


def test_a_topologys_clusters_and_its_rollout_are_listed() -> None:
    clusters = [{"name": "eu-west", "application": "web-eu-west", "state": "Ready", "message": "Applied revision 1",
                 "fleetRevision": 1, "readyRevision": 1},
                {"name": "us", "application": "web-us", "state": "Error", "message": "Reconciliation timed out",
                 "fleetRevision": 2},
                {"name": "ap", "application": "web-ap", "state": "Pending", "message": "not created yet"}]
    view = build_view(app(clusters=clusters, clusterSummary="1/3",
                          rollout={"revision": 2, "groups": 3, "halted": "us", "message": "timed out"}))
    assert render_text(view).splitlines()[2:] == [
        "Clusters: 1/3 ready  Rollout: revision 2 in 3 groups, halted by us",
        "  eu-west  Ready    r1    Applied revision 1",
        "  us       Error    r2    Reconciliation timed out",
        "  ap       Pending  -     not created yet",
    ]
    document = to_json(view)
    assert document["clusters"] == clusters and document["rollout"]["halted"] == "us"
