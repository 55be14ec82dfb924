"""What goes first after a start (docs/operator.md#a-quiet-restart): which Applications are settled
(``reconcile/application.py``), which wake-ups ask for a pass rather than only allow one
(``service/wakeups.py``), and the watches' first LISTs a settled Application's first pass waits for
(``service/ownedwatch.py``). The limiter's routine queue is tested in test_passlimiter.py; the
order of the LISTs and the first pass against a real API server in tests/e2e/test_drift_e2e.py; a
fleet's quiet restart in ``make bench`` (bench/bench_restart.py)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from oam_operator.controller.reconcile.application import listed_first, settled
from oam_operator.controller.service.ownedwatch import OwnedObjects, WatchedKind
from oam_operator.controller.service.wakeups import Wakeups
from tests.unit.unitkit import DaemonStopped

KEY = "oam-operator.dev/requested-at"
DEPLOYMENTS = WatchedKind("apps", "v1", "deployments", "Deployment")
CONFIGMAPS = WatchedKind("", "v1", "configmaps", "ConfigMap")


def application(ready: str | None = "True", generation: int = 3, observed: int | None = 3,
                requested: str | None = None, handled: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"observedGeneration": observed}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready}]
    if handled is not None:
        status["lastHandledReconcileAt"] = handled
    meta: dict[str, Any] = {"generation": generation, "finalizers": ["oam-operator.dev"]}
    if requested is not None:
        meta["annotations"] = {KEY: requested}
    return {"metadata": meta, "status": status}


@pytest.mark.parametrize(("body", "expected"), [
    (application(), True),
    (application(requested="t1", handled="t1"), True),
    (application(ready="False"), False),
    (application(ready="Unknown"), False),
    (application(ready=None), False),
    (application(generation=4), False),  # a new spec not yet observed
    (application(observed=None), False),
    (application(requested="t2", handled="t1"), False),  # a reconcile request not yet handled
    (application(requested="t1"), False),
    ({"metadata": {"generation": 1}}, False),  # new: no status at all
])
def test_settled_is_ready_with_the_current_generation_and_no_request_pending(body: dict[str, Any],
                                                                             expected: bool) -> None:
    assert settled(body, KEY) is expected
    assert listed_first(body, KEY) is not expected  # kopf gets what is not settled before the rest of a LIST


def test_an_application_being_deleted_is_listed_first_even_when_settled() -> None:
    going = application()
    going["metadata"]["deletionTimestamp"] = "2026-12-07T00:00:00Z"
    assert settled(going, KEY) and listed_first(going, KEY)


def test_a_new_terms_wake_up_allows_a_pass_but_asks_for_none() -> None:
    async def scenario() -> None:
        wakeups = Wakeups(asyncio.get_running_loop())
        quiet, changed, both = wakeups.event("quiet"), wakeups.event("changed"), wakeups.event("both")
        wakeups.wake("changed")
        wakeups.wake_all()
        assert quiet.is_set() and changed.is_set()
        assert (wakeups.asked("quiet"), wakeups.asked("changed")) == (False, True)
        wakeups.wake("both")  # asked after the new term's wake-up: asked
        assert both.is_set() and wakeups.asked("both")
        wakeups.clear("changed")
        assert not changed.is_set() and not wakeups.asked("changed")
        wakeups.clear("quiet")
        wakeups.wake("quiet")
        assert wakeups.asked("quiet")
        assert not wakeups.asked("never-seen")
        wakeups.forget("both")
        assert not wakeups.asked("both")

    asyncio.run(scenario())


def test_the_first_lists_are_awaited_for_every_kind_and_scope_a_refusal_included() -> None:
    owned = OwnedObjects(None, domain="oam-operator.dev", cluster_id="cluster-1",  # type: ignore[arg-type]
                         namespaces=("shop", "bank"), on_change=lambda *_: None)
    assert owned.wait_listed(0.0)  # nothing watched: nothing to wait for
    owned._register(DEPLOYMENTS)
    owned._register(CONFIGMAPS)
    assert not owned.wait_listed(0.01)
    owned._mark(DEPLOYMENTS, "shop", True, "synced")
    owned._mark(DEPLOYMENTS, "bank", False, "forbidden")  # refused: nothing more will come of it
    owned._mark(CONFIGMAPS, "shop", False, "down")  # failed before its LIST completed: not listed
    owned._mark(CONFIGMAPS, "bank", True, "synced")
    assert not owned.wait_listed(0.01)
    done: list[bool] = []
    waiter = threading.Thread(target=lambda: done.append(owned.wait_listed(10.0)))
    waiter.start()
    time.sleep(0.05)
    assert done == []
    owned._mark(CONFIGMAPS, "shop", True, "synced")
    waiter.join(5)
    assert done == [True]
    owned._mark(CONFIGMAPS, "shop", False, "down")  # a later relist: once listed stays listed
    assert owned.wait_listed(0.0)


def test_stopping_the_watches_ends_a_wait_for_their_lists() -> None:
    owned = OwnedObjects(None, domain="oam-operator.dev", cluster_id="cluster-1",  # type: ignore[arg-type]
                         namespaces=(), on_change=lambda *_: None)
    owned._register(DEPLOYMENTS)
    done: list[bool] = []
    waiter = threading.Thread(target=lambda: done.append(owned.wait_listed(10.0)))
    waiter.start()
    time.sleep(0.05)
    owned.stop()
    waiter.join(5)
    assert done == [True] and not waiter.is_alive()


class _Runtime:
    """Records each pass: whose, whether the watches had listed by then, whether its slot was routine."""

    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.memory: dict[str, Any] = {}
        self.passes: list[tuple[str, bool, int]] = []
        self.routine: dict[str, bool] = {}  # whether each one's pass was routine (quiet.py may skip it)

    def run_apply(self, uid: str, body: dict[str, Any], _fields: Any, routine: bool = False) -> Any:
        limiter = self.controller.scheduler.limiter
        self.passes.append((uid, self.controller.listed.is_set(), limiter.waiting_routine))
        self.routine[uid] = routine
        return type("Result", (), {"gone": True, "delay": 0.0})()  # one pass, then the loop ends


def _loop_of(controller: Any) -> Any:
    import kopf

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.handlers import register

    registry = kopf.OperatorRegistry()
    register(registry, controller, Settings(cluster_id="c"))
    (daemon,) = [h for h in registry._spawning.get_all_handlers() if str(h.id).endswith("application_loop")]
    return daemon.fn


def _controller() -> tuple[Any, _Runtime, Any, Wakeups]:
    """A controller of the loop's collaborators (on the running event loop), its recording
    runtime, the loop function, and its wake-ups."""
    from types import SimpleNamespace

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.scheduler import Scheduler
    from oam_operator.reconciler.accounting import RequestAccounting

    wakeups = Wakeups(asyncio.get_running_loop())
    controller = SimpleNamespace(wakeups=wakeups, leadership=None, led=asyncio.Event(), listed=asyncio.Event(),
                                 leading=lambda: True)
    controller.scheduler = Scheduler(Settings(cluster_id="c"), wakeups, metrics=None, accounting=RequestAccounting())
    controller.runtime = runtime = _Runtime(controller)
    return controller, runtime, _loop_of(controller), wakeups


def test_a_settled_applications_first_pass_waits_for_the_lists_and_a_changed_one_does_not() -> None:
    async def scenario() -> None:
        controller, runtime, loop, wakeups = _controller()

        def run(uid: str, body: dict[str, Any]) -> asyncio.Task[None]:
            meta = {"namespace": "shop", "name": uid, **body["metadata"]}
            return asyncio.create_task(loop(stopped=DaemonStopped(), body={**body, "metadata": meta}, meta=meta, uid=uid,
                                            namespace="shop"))

        quiet = run("quiet", application())
        changed = run("changed", application(generation=4))
        new = run("new", {"metadata": {"generation": 1, "finalizers": ["oam-operator.dev"]}})
        await asyncio.wait_for(asyncio.gather(changed, new), 5)
        assert sorted(runtime.passes) == [("changed", False, 0), ("new", False, 0)]  # neither waited
        await asyncio.sleep(0.05)
        assert not quiet.done()  # the settled one waits for the lists
        controller.listed.set()
        await asyncio.wait_for(quiet, 5)
        assert runtime.passes[-1] == ("quiet", True, 0)

        controller.listed.clear()  # a settled one asked for a pass (a drift's wake-up) goes at once
        asked = run("asked", application())
        await asyncio.sleep(0)
        wakeups.wake("asked")
        await asyncio.wait_for(asked, 5)
        assert runtime.passes[-1] == ("asked", False, 0)
        assert runtime.routine == {"changed": False, "new": False, "quiet": True, "asked": False}

    asyncio.run(scenario())


def test_a_new_or_changed_applications_loop_starts_at_once_and_a_settled_ones_within_two_seconds() -> None:
    """kopf's initial delay spreads the start of 10,000 settled loops; a new or changed
    Application's loop does not wait for it (docs/operator.md#a-quiet-restart)."""
    from types import SimpleNamespace

    import kopf

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.handlers import register

    registry = kopf.OperatorRegistry()
    register(registry, SimpleNamespace(), Settings(cluster_id="c"))  # type: ignore[arg-type]
    (daemon,) = [h for h in registry._spawning.get_all_handlers() if str(h.id).endswith("application_loop")]
    delay = daemon.initial_delay
    assert callable(delay)
    assert delay(body=application(generation=4)) == 0.0  # changed: generation 4 not observed
    assert delay(body={"metadata": {"generation": 1}}) == 0.0  # new: no status yet
    settled_delays = [delay(body=application()) for _ in range(50)]
    assert all(0.0 <= value <= 2.0 for value in settled_delays) and len(set(settled_delays)) > 1


