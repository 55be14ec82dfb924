"""The linear level walk equals the spec's walk over materialised tier edges
(docs/transform.md#the-ordering-algorithm).

The implementation skips a finished tier's edges instead of following them one by one; this
checks, on random documents with and without cycles, that levels and the cycle message are
exactly those of a straightforward walk over every edge.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from oam_operator.oam import OrderingError, PolicyResult
from oam_operator.oam.engine.ordering import Entry, order
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import TIER_ORDER


def reference(entries: list[Entry], deps: dict[str, list[str]]) -> list[int] | str:
    index = {e.name: i for i, e in enumerate(entries)}
    edges: list[list[tuple[int, str]]] = []
    populated = [t for t in TIER_ORDER if any(e.tier == t for e in entries)]
    for e in entries:
        out: list[tuple[int, str]] = []
        seen: set[int] = set()
        for name in deps.get(e.name, []):
            if name in index and index[name] not in seen:
                seen.add(index[name])
                out.append((index[name], "dependency policy"))
        if e.tier in populated and populated.index(e.tier) > 0:
            prev = populated[populated.index(e.tier) - 1]
            for j, f in enumerate(entries):
                if f.tier == prev and j not in seen:
                    seen.add(j)
                    out.append((j, f"placement: tier {e.tier} is after tier {prev}"))
        edges.append(out)
    level: dict[int, int] = {}
    path: list[int] = []
    origins: list[str] = []

    def visit(i: int) -> int:
        path.append(i)
        best = -1
        for j, origin in edges[i]:
            if j in path:
                start = path.index(j)
                steps = [
                    f"{go_quote(entries[path[k]].name)} is after {go_quote(entries[path[k + 1]].name)} ({origins[k]})"
                    for k in range(start, len(path) - 1)
                ]
                steps.append(f"{go_quote(entries[i].name)} is after {go_quote(entries[j].name)} ({origin})")
                raise OrderingError("components cannot be ordered: " + ", ".join(steps))
            if j not in level:
                origins.append(origin)
                visit(j)
                origins.pop()
            best = max(best, level[j])
        path.pop()
        level[i] = best + 1
        return level[i]

    try:
        for i in range(len(entries)):
            if i not in level:
                visit(i)
    except OrderingError as exc:
        return str(exc)
    return [level[i] for i in range(len(entries))]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[Entry], dict[str, list[str]]]:
    n = draw(st.integers(min_value=1, max_value=10))
    tiers = draw(st.lists(st.sampled_from([None, *TIER_ORDER]), min_size=n, max_size=n))
    entries = [Entry(f"e{i}", tiers[i]) for i in range(n)]
    deps: dict[str, list[str]] = {}
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12)):
        if a != b and f"e{b}" not in deps.get(f"e{a}", []):
            deps.setdefault(f"e{a}", []).append(f"e{b}")
    return entries, deps


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_walk_matches_reference(graph: tuple[list[Entry], dict[str, list[str]]]) -> None:
    entries, deps = graph
    expected = reference(entries, deps)
    try:
        ordering = order("app", entries, [], PolicyResult(dependencies=deps))
    except OrderingError as exc:
        assert str(exc) == expected
        return
    assert isinstance(expected, list)
    levels = [0] * len(entries)
    for k, group in enumerate(ordering.groups):
        for i in group:
            levels[i] = k
    assert levels == expected
