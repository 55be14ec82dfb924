"""The app-dependency graph and its layered layout (docs/ui.md#the-dependency-graph)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from oam_operator.ui.graph import dependency_edges, dependency_graph, layered_positions


def app(name: str, *deps: str, namespace: str = "shop") -> dict[str, Any]:
    targets = [{"name": d.split("/")[-1], **({"namespace": d.split("/")[0]} if "/" in d else {})} for d in deps]
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"policies": [{"name": "p", "type": "app-dependency", "properties": {"applications": targets}},
                                  {"name": "q", "type": "reconciliation", "properties": {}}]}}


def test_edges_name_the_dependencys_namespace_defaulting_to_the_applications_own() -> None:
    assert dependency_edges(app("web", "db", "platform/ingress", "db")) == ["shop/db", "platform/ingress"]
    assert dependency_edges({"metadata": {}, "spec": {"policies": "odd"}}) == []


def test_dependencies_are_laid_out_above_their_dependants_and_missing_ones_are_named() -> None:
    graph = dependency_graph([app("web", "api", "db"), app("api", "db"), app("db")], {"shop/db": "Ready",
                                                                                      "shop/api": "Waiting"})
    nodes = {n["key"]: n for n in graph["nodes"]}
    assert {k: (n["layer"], n["state"], n["cycle"]) for k, n in nodes.items()} == {
        "shop/db": (0, "Ready", False), "shop/api": (1, "Waiting", False), "shop/web": (2, "Missing", False)}
    assert nodes["shop/db"]["y"] < nodes["shop/api"]["y"] < nodes["shop/web"]["y"]
    assert [(e["from"], e["to"]) for e in graph["edges"]] == [
        ("shop/api", "shop/db"), ("shop/web", "shop/api"), ("shop/web", "shop/db")]


def test_cycles_are_marked_on_their_members_and_edges_only() -> None:
    graph = dependency_graph([app("a", "b"), app("b", "a"), app("c", "a"), app("self", "self")], {})
    assert {n["key"]: n["cycle"] for n in graph["nodes"]} == {
        "shop/a": True, "shop/b": True, "shop/c": False, "shop/self": True}
    assert {(e["from"], e["to"]): e["cycle"] for e in graph["edges"]} == {
        ("shop/a", "shop/b"): True, ("shop/b", "shop/a"): True, ("shop/c", "shop/a"): False,
        ("shop/self", "shop/self"): True}


def test_applications_without_app_dependency_are_not_in_the_graph() -> None:
    assert dependency_graph([{"metadata": {"name": "x", "namespace": "y"}, "spec": {}}], {}) == {
        "nodes": [], "edges": []}


def test_the_layout_needs_no_numpy_which_is_not_a_runtime_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError, as when not installed
    graph = dependency_graph([app("web", "api", "db"), app("api", "db"), app("a", "b"), app("b", "a")], {})
    # The cycle a <-> b is one node of the condensation: both sit in the first layer, beside db.
    assert {n["key"]: (n["x"], n["y"]) for n in graph["nodes"]} == {
        "shop/a": (-1.0, 0.0), "shop/b": (0.0, 0.0), "shop/db": (1.0, 0.0),
        "shop/api": (0.0, 1.0), "shop/web": (0.0, 2.0)}


def test_each_layer_is_centred_and_ordered_by_where_its_dependencies_are() -> None:
    # Layer 0: a, b, c (by name); "z" depends on "a" (leftmost), "m" on "c" (rightmost), so z goes left
    # of m although it sorts after it; "n" has no dependency above and goes last.
    positions = layered_positions({"a": 0, "b": 0, "c": 0, "m": 1, "z": 1, "n": 1},
                                  {"m": ["c"], "z": ["a"], "n": []})
    assert positions == {"a": (-1.0, 0.0), "b": (0.0, 0.0), "c": (1.0, 0.0),
                         "z": (-1.0, 1.0), "m": (0.0, 1.0), "n": (1.0, 1.0)}
