"""The dependency graph between Applications: readiness, wake-ups, cycles, the reverse gate."""

from __future__ import annotations

from typing import Any

from oam_operator.operatorpolicies import AppGraph, AppRef, cycle_message, node_from_object, waiting_message
from oam_operator.operatorpolicies.graph import DependencyState, dependants_message


def app(name: str, *deps: str, namespace: str = "shop", state: str = "", generation: int = 1,
        observed: int | None = None, deleting: bool = False, uid: str | None = None) -> dict[str, Any]:
    entries = [{"name": d.split("/")[-1], **({"namespace": d.split("/")[0]} if "/" in d else {})} for d in deps]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}",
                            "generation": generation}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"state": state, "observedGeneration": generation if observed is None else observed} if state else {}
    policies = [{"name": "deps", "type": "app-dependency", "properties": {"applications": entries}}] if deps else []
    return {"metadata": meta, "spec": {"components": [], "policies": policies}, "status": status}


def graph(*objects: dict[str, Any], allow: bool = False) -> AppGraph:
    g = AppGraph()
    for obj in objects:
        g.upsert(node_from_object(obj, allow_cross_namespace=allow))
    return g


def upsert(g: AppGraph, obj: dict[str, Any], allow: bool = False) -> set[str]:
    return g.upsert(node_from_object(obj, allow_cross_namespace=allow))


def ref(name: str, namespace: str = "shop") -> AppRef:
    return AppRef(namespace, name)


def test_readiness_needs_the_current_generation_and_no_deletion() -> None:
    assert node_from_object(app("db", state="Ready"), allow_cross_namespace=False).ready
    stale = node_from_object(app("db", state="Ready", generation=4, observed=3), allow_cross_namespace=False)
    assert not stale.ready and stale.describe() == "Ready at generation 3 of 4"
    deleting = node_from_object(app("db", state="Ready", deleting=True), allow_cross_namespace=False)
    assert not deleting.ready and deleting.describe() == "Deleting"
    assert node_from_object(app("db"), allow_cross_namespace=False).describe() == "Pending"
    assert node_from_object(app("db", state="Processing"), allow_cross_namespace=False).describe() == "Processing"


def test_edges_come_from_the_spec_leniently_and_without_disallowed_namespaces() -> None:
    node = node_from_object(app("web", "db", "infra/cache", "db"), allow_cross_namespace=False)
    assert node.depends_on == (ref("db"),)
    node = node_from_object(app("web", "db", "infra/cache"), allow_cross_namespace=True)
    assert node.depends_on == (ref("cache", "infra"), ref("db"))
    broken = app("web")
    broken["spec"]["policies"] = [{"name": "d", "type": "app-dependency", "properties": {"applications": "db"}},
                                  {"name": "x", "type": "dependency", "properties": {}}, "junk"]
    assert node_from_object(broken, allow_cross_namespace=False).depends_on == ()


def test_states_name_missing_dependencies() -> None:
    g = graph(app("db", state="Processing"))
    assert g.states([ref("db"), ref("cache")]) == [
        DependencyState(ref("db"), "Processing", False), DependencyState(ref("cache"), "Missing", False)]
    assert waiting_message("shop", g.states([ref("db"), ref("cache", "infra")])) == (
        "Waiting for Applications to be Ready: db (Processing), infra/cache (Missing)")


def test_only_dependants_are_woken_and_only_on_readiness_changes() -> None:
    g = graph(app("web", "db"), app("api", "db"), app("other"))
    # A dependency appearing wakes its dependants (they stop reporting it missing).
    assert upsert(g, app("db")) == {"uid-shop-web", "uid-shop-api"}
    # Progress of the dependency (Pending → Processing → Processing) wakes no one.
    assert upsert(g, app("db", state="Pending")) == set()
    assert upsert(g, app("db", state="Processing")) == set()
    # Readiness flips wake its dependants, once.
    assert upsert(g, app("db", state="Ready")) == {"uid-shop-web", "uid-shop-api"}
    assert upsert(g, app("db", state="Ready")) == set()
    assert upsert(g, app("db", state="Ready", generation=2, observed=1)) == {"uid-shop-web", "uid-shop-api"}
    # Changes of a dependant never wake its dependency unless its edges change.
    assert upsert(g, app("web", "db", state="Ready")) == set()
    # A dependant disappearing wakes its dependencies (their deletion may wait for it).
    assert g.remove(ref("web")) == {"uid-shop-db"}
    assert g.dependants(ref("db")) == [ref("api")]
    assert g.remove(ref("nothing")) == set()


