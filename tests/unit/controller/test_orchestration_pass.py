"""The operator's policies inside a pass (controller/reconcile/orchestration.py), without a cluster.

The passes below all end before the reconciler sends a request: the client points at a closed
local port, so a pass that tried to apply or delete anything would end in a connection error
instead of the asserted state. Where a test wants to show the gate let a pass through, it
asserts exactly that error.
"""

from __future__ import annotations

import copy
from typing import Any

from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.appindex import AppIndex
from oam_operator.controller.reconcile.composition import OperatorTransform
from oam_operator.controller.reconcile.seams import Environment, Memory
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.reconciler.client import ClusterClient
from tests.unit.unitkit import run_apply, run_delete


def environment(index: AppIndex, **settings: Any) -> Environment:
    config = Configuration()
    config.host = "http://127.0.0.1:9"
    resolved = Settings.from_sources(settings, {})
    clients = TenantClients(ClusterClient(ApiClient(configuration=config)))
    return Environment(settings=resolved, transform=OperatorTransform.from_settings(resolved), clients=clients, cluster_id="c",
                       profiles=lambda name: None, apps=index)


def body(name: str, *policies: dict[str, Any], status: dict[str, Any] | None = None,
         **meta: Any) -> dict[str, Any]:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"}}
    return {
        "apiVersion": "oam-operator.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "generation": 1, **meta},
        "spec": {"components": [{"name": "c", "type": "passthrough", "properties": {"object": config}}],
                 "policies": list(policies), "suspend": False},
        "status": status if status is not None else {"observedGeneration": 1},
    }


def after(*names: str) -> dict[str, Any]:
    return {"name": "after", "type": "app-dependency", "properties": {"applications": [{"name": n} for n in names]}}


def ready(name: str, *policies: dict[str, Any]) -> dict[str, Any]:
    return body(name, *policies, status={"observedGeneration": 1, "state": "Ready"})


def message(status: dict[str, Any]) -> tuple[str, str, str]:
    condition = next(c for c in status["conditions"] if c["type"] == "Ready")
    return status["state"], condition["reason"], condition["message"]


def test_a_new_revision_waits_for_missing_and_unready_dependencies() -> None:
    index = AppIndex()
    index.observe(None, body("db", status={"observedGeneration": 1, "state": "Processing"}))
    result = run_apply(body("web", after("db", "cache")), Memory(), environment(index))
    assert message(result.status) == (
        "Waiting", "DependenciesNotReady", "Waiting for Applications to be Ready: db (Processing), cache (Missing)")
    assert result.status["dependencies"] == [
        {"namespace": "shop", "name": "db", "state": "Processing", "ready": False},
        {"namespace": "shop", "name": "cache", "state": "Missing", "ready": False},
    ]
    # No timed requeue (the index wakes it) but one, at the end of the grace of the missing one.
    assert (result.delay, result.outcome) == (60.0, "pending")
    assert "inventory" not in result.status and "revision" not in result.status
    assert result.events == []


def test_a_missing_dependency_is_a_warning_after_the_grace_period() -> None:
    """Issue 44: a typo in a dependency's name looked like "not created yet", for ever."""
    from datetime import UTC, datetime, timedelta

    index = AppIndex()
    index.observe(None, body("db", status={"observedGeneration": 1, "state": "Processing"}))
    env, memory = environment(index, missing_dependency_grace="1m"), Memory()
    start = datetime(2026, 12, 6, 5, 0, tzinfo=UTC)

    def at(seconds: float, *names: str) -> Any:
        env.clock = lambda: start + timedelta(seconds=seconds)
        return run_apply(body("web", after(*names)), memory, env)

    assert (at(0, "db", "cahce").delay, at(30, "db", "cahce").delay) == (60.0, 30.0)
    overdue = at(60, "db", "cahce")
    assert [(e.type, e.reason, e.message) for e in overdue.events] == [(
        "Warning", "DependencyMissing", "Application cahce named by app-dependency does not exist after 1m; still "
        "waiting for it (check its name, or create it)")]
    assert (overdue.delay, overdue.status["state"]) == (None, "Waiting")  # still waiting, no more requeue
    assert message(overdue.status)[1] == "DependenciesNotReady"
    assert at(90, "db", "cahce").events == []  # once per missing dependency
    renamed = at(100, "db", "cache", "queue")  # a new missing one has a grace of its own
    assert (renamed.events, renamed.delay) == ([], 60.0)
    both = at(160, "db", "cache", "queue")
    assert [e.message for e in both.events] == [
        "Applications cache, queue named by app-dependency do not exist after 1m; still waiting for them (check "
        "their names, or create them)"]


def test_a_dependency_that_only_is_not_ready_is_no_warning() -> None:
    index = AppIndex()
    index.observe(None, body("db", status={"observedGeneration": 1, "state": "Processing"}))
    result = run_apply(body("web", after("db")), Memory(), environment(index, missing_dependency_grace="0s"))
    assert (result.events, result.delay, result.status["state"]) == ([], None, "Waiting")


def test_once_ready_the_gate_lets_the_pass_apply() -> None:
    index = AppIndex()
    index.observe(None, ready("db"))
    result = run_apply(body("web", after("db")), Memory(), environment(index))
    # Past the gate, the pass reached the (unreachable) API server.
    assert result.status["state"] == "Pending" and result.status["revision"] == 1
    assert result.status["dependencies"] == [{"namespace": "shop", "name": "db", "state": "Ready", "ready": True}]


