"""``oam-operator diff`` of a fleet Application: one section per selected cluster headed by an
exact line, the hub's cluster Applications created or pruned, and the exit codes
(cli/fleetdiff.py, docs/multicluster.md#the-clusters-in-status-and-diff)."""

from __future__ import annotations

from oam_operator.cli.fleetdiff import ClusterSection, FleetDiff, fleet_exit_code, plan_hub, render_fleet
from oam_operator.operatorpolicies.topology import Topology

COMPARED = "cluster https://127.0.0.1:7001 (ClusterProfile eu)"


def test_each_cluster_has_its_section_then_the_hub_lines() -> None:
    found = FleetDiff("fleet", [
        ClusterSection("eu", "shop/web-eu", COMPARED, "no changes\n"),
        ClusterSection("us", "shop/web-us", "cluster https://127.0.0.1:7002 (ClusterProfile us)",
                       "Wave web:\n  create ConfigMap shop/settings\n"),
    ], creates=["shop/web-us"], prunes=[("shop/web-old", "old", "delete")])
    assert render_fleet(found).splitlines() == [
        "Cluster eu (Application shop/web-eu):",
        f"  Compared with {COMPARED}",
        "  no changes",
        "Cluster us (Application shop/web-us):",
        "  Compared with cluster https://127.0.0.1:7002 (ClusterProfile us)",
        "  Wave web:",
        "    create ConfigMap shop/settings",
        "Cluster Applications on the hub:",
        "  create Application shop/web-us",
        "  prune Application shop/web-old (ClusterProfile old is no longer selected; onRemoval: delete)",
    ]
    assert fleet_exit_code(found) == 1


def test_no_change_anywhere_is_exit_0() -> None:
    found = FleetDiff("fleet", [ClusterSection("eu", "shop/web-eu", COMPARED, "no changes\n")])
    assert fleet_exit_code(found) == 0


def test_a_cluster_that_cannot_be_compared_is_its_sections_error_and_exit_2() -> None:
    found = FleetDiff("fleet", [
        ClusterSection("eu", "shop/web-eu", error="ClusterProfile eu: kubeconfig Secret ns/eu not found"),
        ClusterSection("us", "shop/web-us", COMPARED, "no changes\n")])
    assert render_fleet(found).splitlines()[:2] == [
        "Cluster eu (Application shop/web-eu):", "  Error: ClusterProfile eu: kubeconfig Secret ns/eu not found"]
    assert fleet_exit_code(found) == 2


def test_no_cluster_selected_says_so_in_the_operators_words() -> None:
    assert render_fleet(FleetDiff("fleet")) == 'No ClusterProfile is selected by the topology policy "fleet"\n'
    assert fleet_exit_code(FleetDiff("fleet")) == 0


def test_the_hub_gains_the_newly_selected_and_loses_the_unselected() -> None:
    live = [{"metadata": {"name": "web-eu", "annotations": {"oam-operator.dev/fleet-cluster": "eu"}}},
            {"metadata": {"name": "web-old", "annotations": {"oam-operator.dev/fleet-cluster": "old"}}}]
    creates, prunes = plan_hub({"metadata": {"name": "web"}}, "shop", ["eu", "us"], live,
                               Topology("fleet", on_removal="orphan"), "oam-operator.dev")
    assert creates == ["shop/web-us"]
    assert prunes == [("shop/web-old", "old", "orphan")]


def test_with_no_profile_selected_the_hub_loses_nothing() -> None:
    live = [{"metadata": {"name": "web-eu", "annotations": {"oam-operator.dev/fleet-cluster": "eu"}}}]
    assert plan_hub({"metadata": {"name": "web"}}, "shop", [], live, Topology("fleet"), "oam-operator.dev") == ([], [])


def test_a_cluster_application_whose_spec_changes_is_a_hub_change_with_its_hunks() -> None:
    hunks = "--- live/Application/web-eu\n+++ desired/Application/web-eu\n@@ -1 +1 @@\n-  a: 1\n+  a: 2\n"
    found = FleetDiff("fleet", [ClusterSection("eu", "shop/web-eu", COMPARED, "no changes\n")],
                      changes=[("shop/web-eu", hunks)])
    assert render_fleet(found).splitlines()[3:] == [
        "Cluster Applications on the hub:",
        "  change Application shop/web-eu",
        "    --- live/Application/web-eu",
        "    +++ desired/Application/web-eu",
        "    @@ -1 +1 @@",
        "    -  a: 1",
        "    +  a: 2",
    ]
    assert fleet_exit_code(found) == 1