def test_a_first_pass_waits_for_kopfs_finalizer_until_its_event_and_at_most_two_seconds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """kopf starts the loop and patches its finalizer in the same cycle; a first pass at once
    would make that patch fail its resourceVersion test (docs/operator.md#a-quiet-restart)."""
    from oam_operator.controller.service import handlers

    monkeypatch.setattr(handlers, "FINALIZER_WAIT", 0.3)

    async def scenario() -> None:
        _, runtime, loop, wakeups = _controller()
        meta: dict[str, Any] = {"namespace": "shop", "name": "new", "generation": 1}
        wakeups.wake("new")  # the ADDED event woke it before the loop started
        task = asyncio.create_task(loop(stopped=DaemonStopped(), body={"metadata": meta}, meta=meta, uid="new",
                                        namespace="shop"))
        await asyncio.sleep(0.1)
        assert runtime.passes == []  # no finalizer yet: it waits (the earlier wake-up does not end the wait)
        meta["finalizers"] = ["oam-operator.dev"]  # kopf's patch came back as an event ...
        wakeups.wake("new")  # ... which wakes the loop
        await asyncio.wait_for(task, 1)
        assert [uid for uid, _, _ in runtime.passes] == ["new"]

        alone: dict[str, Any] = {"namespace": "shop", "name": "alone", "generation": 1}
        started = asyncio.get_running_loop().time()
        await asyncio.wait_for(loop(stopped=DaemonStopped(), body={"metadata": alone}, meta=alone, uid="alone",
                                    namespace="shop"), 2)
        assert asyncio.get_running_loop().time() - started >= 0.3  # no event: it went after the bound
        assert [uid for uid, _, _ in runtime.passes] == ["new", "alone"]

    asyncio.run(scenario())