def test_edited_edges_wake_old_and_new_dependencies_and_dependants() -> None:
    g = graph(app("a", "b"), app("b"), app("c"), app("z", "a"))
    assert upsert(g, app("a", "c")) == {"uid-shop-b", "uid-shop-c", "uid-shop-z"}
    assert g.dependants(ref("b")) == [] and g.dependants(ref("c")) == [ref("a")]


def test_a_recreated_application_replaces_the_old_one() -> None:
    g = graph(app("db", state="Ready"), app("web", "db"))
    assert upsert(g, app("db", uid="new-uid")) == {"uid-shop-web"}
    assert g.node(ref("db")) is not None and g.node(ref("db")).uid == "new-uid"  # type: ignore[union-attr]


def test_cycles_are_walked_deterministically_from_the_smallest_member() -> None:
    g = graph(app("a", "b"), app("b", "c"), app("c", "a"), app("d", "a"))
    for start in ("a", "b", "c"):
        node = g.node(ref(start))
        assert node is not None
        cycle = g.find_cycle(ref(start), node.depends_on)
        assert cycle is not None and cycle_message(cycle) == "application cycle detected: a -> b -> c -> a"
    assert g.find_cycle(ref("d"), (ref("a"),)) is None  # depends on a cycle, is not in one
    assert cycle_message(g.find_cycle(ref("s"), (ref("s"),)) or []) == "application cycle detected: s -> s"
    g2 = graph(app("x", "other/y"), app("y", "shop/x", namespace="other"), allow=True)
    cycle = g2.find_cycle(ref("x"), (ref("y", "other"),))
    assert cycle is not None and cycle_message(cycle) == "application cycle detected: other/y -> shop/x -> other/y"


def test_the_cycle_found_follows_sorted_dependencies() -> None:
    # a depends on b and c; both lead back to a: the walk takes b first.
    g = graph(app("a", "c", "b"), app("b", "a"), app("c", "a"))
    assert g.find_cycle(ref("a"), (ref("c"), ref("b"))) == [ref("a"), ref("b"), ref("a")]
    # From c, the walk must come back to c: a -> b -> a never returns, so a -> c is taken.
    assert g.find_cycle(ref("c"), (ref("a"),)) == [ref("a"), ref("c"), ref("a")]


def test_long_chains_do_not_recurse() -> None:
    objects = [app(f"n{i:04d}", f"n{i + 1:04d}") for i in range(3000)]
    g = graph(*objects, app("n3000", "n0000"))
    cycle = g.find_cycle(ref("n0000"), (ref("n0001"),))
    assert cycle is not None and len(cycle) == 3002


def test_reverse_gate_blocks_on_dependants_except_cycle_members() -> None:
    g = graph(app("db"), app("web", "db"), app("api", "db", deleting=True))
    assert g.blocking_dependants(ref("db")) == [ref("api"), ref("web")]
    assert dependants_message("shop", [ref("api"), ref("x", "other")], "oam-operator.dev/ignore-dependants") == (
        "Deletion blocked: Applications depend on it: api, other/x (delete them or remove their app-dependency on "
        'it; the annotation oam-operator.dev/ignore-dependants: "true" deletes it anyway)')
    cyclic = graph(app("a", "b"), app("b", "a"), app("c", "a"))
    assert cyclic.blocking_dependants(ref("a")) == [ref("c")]
    assert graph(app("a", "b"), app("b", "a")).blocking_dependants(ref("a")) == []
