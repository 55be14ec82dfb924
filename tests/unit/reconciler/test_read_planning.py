"""Read planning of batched reads (docs/reconciler.md#batched-reads), extended to new objects:
which (type, namespace) groups a wave
LISTs, with or without the owner selector, and that every read answers what a GET would."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from oam_operator.reconciler.concurrency import Outcome
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.errors import ApiError, PermanentApiError, TransientApiError
from oam_operator.reconciler.events import EventRecorder
from oam_operator.reconciler.inventory import InventoryItem, Phase
from oam_operator.reconciler.objects import ObjectRef
from oam_operator.reconciler.operations import Operations, OpsCounters
from oam_operator.reconciler.reads import ListPlan, ReadCache, ReadTarget, plan_lists
from tests.unit.unitkit import run_in_order

OWNER_KEY = "r.test/owner-id"
OURS = "ours-hash"
SELECTOR = f"{OWNER_KEY}={OURS}"
NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CM = ApiResource("", "v1", "ConfigMap", "configmaps", True, ())
NS = ApiResource("", "v1", "Namespace", "namespaces", False, ())


def ref(name: str, namespace: str = "a", kind: str = "ConfigMap", version: str = "v1") -> ObjectRef:
    return ObjectRef("", version, kind, namespace, name)


def item(phase: Phase, applied: bool) -> InventoryItem:
    i = InventoryItem(kind="ConfigMap", version="v1", name="x")
    i.phase = phase
    i.last_applied_at = NOW if applied else None
    return i


def new(name: str, namespace: str = "a") -> ReadTarget:
    """Step 8: an object without an item."""
    return ReadTarget(ref(name, namespace), None)


def scheduled(name: str, namespace: str = "a") -> ReadTarget:
    """Step 15: a new item, never applied."""
    return ReadTarget(ref(name, namespace), item(Phase.SCHEDULED_FOR_APPLICATION, applied=False))


def written(name: str, namespace: str = "a", phase: Phase = Phase.READY) -> ReadTarget:
    return ReadTarget(ref(name, namespace), item(phase, applied=True))


def plans(targets: Sequence[ReadTarget], threshold: int = 2, **kwargs: Any) -> list[ListPlan]:
    return plan_lists(targets, threshold=threshold, owner_selector=SELECTOR, **kwargs)


# -- planning -------------------------------------------------------------------------------


def test_new_objects_share_one_unfiltered_list() -> None:
    assert plans([new("x"), new("y"), new("z")]) == [ListPlan(("v1", "ConfigMap", "a"), None, ("x", "y", "z"))]
    assert plans([scheduled("x"), scheduled("y")]) == [ListPlan(("v1", "ConfigMap", "a"), None, ("x", "y"))]


def test_below_threshold_reads_by_get() -> None:
    assert plans([new("x")]) == []
    assert plans([new("x"), written("y")]) == []  # one of each kind: neither threshold is met
    assert plans([new("x"), new("y")], threshold=3) == []
    assert plans([new("x")], threshold=1) == [ListPlan(("v1", "ConfigMap", "a"), None, ("x",))]


def test_written_items_keep_the_owner_filtered_list() -> None:
    assert plans([written("x"), written("y", phase=Phase.CREATING), new("z")]) == [
        ListPlan(("v1", "ConfigMap", "a"), SELECTOR, ("x", "y", "z"))
    ]


def test_unfiltered_list_wins_and_serves_every_member() -> None:
    targets = [written("x"), written("y"), new("z"), new("w")]
    assert plans(targets) == [ListPlan(("v1", "ConfigMap", "a"), None, ("x", "y", "z", "w"))]


def test_items_that_are_neither_new_nor_labelled_count_for_nothing() -> None:
    # Digest changed (ScheduledForApplication after a write) and purges: GETs, as before.
    targets = [
        ReadTarget(ref("x"), item(Phase.SCHEDULED_FOR_APPLICATION, applied=True)),
        ReadTarget(ref("y"), item(Phase.COMPLETING, applied=True)),
    ]
    assert plans(targets) == []
    # ...but they are served by a LIST that other members qualify.
    assert plans([*targets, new("z"), new("w")])[0].members == ("x", "y", "z", "w")


def test_never_applied_deletion_candidates_count_as_new() -> None:
    targets = [ReadTarget(ref(n), item(Phase.SCHEDULED_FOR_DELETION, applied=False)) for n in ("x", "y")]
    assert plans(targets) == [ListPlan(("v1", "ConfigMap", "a"), None, ("x", "y"))]


def test_groups_by_type_and_namespace_in_first_seen_order() -> None:
    targets = [
        new("x", "b"),
        new("x", "a"),
        ReadTarget(ref("s", "a", kind="Secret"), None),
        new("y", "b"),
        new("y", "a"),
        ReadTarget(ref("t", "a", kind="Secret"), None),
        ReadTarget(ref("x", "a", version="v2"), None),
    ]
    assert [(p.group, p.members) for p in plans(targets)] == [
        (("v1", "ConfigMap", "b"), ("x", "y")),
        (("v1", "ConfigMap", "a"), ("x", "y")),
        (("v1", "Secret", "a"), ("s", "t")),
    ]


def test_a_name_counts_once_and_excluded_groups_are_not_listed() -> None:
    assert plans([new("x"), new("x")]) == []
    assert plans([new("x"), new("y")], excluded={("v1", "ConfigMap", "a")}) == []


# -- serving reads --------------------------------------------------------------------------


class FakeCluster:
    """Just enough of ``ClusterClient`` for ``Operations.read``/``list_pages`` and ``ReadCache``;
    records every request. Pages hold ``page_size`` objects."""

    def __init__(self, objects: dict[tuple[str, str, str], dict[str, Any]], page_size: int = 500) -> None:
        self.objects = objects
        self.page_size = page_size
        self.requests: list[tuple[str, str, str | None]] = []
        self.fail_list: ApiError | None = None

    @property
    def event_client(self) -> FakeCluster:
        return self

    def resource_for(self, api_version: str, kind: str) -> ApiResource | None:
        return {("v1", "ConfigMap"): CM, ("v1", "Namespace"): NS}.get((api_version, kind))

    def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
        self.requests.append(("get", namespace, name))
        obj = self.objects.get((resource.kind, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def list_pages(
        self, resource: ApiResource, namespace: str = "", *, label_selector: str | None = None
    ) -> Iterator[tuple[list[dict[str, Any]], str]]:
        matching = []
        for (kind, ns, _), obj in sorted(self.objects.items()):
            if kind != resource.kind or (resource.namespaced and ns != namespace):
                continue
            labels = obj["metadata"].get("labels") or {}
            if label_selector is not None:
                key, value = label_selector.split("=")
                if labels.get(key) != value:
                    continue
            matching.append(copy.deepcopy(obj))
        start = 0
        while True:
            self.requests.append(("list", namespace, label_selector))
            if self.fail_list is not None:
                raise self.fail_list
            page = matching[start : start + self.page_size]
            start += self.page_size
            cont = "more" if start < len(matching) else ""
            yield page, cont
            if not cont:
                return

    def run_bounded(self, tasks: Sequence[Callable[[], Any]], limit: int) -> list[Outcome[Any]]:
        return run_in_order(tasks)

    def count(self, verb: str) -> int:
        return sum(1 for r in self.requests if r[0] == verb)


def cm(name: str, namespace: str = "a", owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": "7"}
    if owner is not None:
        meta["labels"] = {OWNER_KEY: owner}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"n": name}}


def store(*objs: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs}


def cache(cluster: FakeCluster, *, enabled: bool = True, threshold: int = 2) -> ReadCache:
    ops = Operations(
        client=cluster,  # type: ignore[arg-type]
        field_owner="r.test",
        finalizer="r.test",
        owner_id="owner",
        hashed_owner_id=OURS,
        owner_key=OWNER_KEY,
        digest_key="r.test/digest",
        field_validation="Strict",
        reclaimed_field_managers=(),
        metrics=None,
        events=EventRecorder(cluster, "r.test", False, lambda: NOW),  # type: ignore[arg-type]
        counters=OpsCounters(),
    )
    return ReadCache(ops, enabled=enabled, threshold=threshold, concurrency=4)


MIXED = store(
    cm("foreign", owner="other-hash"),
    cm("unlabelled"),
    cm("ours", owner=OURS),
    cm("bystander"),
    cm("elsewhere", namespace="b"),
)


def read_all(rc: ReadCache, targets: Sequence[ReadTarget]) -> list[dict[str, Any] | None]:
    rc.prefetch(targets)
    return [rc.read(t.ref) for t in targets]


def get_only(objects: dict[tuple[str, str, str], dict[str, Any]], targets: Sequence[ReadTarget]) -> list[Any]:
    return read_all(cache(FakeCluster(objects), enabled=False), targets)


def test_unfiltered_list_sees_foreign_unlabelled_and_absent_objects_like_gets() -> None:
    targets = [new("absent"), new("foreign"), new("unlabelled"), new("ours")]
    cluster = FakeCluster(MIXED)
    assert read_all(cache(cluster), targets) == get_only(MIXED, targets)
    assert cluster.requests == [("list", "a", None)]  # the absent one costs nothing more


def test_each_listed_answer_is_given_once() -> None:
    cluster = FakeCluster(MIXED)
    rc = cache(cluster)
    rc.prefetch([new("absent"), new("foreign")])
    assert rc.read(ref("absent")) is None and rc.read(ref("foreign")) is not None
    assert cluster.count("get") == 0
    # A second read in the same wave (e.g. after a write) goes to the server.
    assert rc.read(ref("absent")) is None and rc.read(ref("foreign")) is not None
    assert cluster.count("get") == 2
    # A non-member is never answered from the LIST.
    assert rc.read(ref("bystander")) is not None and cluster.count("get") == 3
    # The next wave starts afresh.
    rc.prefetch([])
    assert rc.read(ref("unlabelled")) is not None and cluster.count("get") == 4


def test_owner_filtered_list_misses_are_read_by_get() -> None:
    targets = [written("ours"), written("unlabelled"), new("absent")]
    cluster = FakeCluster(MIXED)
    assert read_all(cache(cluster), targets) == get_only(MIXED, targets)
    assert cluster.requests == [("list", "a", SELECTOR), ("get", "a", "unlabelled"), ("get", "a", "absent")]


def test_mixed_wave_uses_one_unfiltered_list() -> None:
    targets = [written("ours"), written("unlabelled"), scheduled("foreign"), scheduled("absent")]
    cluster = FakeCluster(MIXED)
    assert read_all(cache(cluster), targets) == get_only(MIXED, targets)
    assert cluster.requests == [("list", "a", None)]


def test_complete_paging_makes_misses_absent() -> None:
    objects = store(*(cm(f"other-{i}") for i in range(4)), cm("x"), cm("y"))
    targets = [new("x"), new("y"), new("z")]
    cluster = FakeCluster(objects, page_size=2)
    assert read_all(cache(cluster), targets) == get_only(objects, targets)
    assert cluster.count("list") == 3 and cluster.count("get") == 0


def test_paging_stops_when_every_member_is_found() -> None:
    objects = store(cm("a0"), cm("a1"), *(cm(f"z{i}") for i in range(10)))
    cluster = FakeCluster(objects, page_size=2)
    targets = [new("a0"), new("a1")]
    assert read_all(cache(cluster), targets) == get_only(objects, targets)
    assert cluster.requests == [("list", "a", None)]


def test_paging_stops_when_more_pages_would_cost_more_than_gets() -> None:
    # Two new objects in a namespace full of others: at most two pages, then two GETs.
    objects = store(*(cm(f"other-{i:02d}") for i in range(20)), cm("zz-present"))
    cluster = FakeCluster(objects, page_size=2)
    targets = [new("absent"), new("zz-present")]
    assert read_all(cache(cluster), targets) == get_only(objects, targets)
    assert cluster.count("list") == 2
    assert cluster.requests[2:] == [("get", "a", "absent"), ("get", "a", "zz-present")]


def test_forbidden_list_means_gets_for_the_rest_of_the_call() -> None:
    cluster = FakeCluster(MIXED)
    cluster.fail_list = PermanentApiError("403 Forbidden: no", status=403, reason="Forbidden", verb="list")
    rc = cache(cluster)
    targets = [new("absent"), new("foreign")]
    assert read_all(rc, targets) == get_only(MIXED, targets)
    assert cluster.count("list") == 1 and cluster.count("get") == 2
    cluster.requests.clear()
    assert read_all(rc, targets) == get_only(MIXED, targets)
    assert cluster.count("list") == 0 and cluster.count("get") == 2


def test_other_list_failures_fall_back_to_gets_for_this_wave_only() -> None:
    cluster = FakeCluster(MIXED)
    cluster.fail_list = TransientApiError("500 Internal Server Error", status=500, reason="x", verb="list")
    rc = cache(cluster)
    targets = [new("absent"), new("foreign")]
    assert read_all(rc, targets) == get_only(MIXED, targets)
    assert cluster.count("list") == 1 and cluster.count("get") == 2
    cluster.fail_list = None
    cluster.requests.clear()
    assert read_all(rc, targets) == get_only(MIXED, targets)
    assert cluster.requests == [("list", "a", None)]


def test_get_errors_keep_their_own_message_when_the_list_failed() -> None:
    class Broken(FakeCluster):
        def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
            self.requests.append(("get", namespace, name))
            raise TransientApiError("500 Internal Server Error: boom", status=500, reason="x", verb="get")

    cluster = Broken(MIXED)
    cluster.fail_list = TransientApiError("500 Internal Server Error: boom", status=500, reason="x", verb="list")
    rc = cache(cluster)
    rc.prefetch([new("absent"), new("foreign")])
    with pytest.raises(TransientApiError) as info:
        rc.read(ref("absent"))
    assert str(info.value) == "error reading object /v1, Kind=ConfigMap a/absent: 500 Internal Server Error: boom"


def test_disabled_or_unserved_types_never_list() -> None:
    cluster = FakeCluster(MIXED)
    targets = [new("absent"), new("foreign")]
    read_all(cache(cluster, enabled=False), targets)
    assert cluster.count("list") == 0
    unknown = [ReadTarget(ref(n, kind="Thing"), None) for n in ("p", "q")]
    cluster.requests.clear()
    assert read_all(cache(cluster), unknown) == [None, None]
    assert cluster.requests == []


def test_cluster_scoped_groups_list_all_namespaces() -> None:
    objects = store({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n1"}})
    cluster = FakeCluster(objects)
    targets = [ReadTarget(ObjectRef("", "v1", "Namespace", "", n), None) for n in ("n1", "n2")]
    assert read_all(cache(cluster), targets) == get_only(objects, targets)
    assert cluster.requests == [("list", "", None)]
