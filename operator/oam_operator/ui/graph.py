"""The graph of ``app-dependency`` between Applications (docs/ui.md#the-dependency-graph), laid out
in layers: dependencies above their dependants, each cycle's members marked.

Edges come from each Application's ``spec.policies`` (what it asks for, whether or not the
operator has seen it yet); a named Application the user cannot see or that does not exist is a
node of state ``Missing``. The layers are the topological generations of the graph's condensation
(a cycle is one node there), so a cycle never stops the layout. networkx finds the components and
the layers (pure Python); the positions are computed here, not with ``multipartite_layout``,
which needs numpy, a library the package does not depend on (the figures are in the doc)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx

__all__ = ["dependency_edges", "dependency_graph", "layered_positions"]

APP_DEPENDENCY = "app-dependency"


def dependency_edges(app: Mapping[str, Any]) -> list[str]:
    """``namespace/name`` of every Application ``app`` depends on, in policy order."""
    metadata = app.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    found: list[str] = []
    for policy in (app.get("spec") or {}).get("policies") or []:
        if not isinstance(policy, Mapping) or policy.get("type") != APP_DEPENDENCY:
            continue
        for target in (policy.get("properties") or {}).get("applications") or []:
            if isinstance(target, Mapping) and isinstance(target.get("name"), str):
                key = f"{target.get('namespace') or namespace}/{target['name']}"
                if key not in found:
                    found.append(key)
    return found


def dependency_graph(apps: Iterable[Mapping[str, Any]], states: Mapping[str, str]) -> dict[str, Any]:
    """Nodes (with layer, position, state, cycle flag) and edges (dependant → dependency) of the
    Applications that take part in an ``app-dependency``; ``states`` maps ``ns/name`` to a state."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    for app in apps:
        metadata = app.get("metadata") or {}
        source = f"{metadata.get('namespace')}/{metadata.get('name')}"
        for target in dependency_edges(app):
            graph.add_edge(source, target)
    cyclic: set[str] = set()
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1 or any(graph.has_edge(node, node) for node in component):
            cyclic |= component
    condensed = nx.condensation(graph)
    layer_of: dict[str, int] = {}
    for layer, members in enumerate(nx.topological_generations(condensed.reverse(copy=False))):
        for member in members:
            for node in condensed.nodes[member]["members"]:
                layer_of[node] = layer
    positions = layered_positions(layer_of, {node: list(graph.successors(node)) for node in graph})
    nodes = [
        {"key": node, "state": states.get(node, "Missing"), "layer": layer_of[node], "cycle": node in cyclic,
         "x": positions[node][0], "y": positions[node][1]}
        for node in sorted(graph.nodes)
    ]
    edges = [
        {"from": source, "to": target, "cycle": source in cyclic and target in cyclic
         and _same_component(graph, source, target)}
        for source, target in sorted(graph.edges)
    ]
    return {"nodes": nodes, "edges": edges}


def layered_positions(layer_of: Mapping[str, int],
                      depends_on: Mapping[str, list[str]]) -> dict[str, tuple[float, float]]:
    """``(x, y)`` of each node: ``y`` is its layer (0 at the top), ``x`` its slot in the layer,
    centred on 0. Each layer after the first is ordered by the mean slot of the node's
    dependencies in the layers above (the barycentre rule), which keeps most arrows short and
    uncrossed; ties and nodes without such dependencies go by name."""
    layers: dict[int, list[str]] = {}
    for node, layer in layer_of.items():
        layers.setdefault(layer, []).append(node)
    slot: dict[str, float] = {}
    positions: dict[str, tuple[float, float]] = {}
    for layer in sorted(layers):
        def rank(node: str) -> tuple[float, str]:
            above = [slot[d] for d in depends_on.get(node, ()) if d in slot]
            return (sum(above) / len(above) if above else float("inf"), node)

        members = sorted(layers[layer], key=rank)
        middle = (len(members) - 1) / 2
        for index, node in enumerate(members):
            slot[node] = index - middle
            positions[node] = (index - middle, float(layer))
    return positions


def _same_component(graph: nx.DiGraph[str], source: str, target: str) -> bool:
    return source == target or nx.has_path(graph, target, source)
