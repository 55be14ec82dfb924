"""A pass with a rollback policy (docs/operator.md#automatic-rollback), on a fake clock with a
scripted reconciler and a fake revision history: a revision not Ready within its timeout is rolled
back to the last Ready one, its spec's digest is remembered (also by a fresh memory, from the
persisted status), the same spec is never applied again, and a new spec is tried once."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Environment, Event, Memory, PassResult
from oam_operator.controller.reconcile.statuswriter import StatusWriter, ready_event
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.controller.service.admission import refusal
from oam_operator.reconciler.errors import ObjectValidationError, PermanentApiError
from oam_operator.reconciler.report import CallReport
from tests.unit.controller.test_admission import _parts, app, config_map
from tests.unit.controller.test_change_window_pass import CONFIG, changed, steady
from tests.unit.unitkit import (
    DOMAIN,
    Clock,
    FakeReconciler,
    fake_reconciler,
    item_of,
    outcome,
    pass_environment,
)

__all__ = ["fake_reconciler"]

ROLLBACK = {"name": "undo", "type": "rollback", "properties": {"onFailure": True}}
FAILED = "Revision 2 failed: ConfigMap web-config: InProgress, not Ready within 30s; rolled back to revision 1"


@dataclass
class History:
    """The operator's client holding the Application's ControllerRevisions (``revisions`` by number)."""

    revisions: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)

    def add(self, number: int, spec: dict[str, Any], outcome: str) -> None:
        self.revisions[number] = {"revision": number, "metadata": {"name": f"web-r{number}", "annotations": {
            f"{DOMAIN}/outcome": outcome}}, "data": {"spec": spec}}

    def impersonating(self, user: str) -> History:
        return self

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.requests.append((verb, path))
        if verb == "list" and path.endswith("/controllerrevisions"):
            return {"items": list(self.revisions.values())}
        if verb == "read" and "/controllerrevisions/web-r" in path:
            number = int(path.rsplit("-r", 1)[1])
            if number in self.revisions:
                return self.revisions[number]
        raise PermanentApiError("not found", status=404, reason="NotFound", verb=verb)


def settle(body: dict[str, Any], memory: Memory, env: Environment, posted: list[Event] | None = None) -> PassResult:
    """Passes as the loop runs them while a pass asks to run again at once, each ended by the
    status writer (its Events into ``posted``)."""
    while True:
        writer = StatusWriter(body, memory, send=lambda _: None, post=(posted if posted is not None else []).append,
                              error_interval=600.0, requested_at_key=f"{DOMAIN}/requested-at")
        result = writer.conclude(apply_pass(body, memory, env, writer))
        body["status"] = memory.status = result.status
        if result.delay != 0.0:
            return result


def applied_data(fake: FakeReconciler) -> list[str]:
    """The ConfigMap data each apply() was given."""
    return [objects[0]["data"]["k"] for objects in fake.objects]


def scripted(fake: FakeReconciler) -> None:
    fake.objects = []  # type: ignore[attr-defined]
    apply = fake.apply

    def recording(inventory: Any, objects: list[dict[str, Any]], *args: Any, **kwargs: Any) -> bool:
        fake.objects.append(objects)  # type: ignore[attr-defined]
        return apply(inventory, objects, *args, **kwargs)

    fake.apply = recording  # type: ignore[method-assign]


def test_a_revision_not_ready_in_time_is_rolled_back_and_never_applied_again(
        fake_reconciler: FakeReconciler) -> None:
    scripted(fake_reconciler)
    clock, history = Clock(), History()
    env = pass_environment(clock=clock)
    env.clients = TenantClients(history)  # type: ignore[arg-type]
    good = steady(ROLLBACK, timeout="30s")
    history.add(1, good["spec"], "Ready")
    body = changed(good, "w")
    history.add(2, body["spec"], "Processing")
    fake_reconciler.done = False
    fake_reconciler.report = CallReport("waiting", pending=((item_of(CONFIG), "InProgress"),))
    memory, posted = Memory(), []
    first = settle(body, memory, env, posted)
    assert outcome(first.status)[0] == "Processing" and applied_data(fake_reconciler) == ["w"]

    clock.advance(timedelta(seconds=31))
    failed = settle(body, memory, env, posted)  # applied, timed out, rolled back, then the restored spec is applied
    assert applied_data(fake_reconciler) == ["w", "w", "v"]
    assert failed.status["rolledBack"]["revision"] == 2 and failed.status["rolledBack"]["restores"] == 1
    assert failed.status["rolledBack"]["object"] == "ConfigMap web-config"
    assert applied_data(fake_reconciler)[-1] == "v"
    rolled = {c["type"]: c for c in failed.status["conditions"]}
    assert rolled["RolledBack"]["status"] == "True" and rolled["RolledBack"]["message"] == FAILED

    fake_reconciler.done = True
    fake_reconciler.report = CallReport("done")
    restored = settle(body, memory, env, posted)
    assert outcome(restored.status) == ("Error", "RolledBack", FAILED)
    assert restored.status["revision"] == 3  # the restore is a revision (history.py records restores: 1)

    # Later passes, and a fresh memory after a restart, apply revision 1's spec only.
    told = ready_event(body["status"])
    assert told is not None
    restarted = Memory(last_event=(told.type, told.reason, told.message))
    for fresh in (memory, restarted):  # the runtime seeds a fresh memory's last Event from the status
        clock.advance(timedelta(minutes=5))
        again = settle(body, fresh, env, posted)
        assert outcome(again.status) == ("Error", "RolledBack", FAILED)
    assert [(e.type, e.message) for e in posted if e.reason == "RolledBack"] == [("Warning", FAILED)]  # one Event
    assert applied_data(fake_reconciler)[2:] == ["v"] * (len(applied_data(fake_reconciler)) - 2)

    # A new spec is tried once.
    edited = changed(good, "x")
    edited["status"] = body["status"]
    tried = settle(edited, Memory(), env)
    assert outcome(tried.status) == ("Ready", "Ready", "Applied revision 4: 1 objects ready")
    assert "rolledBack" not in tried.status and applied_data(fake_reconciler)[-1] == "x"


NO_HISTORY = ('policy "undo": a rollback policy restores a recorded revision, and spec.revisionHistoryLimit is 0; '
              "set it to at least 2")


def test_a_rollback_policy_needs_a_revision_history(fake_reconciler: FakeReconciler) -> None:
    """Refused in the status (what is applied stays as it is: nothing is written) and at admission."""
    body = changed(steady(ROLLBACK, revisionHistoryLimit=0), "w")
    refused = settle(body, Memory(), pass_environment())
    assert outcome(refused.status) == ("Error", "TransformFailed", NO_HISTORY)
    assert fake_reconciler.calls == [] and refused.status["compactInventory"] == body["status"]["compactInventory"]
    validator, _ = _parts()
    assert refusal(validator, "CREATE", app(config_map("settings"), revisionHistoryLimit=0,
                                            policies=[ROLLBACK])) == NO_HISTORY
    assert refusal(validator, "CREATE", app(config_map("settings"), revisionHistoryLimit=2,
                                            policies=[ROLLBACK])) is None


def test_an_error_is_rolled_back_and_a_new_spec_that_fails_too_returns_to_the_restore(
        fake_reconciler: FakeReconciler) -> None:
    """An ``Error`` after the apply began (the API server refused an object) counts as a failure;
    the next spec is tried once and, failing, returns to the newest good revision: the restore."""
    scripted(fake_reconciler)
    history = History()
    env = pass_environment()
    env.clients = TenantClients(history)  # type: ignore[arg-type]
    good = steady(ROLLBACK)
    history.add(1, good["spec"], "Ready")
    body = changed(good, "w")
    fake_reconciler.error = ObjectValidationError("configmaps web-config is invalid: data: bad")
    memory = Memory()
    settle(body, memory, env)
    said = "Revision 2 failed: Configmaps web-config is invalid: data: bad; rolled back to revision 1"
    fake_reconciler.error = None
    restored = settle(body, memory, env)
    assert outcome(restored.status) == ("Error", "RolledBack", said)
    # the restore ran at once after the rollback, into the same scripted error; then it is applied
    assert applied_data(fake_reconciler) == ["w", "v", "v"] and restored.status["revision"] == 3
    history.add(2, body["spec"], "Error")  # as recorded: the failed one is no good revision
    history.revisions[2]["metadata"]["annotations"][f"{DOMAIN}/outcome-reason"] = "RolledBack"
    history.add(3, good["spec"], "Error")  # the restore: RolledBack, restoring 1
    history.revisions[3]["metadata"]["annotations"][f"{DOMAIN}/outcome-reason"] = "RolledBack"
    history.revisions[3]["data"]["restores"] = 1

    edited = changed(good, "x")
    edited["status"] = body["status"]
    fake_reconciler.error = ObjectValidationError("configmaps web-config is invalid: data: worse")
    settle(edited, memory, env)
    fake_reconciler.error = None
    again = settle(edited, memory, env)
    assert applied_data(fake_reconciler) == ["w", "v", "v", "x", "v", "v"]  # x tried once, then revision 3's spec
    assert again.status["rolledBack"]["revision"] == 4 and again.status["rolledBack"]["restores"] == 3
    assert outcome(again.status)[2] == (
        "Revision 4 failed: Configmaps web-config is invalid: data: worse; rolled back to revision 3")
