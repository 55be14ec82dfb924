"""Ordering and the bundle tree (docs/transform.md#ordering-components-into-groups)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oamkit import cm, dep, document, place, run, summary, tiered

from oam_operator.oam import OrderingError, TransformContext, TransformError
from oam_operator.oam.document.names import digest


def shop(policies: list[dict[str, Any]] | None = None) -> Any:
    return run(document([cm("web"), cm("db"), cm("jobs")], policies, name="shop", namespace="shop"))


def test_shop_example() -> None:
    result = shop([dep("order", ("web", ["jobs"]))])
    node = result.cluster.node
    assert node.name == "shop"
    assert summary(node.bundle) == [
        ("shop", [], []),
        ("shop-00", [], ["db", "jobs"]),
        ("shop-01", ["shop-00"], ["web"]),
    ]
    assert result.policy_result.dependencies == {"web": ["jobs"]}
    assert [o["metadata"]["name"] for o in result.objects()] == ["db", "jobs", "web"]


def test_no_policy_is_one_flat_bundle() -> None:
    node = shop().cluster.node
    assert node.name == ""
    assert summary(node.bundle) == [("shop", [], ["web", "db", "jobs"])]


def test_chain() -> None:
    text = document([cm("web"), cm("api"), cm("db")], [dep("deploy-order", ("web", ["api"]), ("api", ["db"]))])
    assert summary(run(text).cluster.node.bundle) == [
        ("app", [], []),
        ("app-00", [], ["db"]),
        ("app-01", ["app-00"], ["api"]),
        ("app-02", ["app-01"], ["web"]),
    ]


def test_one_placement_alone_orders_nothing() -> None:
    text = document([cm("web"), cm("redis-cache"), cm("api")], [place("cache-in-infra", "redis-cache", "infra")])
    result = run(text)
    assert result.cluster.node.name == ""
    assert summary(result.cluster.node.bundle) == [("app", [], ["web", "redis-cache", "api"])]
    assert result.policy_result.tier_overrides == {"redis-cache": "infra"}


def test_two_tiers_are_named_after_the_tiers() -> None:
    text = document([cm("db"), cm("web")], [place("p1", "db", "infra"), place("p2", "web", "apps")])
    assert summary(run(text).cluster.node.bundle) == [
        ("app", [], []),
        ("app-infra", [], ["db"]),
        ("app-apps", ["app-infra"], ["web"]),
    ]
    text = document([cm("db"), cm("web"), cm("x")], [place("p1", "db", "infra"), place("p2", "web", "apps")])
    assert summary(run(text).cluster.node.bundle) == [
        ("app", [], []),
        ("app-00", [], ["db", "x"]),
        ("app-apps", ["app-00"], ["web"]),
    ]


def test_three_tiers_by_annotation_and_the_middle_one_skipped() -> None:
    text = document([tiered("a", "apps"), tiered("s", "services"), tiered("i", "infra"), tiered("i2", "infra")])
    assert summary(run(text).cluster.node.bundle) == [
        ("app", [], []),
        ("app-infra", [], ["i", "i2"]),
        ("app-services", ["app-infra"], ["s"]),
        ("app-apps", ["app-services"], ["a"]),
    ]
    text = document([tiered("a", "apps"), tiered("i", "infra")])
    assert [b[0] for b in summary(run(text).cluster.node.bundle)] == ["app", "app-infra", "app-apps"]


def test_dependency_against_the_tier_order_names_both_declarations() -> None:
    text = document(
        [cm("web"), cm("db")], [place("p1", "db", "infra"), place("p2", "web", "apps"), dep("d", ("db", ["web"]))]
    )
    with pytest.raises(OrderingError) as info:
        run(text)
    assert str(info.value) == (
        'components cannot be ordered: "web" is after "db" (placement: tier apps is after tier infra), '
        '"db" is after "web" (dependency policy)'
    )


def test_cycle_through_a_middle_tier_starts_at_the_entry_met_again() -> None:
    text = document(
        [cm("x"), tiered("a", "apps"), tiered("s", "services"), tiered("i", "infra")],
        [dep("d", ("x", ["a"]), ("i", ["a"]))],
    )
    with pytest.raises(OrderingError) as info:
        run(text)
    assert str(info.value) == (
        'components cannot be ordered: "a" is after "s" (placement: tier apps is after tier services), '
        '"s" is after "i" (placement: tier services is after tier infra), "i" is after "a" (dependency policy)'
    )


def test_a_dependency_along_the_tier_order_keeps_its_dependency_origin() -> None:
    text = document([tiered("db", "infra"), tiered("web", "apps")], [dep("d", ("web", ["db"]))])
    assert [b[0] for b in summary(run(text).cluster.node.bundle)] == ["app", "app-infra", "app-apps"]


def test_placement_overrides_the_annotation_and_other_domains_are_ignored() -> None:
    text = document([tiered("db", "apps"), tiered("web", "apps")], [place("p", "db", "infra")])
    assert [b[0] for b in summary(run(text).cluster.node.bundle)] == ["app", "app-infra", "app-apps"]
    foreign = document([tiered("db", "infra", "launcher.gokure.dev"), tiered("web", "apps", "launcher.gokure.dev")])
    assert run(foreign).cluster.node.name == ""
    assert run(foreign, ctx=TransformContext(domain="launcher.gokure.dev")).cluster.node.name == "app"


def test_invalid_tier_annotation() -> None:
    with pytest.raises(TransformError) as info:
        run(document([cm("a"), tiered("web", "edge")]))
    assert str(info.value) == (
        'component "web": annotation oam-operator.dev/tier: unknown tier "edge" (valid: infra, services, apps)'
    )


def test_invalid_domain() -> None:
    with pytest.raises(TransformError) as info:
        run(document([cm("a")]), ctx=TransformContext(domain="Bad_Domain"))
    assert str(info.value).startswith('invalid domain "Bad_Domain": a lowercase RFC 1123 subdomain must consist')


def test_long_group_names_are_shortened_keeping_the_suffix() -> None:
    name = "a" * 252
    text = document([cm("x"), cm("y")], [dep("d", ("y", ["x"]))], name=name)
    names = [b[0] for b in summary(run(text).cluster.node.bundle)]
    expected = "a" * (250 - 11) + "-" + digest(name)[:10]
    assert names == [name, expected + "-00", expected + "-01"]
    assert all(len(n) <= 253 for n in names)


def test_traits_free_tree_keeps_document_order_inside_a_group() -> None:
    comps = [cm(n) for n in ("e", "d", "c", "b", "a")]
    text = document(comps, [dep("d1", ("a", ["e"]), ("c", ["d"]))])
    assert summary(run(text).cluster.node.bundle)[1:] == [
        ("app-00", [], ["e", "d", "b"]),
        ("app-01", ["app-00"], ["c", "a"]),
    ]


@st.composite
def acyclic_documents(
    draw: st.DrawFn,
) -> tuple[list[str], list[tuple[str, list[str]]], list[list[tuple[str, list[str]]]]]:
    n = draw(st.integers(min_value=1, max_value=14))
    names = [f"c{i}" for i in range(n)]
    rank = draw(st.permutations(range(n)))  # a hidden topological order
    edges: list[tuple[int, int]] = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
    deps: dict[str, list[str]] = {}
    for a, b in edges:
        if rank[a] > rank[b] and names[b] not in deps.get(names[a], []):
            deps.setdefault(names[a], []).append(names[b])
    rules = list(deps.items())
    split = draw(st.integers(min_value=1, max_value=3))
    policies = [rules[k::split] for k in range(split)]
    return names, rules, [p for p in policies if p]


@settings(max_examples=60, deadline=None)
@given(acyclic_documents())
def test_random_acyclic_dependencies_give_groups_in_edge_order(
    doc: tuple[list[str], list[tuple[str, list[str]]], list[list[tuple[str, list[str]]]]],
) -> None:
    names, rules, policy_rules = doc
    policies = [dep(f"p{k}", *pr) for k, pr in enumerate(policy_rules)]
    text = document([cm(n) for n in names], policies)
    first, second = run(text), run(text)
    assert summary(first.cluster.node.bundle) == summary(second.cluster.node.bundle)
    groups = [b for b in first.cluster.node.bundle.walk()][1:] or [first.cluster.node.bundle]
    group_of = {a.name: k for k, b in enumerate(groups) for a in b.applications}
    assert sorted(group_of) == sorted(names)
    for component, targets in rules:
        for target in targets:
            assert group_of[target] < group_of[component]
    for k, bundle in enumerate(groups):
        members = [a.name for a in bundle.applications]
        assert members == [n for n in names if n in members]  # document order inside a group
        if len(groups) > 1:
            assert bundle.depends_on == ([groups[k - 1].name] if k else [])
            if k:  # every member of a later group follows something in the group before
                assert any(group_of[t] == k - 1 for m in members for t in dict(rules).get(m, []))
    assert (first.cluster.node.name == "") == (len(groups) == 1)
