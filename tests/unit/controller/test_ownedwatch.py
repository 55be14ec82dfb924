"""The cache of the watches of owned objects (controller/service/ownedwatch.py, docs/operator.md#watches-of-owned-objects):
the baseline from the operator's writes, drift from events and relists, what it forgets. The
threads and the API server's side run in the e2e tests (tests/e2e/test_drift_e2e.py)."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.ownedwatch import Drift, OwnedObjects, WatchedKind
from oam_operator.reconciler.objects import ObjectRef

DOMAIN = "oam-operator.dev"
DEPLOYMENTS = WatchedKind("apps", "v1", "deployments", "Deployment")
IMAGE = {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {
    ".": {}, "f:image": {}, "f:name": {}}}}}}}
NO_IMAGE = {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:name": {}}}}}}}


def deployment(fields: dict[str, Any] | None, name: str = "web", owner: str = "cluster-1/shop/app",
               typed: bool = True) -> dict[str, Any]:
    managed = [{"manager": "kubectl-set", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    if fields is not None:
        managed.append({"manager": DOMAIN, "operation": "Apply", "fieldsV1": fields})
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "shop", "managedFields": managed,
                                        "annotations": {f"{DOMAIN}/owner-id": owner}}}
    if typed:
        obj = {"apiVersion": "apps/v1", "kind": "Deployment", **obj}
    return obj


class Pages:
    """A client whose LIST answers with the given items (the only request ``_list`` makes)."""

    def __init__(self, *items: dict[str, Any]) -> None:
        self.items = list(items)

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        assert (verb, method, path) == ("list", "GET", "/apis/apps/v1/namespaces/shop/deployments")
        return {"items": self.items, "metadata": {"resourceVersion": "42"}}


def watching(client: Any = None) -> tuple[OwnedObjects, list[tuple[str, str, bool]]]:
    told: list[tuple[str, str, bool]] = []
    owned = OwnedObjects(client, domain=DOMAIN, cluster_id="cluster-1", namespaces=("shop",),
                         on_change=lambda ns, name, key, obj, deleted: told.append((ns, name, deleted)))
    owned._register(DEPLOYMENTS)
    owned._mark(DEPLOYMENTS, "shop", True, "synced")
    return owned, told


def test_fields_another_manager_took_are_drift_until_the_operator_writes_again() -> None:
    owned, told = watching()
    owned.written(deployment(IMAGE))
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    owned.handle({"type": "MODIFIED", "object": deployment(NO_IMAGE)})
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(("spec.template.spec.containers[name=web].image",))
    assert told == [("shop", "app", False)]
    owned.written(deployment(IMAGE))  # the correction's response
    assert owned.drift("apps", "Deployment", "shop", "web") is None


def test_a_change_that_takes_nothing_is_no_drift() -> None:
    owned, told = watching()
    owned.written(deployment(IMAGE))
    owned.handle({"type": "MODIFIED", "object": deployment(IMAGE)})  # status, an HPA's replicas, …
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    assert told == [("shop", "app", False)]  # still told: readiness needs every event


def test_a_deleted_object_is_drift_and_its_re_creation_ends_it() -> None:
    owned, told = watching()
    owned.written(deployment(IMAGE))
    owned.handle({"type": "DELETED", "object": deployment(IMAGE)})
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(deleted=True)
    owned.written(deployment(IMAGE))
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    assert told == [("shop", "app", True)]


def test_the_first_sight_of_an_object_is_its_baseline() -> None:
    """After a restart nothing was written by this process: what it sees first is the baseline."""
    owned, _ = watching()
    owned.handle({"type": "ADDED", "object": deployment(NO_IMAGE)})
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    owned.handle({"type": "MODIFIED", "object": deployment({})})
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(("spec.template.spec.containers[name=web]",
                                                                       "spec.template.spec.containers[name=web].name"))


def test_nothing_is_known_of_a_kind_not_synced() -> None:
    owned, _ = watching()
    owned.written(deployment(IMAGE))
    owned.handle({"type": "MODIFIED", "object": deployment(NO_IMAGE)})
    owned._mark(DEPLOYMENTS, "shop", False, "down")
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    assert not owned.watched("apps", "Deployment")
    unwatched, _ = watching()
    unwatched.written({**deployment(IMAGE), "kind": "StatefulSet"})
    assert unwatched.sizes() == (0, 0)  # a write of an unwatched kind is not kept


def test_a_relist_finds_what_changed_and_what_went_while_unwatched() -> None:
    """An API server restart or 410 Gone: the LIST is compared with the cache."""
    client = Pages(deployment(IMAGE, typed=False), deployment(IMAGE, name="api", typed=False))
    owned, told = watching(client)
    assert owned._list(DEPLOYMENTS, "shop", "/apis/apps/v1/namespaces/shop/deployments") == "42"
    assert told == []  # first sight: baselines, nobody to wake
    client.items = [deployment(NO_IMAGE, typed=False)]  # web edited and api deleted while unwatched
    owned._list(DEPLOYMENTS, "shop", "/apis/apps/v1/namespaces/shop/deployments")
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(("spec.template.spec.containers[name=web].image",))
    assert owned.drift("apps", "Deployment", "shop", "api") == Drift(deleted=True)
    assert sorted(told) == [("shop", "app", False), ("shop", "app", True)]


def test_a_list_steps_aside_before_each_object_with_one_pause_per_list() -> None:
    """urgency.py: the pause is taken before each listed object is absorbed, a fresh one per LIST."""
    client = Pages(deployment(IMAGE, typed=False), deployment(IMAGE, name="api", typed=False))
    owned, _ = watching(client)
    steps: list[str] = []
    pauses: list[int] = []

    def yielder() -> Any:
        pauses.append(len(pauses))
        number = pauses[-1]
        return lambda: steps.append(f"pause {number}, {len(owned._objects)} held")

    owned.yielder = yielder
    owned._list(DEPLOYMENTS, "shop", "/apis/apps/v1/namespaces/shop/deployments")
    owned._list(DEPLOYMENTS, "shop", "/apis/apps/v1/namespaces/shop/deployments")
    assert steps == ["pause 0, 0 held", "pause 0, 1 held", "pause 1, 2 held", "pause 1, 2 held"]


def test_what_left_the_inventory_is_forgotten() -> None:
    owned, _ = watching()
    owned.written(deployment(IMAGE))
    owned.written(deployment(IMAGE, name="api"))
    count, size = owned.sizes()
    assert count == 2 and 0 < size / count <= 2048  # issue 23's bound: at most 2 KiB per cached object
    owned.retain(("shop", "app"), [("apps", "Deployment", "shop", "web")])
    assert owned.sizes()[0] == 1
    owned.retain(("shop", "app"), [])
    assert owned.sizes() == (0, 0)


def test_secrets_are_never_watched() -> None:
    owned, _ = watching()
    assert not owned._register(WatchedKind("", "v1", "secrets", "Secret"))
    assert owned._register(WatchedKind("", "v1", "configmaps", "ConfigMap"))
    assert WatchedKind("", "v1", "configmaps", "ConfigMap").path("shop") == "/api/v1/namespaces/shop/configmaps"
    assert WatchedKind("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                       namespaced=False).path("shop") == "/apis/rbac.authorization.k8s.io/v1/clusterroles"


class Refusing:
    """A client whose LIST is refused as under the chart's leastPrivilege RBAC."""

    def __init__(self, status: int) -> None:
        self.status, self.calls = status, 0

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        from oam_operator.reconciler.client import classify_api_error

        self.calls += 1
        cls = classify_api_error(self.status, read=True, message="configmaps is forbidden")
        raise cls(f"{self.status} Forbidden: configmaps is forbidden", status=self.status, reason="Forbidden",
                  verb=verb)