def test_a_started_revision_is_not_held_by_a_dependency_going_away() -> None:
    index = AppIndex()
    first = run_apply(body("web", after("db")), Memory(), environment(index))
    assert first.status["state"] == "Waiting"
    started = copy.deepcopy(first.status)
    started["lastProcessingDigest"] = started["processingDigest"]
    result = run_apply(body("web", after("db"), status=started), Memory(), environment(index))
    assert result.status["state"] == "Pending"  # went on to apply (connection refused), not Waiting
    assert result.status["dependencies"][0]["state"] == "Missing"


def test_a_cycle_is_an_error_on_the_member_asking() -> None:
    index = AppIndex()
    index.observe(None, body("b", after("a")))
    env = environment(index)
    result = run_apply(body("a", after("b")), Memory(), env)
    assert message(result.status) == ("Error", "DependencyCycle", "application cycle detected: a -> b -> a")
    assert 5.0 < (result.delay or 0) < 5.26  # the error backoff's first step, jittered
    retry = {"name": "sync", "type": "reconciliation", "properties": {"retryInterval": "7s"}}
    result = run_apply(body("a", after("b"), retry), Memory(), env)
    assert result.status["state"] == "Error"
    assert 7.06 < (result.delay or 0) < 7.36  # retryInterval plus 1-5 % jitter


def test_reconciliation_suspend_and_conflicts() -> None:
    env = environment(AppIndex())
    suspend = {"name": "sync", "type": "reconciliation", "properties": {"suspend": True}}
    result = run_apply(body("web", suspend), Memory(), env)
    assert message(result.status) == ("Pending", "Suspended", "Reconciliation is suspended")
    assert result.delay is None
    conflict = body("web", {"name": "sync", "type": "reconciliation", "properties": {"timeout": "1m"}})
    conflict["spec"]["timeout"] = "2m"
    result = run_apply(conflict, Memory(), env)
    assert message(result.status) == (
        "Error", "TransformFailed", 'policy "sync": timeout is also set by spec.timeout; set it in one place only')


def test_cross_namespace_dependencies_follow_the_setting() -> None:
    elsewhere = {"name": "after", "type": "app-dependency",
                 "properties": {"applications": [{"name": "db", "namespace": "infra"}]}}
    result = run_apply(body("web", elsewhere), Memory(), environment(AppIndex()))
    assert message(result.status)[:2] == ("Error", "TransformFailed")
    index = AppIndex(allow_cross_namespace=True)
    result = run_apply(body("web", elsewhere), Memory(),
                        environment(index, allow_cross_namespace_dependencies=True))
    assert message(result.status) == (
        "Waiting", "DependenciesNotReady", "Waiting for Applications to be Ready: infra/db (Missing)")


INVENTORY = [{"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "db-config",
              "phase": "Ready", "status": "Current", "digest": "x"}]


def test_deletion_waits_for_dependants_unless_forced() -> None:
    index = AppIndex()
    index.observe(None, ready("web", after("db")))
    status = {"observedGeneration": 1, "state": "Ready", "inventory": INVENTORY}
    deleting = body("db", status=status, deletionTimestamp="2026-01-01T00:00:00Z")
    result = run_delete(deleting, Memory(), environment(index))
    assert message(result.status) == (
        "Deleting", "DeletionBlocked",
        "Deletion blocked: Applications depend on it: web (delete them or remove their app-dependency on it; the "
        'annotation oam-operator.dev/ignore-dependants: "true" deletes it anyway)')
    assert not result.finished and result.delay is not None and result.delay >= 1.0
    forced = copy.deepcopy(deleting)
    forced["metadata"]["annotations"] = {"oam-operator.dev/ignore-dependants": "true"}
    result = run_delete(forced, Memory(), environment(index))
    assert result.status["state"] == "DeletionPending"  # past the gate: the API server was asked
    index.observe("DELETED", ready("web", after("db")))
    result = run_delete(deleting, Memory(), environment(index))
    assert result.status["state"] == "DeletionPending"
    # Nothing to tear down: no check at all.
    empty = body("db", status={"observedGeneration": 1}, deletionTimestamp="2026-01-01T00:00:00Z")
    index.observe(None, ready("web", after("db")))
    assert run_delete(empty, Memory(), environment(index)).finished


def test_reconciliation_values_replace_the_pass_interval_timeout_and_retry_delay() -> None:
    from datetime import UTC, datetime, timedelta

    from oam_operator.api.meta import format_timestamp
    from oam_operator.controller.reconcile import orchestration
    from oam_operator.controller.reconcile.checks import Subject
    from oam_operator.controller.reconcile.passes import _Pass
    from oam_operator.operatorpolicies import OperatorPolicies, ReconciliationSettings

    env = environment(AppIndex())
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    env.clock = lambda: now
    status = {"observedGeneration": 1, "processingSince": format_timestamp(now - timedelta(seconds=30))}
    p = _Pass(body("web", status=status), Memory(), env)
    assert (p.interval, p.timeout_text, p.retry_interval, p.timed_out()) == (600.0, "10m", None, False)
    policies = OperatorPolicies(reconciliation=ReconciliationSettings("sync", "45s", "20s", "3s", None))
    subject = Subject(p.app.body, env.settings, env.transform, env.profiles, env.clients, "c", policies=policies)
    assert p.gate(subject) is None
    assert (p.interval, p.timeout_text, p.retry_interval, p.timed_out()) == (45.0, "20s", 3.0, True)
    assert orchestration.timing(policies) == orchestration.PassTiming(45.0, "20s", 3.0)
