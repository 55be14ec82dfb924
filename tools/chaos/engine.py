"""The fault engine: two leader-elected instances (``b`` behind a proxy that can cut it off), a
fleet of Applications, a seeded plan of faults run against them, then convergence and the
invariants (docs/chaos.md).

Faults that last (a SIGSTOP, a cut, a killed instance) are undone by a follow-up action a few
seconds later; the run's last fault ends when the last of those ran, and convergence is measured
from there.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .audit import AuditLog
from .fleet import AppModel, Fleet
from .instances import SHORT_LEASE, Instance, launch
from .invariants import Violation, foreign_uid_writes, leftovers, orphans, resurrections, unbound_status_writes
from .plane import ChaosPlane
from .proxy import Blackhole
from .schedule import Fault, plan

__all__ = ["Outcome", "Run", "RunConfig"]

TICK = 0.5
RSS_EVERY = 5.0
CHECK_EVERY = 2.0  # seconds between convergence checks once the faults are over


@dataclass(frozen=True)
class RunConfig:
    seed: int
    duration: float  # seconds of faults
    apps: int
    log_dir: Path
    configmaps: int = 3
    deployments: bool = False  # a Deployment in every third Application (the full profile's controllers)
    app_gap: float = 3.0
    process_gap: float = 25.0
    converge_bound: float = 180.0
    lease: tuple[str, ...] = SHORT_LEASE


@dataclass
class Outcome:
    config: RunConfig
    faults: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    violations: list[Violation] = field(default_factory=list)
    convergence: float | None = None  # seconds from the last fault's end to all converged
    drift: list[float] = field(default_factory=list)  # hand edit -> corrected, seconds
    superseded_edits: int = 0
    rss: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)  # error log lines by message
    writes: int = 0  # successful writes by the instances (audit)
    refused: int = 0  # writes of a gone incarnation's uid that the API server refused (the uid test)
    timeline: list[str] = field(default_factory=list)
    wall: float = 0.0

    def violations_of(self, invariant: str) -> list[Violation]:
        return [v for v in self.violations if v.invariant == invariant]

    def drift_quantiles(self) -> tuple[float, float] | None:
        """p50 and p90 of the drift latencies by nearest rank: each is a latency that happened."""
        if not self.drift:
            return None
        ordered = sorted(self.drift)
        return ordered[math.ceil(0.5 * len(ordered)) - 1], ordered[math.ceil(0.9 * len(ordered)) - 1]


def message_kind(message: str) -> str:
    """A log message without what varies between lines of one kind (the API server's address, a
    URL's query, an object's name), cut at 120 characters."""
    message = re.sub(r"https?://[^/\s]+", "", message)
    message = re.sub(r"\?\S*", "", message)
    message = re.sub(r"\bapp-\d+(-i\d+-[a-z0-9]+)?", "app-…", message)
    return message[:120]


@dataclass
class _Edit:
    app: str
    incarnation: int
    revision: int
    kind: str
    name: str
    at: float


class Run:
    """One run in ``namespace`` of ``plane``; ``execute`` does it all and returns the ``Outcome``."""

    def __init__(self, plane: ChaosPlane, namespace: str, config: RunConfig, say: Callable[[str], None] = print
                 ) -> None:
        from kubernetes import client

        self.plane = plane
        self.namespace = namespace
        self.config = config
        self.say = say
        self.rng = random.Random(config.seed)
        self.fleet = Fleet(plane.api, namespace, config.apps, config.configmaps, config.deployments)
        self.audit = AuditLog(plane.audit_log, namespace)
        self.coordination: Any = client.CoordinationV1Api(plane.api)
        self.proxy = Blackhole(plane.handle.server)
        self.proxied = self.proxy.kubeconfig(plane.handle.kubeconfig, config.log_dir / "through-proxy.kubeconfig")
        self.slots: dict[str, Instance] = {}
        self.every_instance: list[Instance] = []
        self.generation: Counter[str] = Counter()
        self.pending: list[tuple[float, str, Callable[[], None]]] = []
        self.edits: list[_Edit] = []
        self.replacing: set[str] = set()
        self.outcome = Outcome(config)
        self.began = time.monotonic()
        self.last_fault = self.began  # when the last fault, or the last undoing of one, ended

    # -- the run ---------------------------------------------------------------------------------

    def execute(self) -> Outcome:
        started = time.monotonic()
        try:
            self._setup()
            self._inject(plan(self.config.seed, self.config.duration, self.config.app_gap, self.config.process_gap))
            self._settle()
            self._check()
        finally:
            for instance in self.every_instance:
                instance.stop()
            self.proxy.close()
            self.outcome.errors = self._error_lines()
            self.outcome.rss = {i.name: i.rss for i in self.every_instance}
            self.outcome.wall = time.monotonic() - started
        return self.outcome

    def _setup(self) -> None:
        from kubernetes import client

        core: Any = client.CoreV1Api(self.plane.api)
        core.create_namespace({"metadata": {"name": self.namespace}})
        self._launch("a")
        self._wait(lambda: self._leader() is not None, 60, "the first instance to lead")
        self._launch("b")
        for app in self.fleet.apps.values():
            self.fleet.create(app)
        self._wait(lambda: not self._not_converged(), self.config.converge_bound, "the fleet to be Ready")
        self.note(f"{len(self.fleet.apps)} Applications Ready under {self._leader()}")
        self.began = time.monotonic()

    def _inject(self, faults: list[Fault]) -> None:
        next_rss = 0.0
        for fault in faults:
            while (now := time.monotonic() - self.began) < fault.at:
                self._tick()
                if now >= next_rss:
                    self._sample_rss()
                    next_rss = now + RSS_EVERY
                time.sleep(min(TICK, max(0.0, fault.at - now)))
            self._run(fault)
        next_check = 0.0
        while (now := time.monotonic() - self.began) < self.config.duration:
            self._tick()
            if now >= next_rss:
                self._sample_rss()
                next_rss = now + RSS_EVERY
            if not self.pending and not self.replacing and now >= next_check:
                # the plan's quiet end: convergence counts from the last fault, not from here
                if not self._not_converged():
                    self.outcome.convergence = time.monotonic() - self.last_fault
                    self.note(f"converged {self.outcome.convergence:.1f} s after the last fault")
                    break
                next_check = now + CHECK_EVERY
            time.sleep(TICK)
        self._sample_rss()

    def _settle(self) -> None:
        """Undo what still lasts (resume, reconnect, restart), then wait for convergence."""
        while self.pending:  # reconnect and resume first: a restarted b needs its proxy open
            due = min(self.pending, key=lambda p: (p[1].startswith("restart"), p[0]))
            self.pending.remove(due)
            self.note(f"at the end: {due[1]}")
            due[2]()
            self.last_fault = time.monotonic()
        deadline = time.monotonic() + self.config.converge_bound
        while self.replacing and time.monotonic() < deadline:  # a replacement's old uid still going
            self._tick()
            time.sleep(TICK)
        if self.outcome.convergence is not None and not self.pending:
            self._last_corrections()
            return
        last = self.last_fault
        self.note("faults over; waiting for convergence")
        deadline = last + self.config.converge_bound
        while (left := self._not_converged()) and time.monotonic() < deadline:
            self._tick()
            self._sample_rss()
            time.sleep(1.0)
        if left:
            self.outcome.violations.append(Violation(
                "not-converged", f"{len(left)} not converged {self.config.converge_bound:.0f} s after the last "
                                 f"fault: {'; '.join(left[:5])}"))
        else:
            self.outcome.convergence = time.monotonic() - last
            self.note(f"converged {self.outcome.convergence:.1f} s after the last fault")
        self._last_corrections()

    def _last_corrections(self) -> None:
        """A few seconds more for the hand edits' last corrections to be seen."""
        for _ in range(int(10 / TICK)):
            if not self.edits:
                break
            self._tick()
            time.sleep(TICK)

    def _check(self) -> None:
        events = self.audit.refresh()
        self.outcome.writes = sum(1 for e in events if e.is_write and e.succeeded and e.writer is not None)
        gone = {str(uid) for app in self.fleet.apps.values() for _, uid, _ in app.past}
        self.outcome.refused = sum(1 for e in events if e.writer is not None and e.resource == "applications"
                                   and not e.succeeded and e.uid_sent() in gone)
        self.outcome.violations += orphans(self.fleet)
        self.outcome.violations += leftovers(self.fleet)
        self.outcome.violations += resurrections(self.fleet.apps, events)
        self.outcome.violations += foreign_uid_writes(self.fleet.uids, events)
        self.outcome.violations += unbound_status_writes(events)
        for edit in self.edits:
            self.outcome.violations.append(Violation(
                "hand-edit-not-corrected", f"{edit.kind} {edit.name} of {edit.app}, edited "
                                           f"{time.monotonic() - edit.at:.0f} s ago, still differs from its spec"))

    # -- faults ----------------------------------------------------------------------------------

    def _run(self, fault: Fault) -> None:
        handler: dict[str, Callable[[], str | None]] = {
            "spec-edit": self._spec_edit, "hand-edit": self._hand_edit, "delete": self._delete,
            "recreate": self._recreate, "replace": self._replace, "kill-leader": self._kill_leader,
            "stop-leader": self._stop_leader, "cut": self._cut, "apiserver-restart": self._apiserver_restart,
            "etcd-restart": self._etcd_restart}
        done = handler[fault.kind]()
        if done is None:
            self.outcome.skipped[fault.kind] += 1
        else:
            self.outcome.faults[fault.kind] += 1
            self.last_fault = time.monotonic()
            self.note(f"{fault.kind}: {done}")

    def _existing(self) -> list[AppModel]:
        return [a for a in self.fleet.apps.values() if a.exists and a.name not in self.replacing]

    def _spec_edit(self) -> str | None:
        apps = self._existing()
        if not apps:
            return None
        app = self.rng.choice(apps)
        self.fleet.edit_spec(app)
        return f"{app.name} to revision {app.revision}"

    def _hand_edit(self) -> str | None:
        from kubernetes.client.exceptions import ApiException

        apps = self._existing()
        if not apps:
            return None
        app = self.rng.choice(apps)
        try:
            kind, name = self.fleet.hand_edit(app, self.rng)
        except ApiException as error:
            if error.status == 404:
                return None  # not created yet
            raise
        self.edits.append(_Edit(app.name, app.incarnation, app.revision, kind, name, time.monotonic()))
        return f"{kind} {name}"

    def _delete(self) -> str | None:
        apps = self._existing()
        if len(apps) <= len(self.fleet.apps) // 2:
            return None
        app = self.rng.choice(apps)
        self.fleet.delete(app)
        return app.name

    def _recreate(self) -> str | None:
        gone = [a for a in self.fleet.apps.values() if not a.exists and a.past and a.past[-1][2] is not None]
        if not gone:
            return None
        app = self.rng.choice(gone)
        self.fleet.create(app)
        return f"{app.name} (incarnation {app.incarnation})"

    def _replace(self) -> str | None:
        """Delete and create again as soon as the old one is gone: a namesake with a new uid."""
        apps = self._existing()
        if not apps:
            return None
        app = self.rng.choice(apps)
        self.fleet.delete(app)
        self.replacing.add(app.name)
        return app.name

    def _kill_leader(self) -> str | None:
        slot, leader = self._leading_instance()
        if leader is None or leader.paused:
            return None
        leader.kill()
        self._later(3.0, f"restart slot {slot}", lambda: self._restart(slot))
        return leader.name

    def _restart(self, slot: str) -> None:
        """A new instance in ``slot``; b's waits while its proxy is cut (it could not start)."""
        if slot == "b" and self.proxy.cut.is_set():
            self._later(2.0, f"restart slot {slot}", lambda: self._restart(slot))
            return
        self._launch(slot)

    def _stop_leader(self) -> str | None:
        _, leader = self._leading_instance()
        if leader is None or leader.paused:
            return None
        leader.pause()
        pause = self.rng.uniform(8, 14)  # past the 6 s lease: the other one takes over
        self._later(pause, f"SIGCONT {leader.name}", leader.resume)
        return f"{leader.name} for {pause:.1f} s"

    def _cut(self) -> str | None:
        if self.proxy.cut.is_set():
            return None
        self.proxy.cut.set()
        length = self.rng.uniform(10, 40)
        self._later(length, "reconnect b", self.proxy.cut.clear)
        return f"b for {length:.1f} s"

    def _apiserver_restart(self) -> str | None:
        self.plane.control.restart("kube-apiserver")
        return "kube-apiserver"

    def _etcd_restart(self) -> str | None:
        self.plane.control.restart("etcd")
        return "etcd"

    def _later(self, delay: float, what: str, action: Callable[[], None]) -> None:
        self.pending.append((time.monotonic() + delay, what, action))

    # -- bookkeeping -----------------------------------------------------------------------------

    def _tick(self) -> None:
        now = time.monotonic()
        for due in [p for p in self.pending if p[0] <= now]:
            self.pending.remove(due)
            self.note(due[1])
            due[2]()
            self.last_fault = time.monotonic()
        for app in self.fleet.apps.values():
            if not app.exists and app.past and app.past[-1][2] is None and self.fleet.gone(app.name):
                app.past[-1][2] = time.time()
                if app.name in self.replacing:
                    self.replacing.discard(app.name)
                    self.fleet.create(app)
                    self.last_fault = time.monotonic()
                    self.note(f"re-created {app.name} (incarnation {app.incarnation})")
        for edit in list(self.edits):
            app = self.fleet.apps[edit.app]
            wanted = app.desired().get((edit.kind, edit.name))
            if (not app.exists or app.incarnation != edit.incarnation or app.revision != edit.revision
                    or wanted is None):
                self.edits.remove(edit)
                self.outcome.superseded_edits += 1
            elif self.fleet.value_of(edit.kind, edit.name) == wanted:
                self.edits.remove(edit)
                self.outcome.drift.append(time.monotonic() - edit.at)

    def _not_converged(self) -> list[str]:
        """What keeps the fleet from its spec: one line per Application."""
        items = {str(a["metadata"]["name"]): a for a in self.fleet.applications()}
        labelled = self.fleet.labelled()
        left = []
        for app in self.fleet.apps.values():
            item = items.get(app.name)
            if not app.exists:
                if item is not None:
                    left.append(f"{app.name} still being deleted")
                continue
            if item is None or item["metadata"]["uid"] != app.uid:
                left.append(f"{app.name} (incarnation {app.incarnation}) not found")
                continue
            status = item.get("status") or {}
            ready: dict[str, Any] = next(
                (c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
            if ready.get("status") != "True" or status.get("observedGeneration") != item["metadata"]["generation"]:
                left.append(f"{app.name} {status.get('state')}/{ready.get('reason')}: {ready.get('message', '')[:80]}")
                continue
            wrong = sorted(n for key, v in app.desired().items() if labelled.get(key) != v for n in [key[1]])
            if wrong:
                left.append(f"{app.name} Ready but {', '.join(wrong[:3])} differ from the spec")
        return left

    def _leader(self) -> str | None:
        from kubernetes.client.exceptions import ApiException

        try:
            lease = self.coordination.read_namespaced_lease("oam-operator", self.namespace)
        except ApiException as error:
            if error.status == 404:
                return None
            raise
        holder = str(lease.spec.holder_identity or "")
        return holder.split("_", 1)[0] or None

    def _leading_instance(self) -> tuple[str, Instance | None]:
        try:
            name = self._leader()
        except Exception:
            return "", None
        for slot, instance in self.slots.items():
            if instance.name == name and instance.alive():
                return slot, instance
        return "", None

    def _launch(self, slot: str) -> None:
        self.generation[slot] += 1
        name = f"{slot}{self.generation[slot]}"
        kubeconfig = self.proxied if slot == "b" else self.plane.handle.kubeconfig
        instance = launch(name, kubeconfig, self.namespace, self.config.log_dir, self.config.lease)
        self.slots[slot] = instance
        self.every_instance.append(instance)
        self.note(f"started {name}" + (" (through the proxy)" if slot == "b" else ""))

    def _sample_rss(self) -> None:
        for instance in self.slots.values():
            if instance.alive():
                instance.sample_rss()

    def _error_lines(self) -> Counter[str]:
        lines: Counter[str] = Counter()
        for instance in self.every_instance:
            for entry in instance.logs():
                if str(entry.get("level", "")).lower() in ("error", "critical"):
                    lines[message_kind(str(entry.get("msg", "")))] += 1
        return lines

    def _wait(self, predicate: Callable[[], Any], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
            self._sample_rss()
            time.sleep(TICK)

    def note(self, line: str) -> None:
        stamp = f"{time.monotonic() - self.began:7.1f}s"
        self.outcome.timeline.append(f"{stamp} {line}")
        self.say(f"[chaos] {stamp} {line}")