def test_a_kind_the_operator_may_not_watch_is_given_up_once_and_said(caplog: Any) -> None:
    """A 403: logged once, the state ``forbidden`` for the metric, the thread ends (no retry loop),
    and the kind counts as unwatched (its waits keep the backoff, its drift the reapply interval)."""
    client = Refusing(403)
    states: list[tuple[str, str]] = []
    owned = OwnedObjects(client, domain=DOMAIN, cluster_id="cluster-1", namespaces=("shop",),  # type: ignore[arg-type]
                         on_change=lambda *_: None, on_state=lambda kind, state: states.append((kind.kind, state)))
    configmaps = WatchedKind("", "v1", "configmaps", "ConfigMap")
    owned._register(configmaps)
    with caplog.at_level("INFO", logger="oam_operator.controller"):
        owned._run(configmaps, "shop")  # returns: a refusal is not retried
    assert client.calls == 1 and states == [("ConfigMap", "forbidden")]
    assert [r.getMessage() for r in caplog.records] == [
        "not watching /api/v1/namespaces/shop/configmaps (403 Forbidden: configmaps is forbidden): its drift is "
        "found at the reapply interval and waits for it use the backoff"]
    assert not owned.watched("", "ConfigMap")
    assert owned.drift("", "ConfigMap", "shop", "settings") is None