def _kopf_adds_the_finalizer(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """kopf's patch of the Application "new" answers with the finalizer added (the loop's wait
    is 5 s); the answer, which the tests hand to ``kopftuning.observed_patch``."""
    from oam_operator.controller.service import handlers, kopftuning

    monkeypatch.setattr(handlers, "FINALIZER_WAIT", 5.0)
    answered: dict[str, Any] = {"metadata": {"namespace": "shop", "name": "new", "uid": "new",
                                             "finalizers": ["oam-operator.dev"], "resourceVersion": "91"}}

    async def kopfs_patch(**_: Any) -> Any:
        return answered, None

    monkeypatch.setattr(kopftuning, "_KOPFS_PATCH", kopfs_patch)
    return answered


def test_a_first_pass_goes_on_when_kopfs_finalizer_patch_is_answered_before_its_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At a start kopf's watch delivers the finalizer's event only after its whole LIST (10 s at
    10,000): the patch's answer, seen through ``kopftuning.observed_patch``, ends the wait."""
    from types import SimpleNamespace

    from oam_operator.controller.service import kopftuning

    answered = _kopf_adds_the_finalizer(monkeypatch)

    async def scenario() -> None:
        _, runtime, loop, _ = _controller()
        meta: dict[str, Any] = {"namespace": "shop", "name": "new", "generation": 1}
        started = asyncio.get_running_loop().time()
        task = asyncio.create_task(loop(stopped=DaemonStopped(), body={"metadata": meta}, meta=meta, uid="new",
                                        namespace="shop"))
        await asyncio.sleep(0.1)
        assert runtime.passes == []
        resource = SimpleNamespace(group="oam-operator.dev", plural="applications")
        other = SimpleNamespace(group="apps", plural="deployments")
        assert await kopftuning.observed_patch(resource=other, patch={}) == (answered, None)  # not ours
        await asyncio.sleep(0.1)
        assert runtime.passes == []
        assert await kopftuning.observed_patch(resource=resource, patch={}) == (answered, None)
        await asyncio.wait_for(task, 1)
        assert [uid for uid, _, _ in runtime.passes] == ["new"]
        assert "finalizers" not in meta and asyncio.get_running_loop().time() - started < 2  # no event came

    asyncio.run(scenario())


def test_a_finalizer_patch_answered_while_the_first_pass_runs_asks_for_no_second_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The finalizer's event can reach kopf's body before the patch's answer: the first pass then
    runs at once, and the answer, coming during it, must not wake the loop for another."""
    import threading
    from types import SimpleNamespace

    from oam_operator.controller.service import kopftuning

    answered = _kopf_adds_the_finalizer(monkeypatch)
    in_pass, answer_seen = threading.Event(), threading.Event()

    class _Holding(_Runtime):
        def run_apply(self, uid: str, body: dict[str, Any], _fields: Any, routine: bool = False) -> Any:
            self.passes.append((uid, True, 0))
            in_pass.set()
            answer_seen.wait(5)
            return type("Result", (), {"gone": False, "delay": 30.0})()  # the next pass in 30 s

    async def scenario() -> None:
        controller, _, loop, _ = _controller()
        controller.runtime = runtime = _Holding(controller)
        meta: dict[str, Any] = {"namespace": "shop", "name": "new", "generation": 1,
                                "finalizers": ["oam-operator.dev"]}  # the event came first
        stopped = DaemonStopped()
        task = asyncio.create_task(loop(stopped=stopped, body={"metadata": meta}, meta=meta, uid="new",
                                        namespace="shop"))
        assert await asyncio.get_running_loop().run_in_executor(None, in_pass.wait, 5)
        resource = SimpleNamespace(group="oam-operator.dev", plural="applications")
        assert await kopftuning.observed_patch(resource=resource, patch={}) == (answered, None)
        answer_seen.set()
        await asyncio.sleep(0.3)
        assert [uid for uid, _, _ in runtime.passes] == ["new"]  # no second pass for the answer
        stopped.event.set()
        await asyncio.wait_for(task, 2)

    asyncio.run(scenario())
