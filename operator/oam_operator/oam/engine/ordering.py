"""Ordering components into groups (docs/transform.md#ordering-declarations, docs/transform.md#the-ordering-algorithm).

Three declarations order components: a tier, a dependency rule and a lowering rule's own order.
They are edges of one graph; each component's level is one more than the highest level of the
components it follows, and group ``k`` holds the components of level ``k``.

Tier edges are conceptually "every entry of a tier follows every entry of the previous
populated tier", which is quadratic. The walk below has exactly the semantics of a depth-first
walk over those edges (so the cycle it reports is the one the spec's walk reports) but skips a
tier's edges in O(1) once every entry of the previous tier is finished, because following an
edge to a finished entry only contributes its level. That keeps the ordering linear in the
number of components and explicit edges.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from oam_operator.common.dns1123 import DNS1123_SUBDOMAIN_MAX
from oam_operator.oam.document.names import shorten_with_suffix
from oam_operator.oam.engine.sources import GeneratedSource
from oam_operator.oam.errors import OrderingError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import TIER_ORDER, PolicyResult

ORIGIN_DEPENDENCY = "dependency policy"
ORIGIN_RULE = "lowering rule"
_SOURCE_REFUSAL = "a source a lowering rule generates is applied with the application bundle itself, before every group"


@dataclass
class Entry:
    """One component of the lowered document, in document order (docs/transform.md#entries)."""

    name: str
    tier: str | None = None
    rule_order: list[str] = field(default_factory=list)


@dataclass
class Ordering:
    groups: list[list[int]]  # entry indices per group, in document order
    names: list[str]  # group bundle names
    ordered: bool


def check_rule_orders(entries: list[Entry], source_names: set[str]) -> None:
    """Step 1: a lowering rule may only order a component after another of the document
    (docs/transform.md#rule-order)."""
    names = {entry.name for entry in entries}
    for entry in entries:
        for target in entry.rule_order:
            if target not in names and target not in source_names:
                raise OrderingError(
                    f"component {go_quote(entry.name)} is ordered after {go_quote(target)} by its lowering rule, "
                    f"but the document has no component {go_quote(target)}"
                )
            if target == entry.name:
                raise OrderingError(f"component {go_quote(entry.name)} is ordered after itself by its lowering rule")


def check_sources(sources: list[GeneratedSource], result: PolicyResult) -> None:
    """Step 2: shared generated sources can be neither placed nor given dependencies
    (docs/transform.md#generated-sources)."""
    for source in sources:
        if not source.shared:
            continue
        label = f"{source.type_label} {go_quote(source.name)}"
        tier = result.tier_overrides.get(source.name)
        if tier is not None:
            raise OrderingError(f"{label} cannot be placed in tier {tier}: {_SOURCE_REFUSAL}")
        deps = result.dependencies.get(source.name)
        if deps:
            raise OrderingError(f"{label} cannot wait on {', '.join(deps)}: {_SOURCE_REFUSAL}")


def _explicit_edges(entries: list[Entry], deps: dict[str, list[str]]) -> list[list[tuple[int, str]]]:
    """Step 3.1–3.2: dependency then rule-order edges; a second edge to a target is not added."""
    index = {entry.name: i for i, entry in enumerate(entries)}
    edges: list[list[tuple[int, str]]] = []
    for entry in entries:
        out: list[tuple[int, str]] = []
        seen: set[int] = set()
        for names, origin in ((deps.get(entry.name, ()), ORIGIN_DEPENDENCY), (entry.rule_order, ORIGIN_RULE)):
            for name in names:
                j = index.get(name)
                if j is not None and j not in seen:
                    seen.add(j)
                    out.append((j, origin))
        edges.append(out)
    return edges


class _Walk:
    """Step 4: the depth-first level walk, iterative, with the finished-tier shortcut."""

    def __init__(self, entries: list[Entry], explicit: list[list[tuple[int, str]]]) -> None:
        self.entries = entries
        self.explicit = explicit
        self.members: dict[str, list[int]] = {tier: [] for tier in TIER_ORDER}
        for i, entry in enumerate(entries):
            if entry.tier is not None:
                self.members[entry.tier].append(i)
        populated = [tier for tier in TIER_ORDER if self.members[tier]]
        self.previous = {populated[k]: populated[k - 1] for k in range(1, len(populated))}
        self.done_in_tier = dict.fromkeys(TIER_ORDER, 0)
        self.max_level_in_tier = dict.fromkeys(TIER_ORDER, -1)
        self.state = bytearray(len(entries))  # 0 new, 1 on the walk, 2 done
        self.level = [0] * len(entries)

    def edges(self, i: int) -> Iterator[tuple[int, str, int]]:
        """``(target, origin, level)``; target -1 stands for a whole finished tier of that level."""
        for j, origin in self.explicit[i]:
            yield j, origin, 0
        tier = self.entries[i].tier
        prev = self.previous.get(tier) if tier is not None else None
        if prev is None:
            return
        if self.done_in_tier[prev] == len(self.members[prev]):
            yield -1, "", self.max_level_in_tier[prev]
            return
        origin = f"placement: tier {tier} is after tier {prev}"
        for j in self.members[prev]:
            yield j, origin, 0

    def run(self) -> list[int]:
        for root in range(len(self.entries)):
            if self.state[root] == 0:
                self._visit(root)
        return self.level

    def _finish(self, node: int, best: int) -> int:
        level = best + 1
        self.level[node] = level
        self.state[node] = 2
        tier = self.entries[node].tier
        if tier is not None:
            self.done_in_tier[tier] += 1
            if level > self.max_level_in_tier[tier]:
                self.max_level_in_tier[tier] = level
        return level

    def _visit(self, root: int) -> None:
        nodes = [root]
        iters = [self.edges(root)]
        origins = [""]
        best = [-1]
        self.state[root] = 1
        while nodes:
            item = next(iters[-1], None)
            if item is None:
                node = nodes.pop()
                iters.pop()
                origins.pop()
                level = self._finish(node, best.pop())
                if best and level > best[-1]:
                    best[-1] = level
                continue
            j, origin, tier_level = item
            if j < 0:
                if tier_level > best[-1]:
                    best[-1] = tier_level
                continue
            state = self.state[j]
            if state == 2:
                if self.level[j] > best[-1]:
                    best[-1] = self.level[j]
                continue
            if state == 1:
                raise self._cycle(nodes, origins, j, origin)
            origins[-1] = origin
            self.state[j] = 1
            nodes.append(j)
            iters.append(self.edges(j))
            origins.append("")
            best.append(-1)

    def _cycle(self, nodes: list[int], origins: list[str], target: int, origin: str) -> OrderingError:
        start = nodes.index(target)
        names = [self.entries[k].name for k in nodes[start:]]
        steps = [
            f"{go_quote(names[k])} is after {go_quote(names[k + 1])} ({origins[start + k]})"
            for k in range(len(names) - 1)
        ]
        steps.append(f"{go_quote(names[-1])} is after {go_quote(self.entries[target].name)} ({origin})")
        return OrderingError("components cannot be ordered: " + ", ".join(steps))


def group_names(app_name: str, entries: list[Entry], groups: list[list[int]]) -> list[str]:
    """Step 6: a group that is exactly one whole tier is named after it, else ``NN``."""
    tier_sizes = dict.fromkeys(TIER_ORDER, 0)
    for entry in entries:
        if entry.tier is not None:
            tier_sizes[entry.tier] += 1
    names: list[str] = []
    for k, group in enumerate(groups):
        tier = entries[group[0]].tier
        whole_tier = tier is not None and tier_sizes[tier] == len(group) and all(entries[i].tier == tier for i in group)
        suffix = tier if whole_tier and tier is not None else f"{k:02d}"
        names.append(shorten_with_suffix(app_name, "-" + suffix, DNS1123_SUBDOMAIN_MAX))
    return names


def order(app_name: str, entries: list[Entry], sources: list[GeneratedSource], result: PolicyResult) -> Ordering:
    """Steps 1–7 of docs/transform.md#the-ordering-algorithm."""
    check_rule_orders(entries, {source.name for source in sources if source.shared})
    check_sources(sources, result)
    levels = _Walk(entries, _explicit_edges(entries, result.dependencies)).run()
    groups: list[list[int]] = [[] for _ in range(max(levels, default=-1) + 1)]
    for i, level in enumerate(levels):
        groups[level].append(i)
    names = group_names(app_name, entries, groups)
    return Ordering(groups, names, ordered=bool(sources) or len(groups) > 1)