# -- reads from the watch (docs/operator.md#reads-from-the-watch) ---------------------------------

def versioned(fields: dict[str, Any] | None, version: str, image: str = "web:1") -> dict[str, Any]:
    obj = deployment(fields)
    obj["metadata"]["resourceVersion"] = version
    obj["spec"] = {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}
    return obj


def test_a_synced_watch_answers_a_copy_of_what_it_holds_and_absent_for_what_it_never_saw() -> None:
    owned, _ = watching()
    owned.written(versioned(IMAGE, "10"))
    answer = owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "web"))
    assert answer.state == "present"
    assert answer.obj is not None
    assert answer.obj["metadata"]["resourceVersion"] == "10"
    assert "managedFields" not in answer.obj["metadata"]
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "other")).state == "absent"


def test_what_is_not_watched_or_not_synced_is_unknown() -> None:
    owned, _ = watching()
    owned.written(versioned(IMAGE, "10"))
    assert owned.lookup(ObjectRef("", "v1", "ConfigMap", "shop", "web")).state == "unknown"  # kind not watched
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "elsewhere", "web")).state == "unknown"  # scope
    owned._mark(DEPLOYMENTS, "shop", False, "down")  # relisting after 410 Gone
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "web")).state == "unknown"
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "other")).state == "unknown"


def test_an_object_seen_deleted_is_unknown_since_it_may_only_have_lost_the_owner_label() -> None:
    owned, _ = watching()
    owned.written(versioned(IMAGE, "10"))
    owned.handle({"type": "DELETED", "object": versioned(IMAGE, "11")})
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "web")).state == "unknown"
    owned.written(versioned(IMAGE, "12"))  # created again
    assert owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "web")).state == "present"


def test_a_copy_is_never_older_than_the_operators_own_write() -> None:
    """A watch event from before the write arrives after its response: it is ignored, and
    causes neither drift nor a wake-up; a later event replaces the copy."""
    ref = ObjectRef("apps", "v1", "Deployment", "shop", "web")
    owned, told = watching()
    owned.written(versioned(IMAGE, "20", image="web:2"))
    owned.handle({"type": "MODIFIED", "object": versioned(NO_IMAGE, "19", image="web:1")})
    answer = owned.lookup(ref)
    assert answer.obj is not None
    assert answer.obj["spec"]["template"]["spec"]["containers"][0]["image"] == "web:2"
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    assert told == []
    owned.handle({"type": "MODIFIED", "object": versioned(IMAGE, "21", image="web:2")})
    answer = owned.lookup(ref)
    assert answer.obj is not None and answer.obj["metadata"]["resourceVersion"] == "21"
    assert told == [("shop", "app", False)]


def test_a_write_response_older_than_the_watch_keeps_the_watchs_copy_but_is_the_new_baseline() -> None:
    owned, _ = watching()
    owned.written(versioned(NO_IMAGE, "5"))
    owned.handle({"type": "MODIFIED", "object": versioned(IMAGE, "31")})  # already after the write below
    owned.written(versioned(IMAGE, "30"))
    answer = owned.lookup(ObjectRef("apps", "v1", "Deployment", "shop", "web"))
    assert answer.obj is not None and answer.obj["metadata"]["resourceVersion"] == "31"
    assert owned.drift("apps", "Deployment", "shop", "web") is None  # baseline IMAGE, live IMAGE


def test_the_event_of_the_operators_own_write_keeps_the_copy_and_still_tells_the_owner() -> None:
    """The watch event carrying the resourceVersion the write's response had is the same state:
    it is not compressed again (whatever it holds, the copy stays the response's), and the owner
    is told as for every event (readiness reads the events)."""
    ref = ObjectRef("apps", "v1", "Deployment", "shop", "web")
    owned, told = watching()
    owned.written(versioned(IMAGE, "20", image="web:2"))
    owned.handle({"type": "MODIFIED", "object": versioned(NO_IMAGE, "20", image="web:other")})
    answer = owned.lookup(ref)
    assert answer.obj is not None
    assert answer.obj["spec"]["template"]["spec"]["containers"][0]["image"] == "web:2"
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    assert told == [("shop", "app", False)]


def test_after_a_lost_lease_the_last_seen_state_is_the_baseline_so_a_later_edit_is_still_drift() -> None:
    """``forget_writes`` (docs/operator.md#leader-election): what this instance wrote stops being
    the baseline, what the watch saw becomes it, as for a standby that watched all along."""
    owned, _ = watching()
    owned.written(deployment(IMAGE))
    owned.forget_writes()
    assert owned.drift("apps", "Deployment", "shop", "web") is None
    owned.handle({"type": "MODIFIED", "object": deployment(NO_IMAGE)})  # a hand edit while no one led
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(("spec.template.spec.containers[name=web].image",))
    owned.forget_writes()  # lost again: the edited state is all the cache can vouch for
    assert owned.drift("apps", "Deployment", "shop", "web") is None


DESIRED = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}


def test_an_edit_made_before_the_first_sight_is_drift_against_the_desired_object() -> None:
    """Issue 36: the only witness of a hand edit was killed before it corrected it."""
    owned, _ = watching()
    owned.handle({"type": "ADDED", "object": deployment(NO_IMAGE)})  # first sight: already edited
    assert owned.drift("apps", "Deployment", "shop", "web") is None  # no baseline of its own
    found = owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED)
    assert found == Drift(("spec.template.spec.containers[name=web].image",))
    assert owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED) == found  # until corrected
    owned.written(deployment(IMAGE))  # the correction's response: witnessed from now on
    assert owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED) is None


def test_a_first_sight_that_matches_the_desired_object_is_compared_once() -> None:
    owned, _ = watching()
    owned.handle({"type": "ADDED", "object": deployment(IMAGE)})
    assert owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED) is None
    assert owned._objects[("apps", "Deployment", "shop", "web")].witnessed
    owned.handle({"type": "MODIFIED", "object": deployment(NO_IMAGE)})  # later: read from the field sets
    assert owned.drift("apps", "Deployment", "shop", "web") == Drift(("spec.template.spec.containers[name=web].image",))
    assert owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED) is None


def test_an_object_this_process_wrote_is_never_compared_with_the_desired_object() -> None:
    owned, _ = watching()
    owned.written(deployment(NO_IMAGE))  # e.g. an Application that does not set the image any more
    assert owned.unverified_drift("apps", "Deployment", "shop", "web", DESIRED) is None
