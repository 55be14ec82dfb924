"""Leader election on a ``coordination.k8s.io/v1`` Lease (docs/operator.md#leader-election).

The rules are client-go's ``leaderelection`` package, written for this operator: one Lease per
shard names its holder; the holder renews it every retry period; a standby takes it over only
once it has seen the same record unchanged for the record's lease duration, measured on its own
clock (never from the timestamps in the record, so clocks need not agree); every write carries
the ``resourceVersion`` it read, so of two instances that race only one wins.

What this module adds to client-go's rules, and why:

- **Leading is a time, not a flag.** ``Elector.leading()`` is true only until ``renewed_at +
  renew_deadline``, where ``renewed_at`` is when the last successful renewal *started*. A leader
  that is paused (SIGSTOP, a long GC, a frozen VM) stops leading by the clock the moment it
  resumes, before any thread of it has noticed; the operator's pass requests ask ``leading()``
  immediately before they go out (``fence.py``). A standby may start no earlier than
  ``lease_duration`` after it saw that renewal, which is later than the renewal started: the
  leader has stopped ``lease_duration - renew_deadline`` (5 s by default) before anyone else may
  start.
- **A leader that sees another holder has lost at once**, without waiting for its deadline.
- **A standby tries again at the moment the lease it watches expires**, not only every retry
  period, and a released Lease (no holder) is free at once, so a kill takes about one lease
  duration and a hand-over about one request.

This module is pure: the Lease API and both clocks are parameters (``LeaseApi``; the cluster's
one is ``leaseclient.py``), so the unit tests drive it on a fake clock. The loop that calls
``Elector.tick`` and the operator's reaction to losing the Lease live in ``leadership.py``.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from oam_operator.common.leasetimings import timing_problem
from oam_operator.reconciler.errors import ApiError

__all__ = [
    "Attempt",
    "Elector",
    "LeaseApi",
    "LeaseRecord",
    "LeaseTimings",
    "Role",
    "timing_problem",
]

#: The acquire retries of a standby are spread by up to this fraction of the retry period
#: (client-go's JitterFactor), so several standbys do not ask in lockstep.
JITTER = 0.2


@dataclass(frozen=True)
class LeaseTimings:
    """Seconds; client-go's and controller-runtime's defaults."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        problem = timing_problem(self.lease_duration, self.renew_deadline, self.retry_period)
        if problem is not None:
            raise ValueError(problem)

    @property
    def lease_duration_seconds(self) -> int:
        """What the record says: whole seconds, rounded up, so a standby never waits less than we assume."""
        return math.ceil(self.lease_duration)


def _micro_time(moment: datetime) -> str:
    """Kubernetes' ``MicroTime``: RFC 3339 with microseconds, UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaseRecord:
    """The spec of a Lease, as far as leader election reads it, and the version it was read at."""

    holder: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0
    resource_version: str = ""

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
            resource_version=str((lease.get("metadata") or {}).get("resourceVersion") or ""),
        )

    def content(self) -> tuple[object, ...]:
        """What must stay the same for the record to count as not renewed (not the version)."""
        return (self.holder, self.lease_duration_seconds, self.acquire_time, self.renew_time, self.transitions)

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"holderIdentity": self.holder, "leaseDurationSeconds": self.lease_duration_seconds,
                                "leaseTransitions": self.transitions}
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        return spec


class LeaseApi(Protocol):
    """The three calls on one Lease; failures raise ``ApiError`` (409: another write won)."""

    def get(self) -> dict[str, Any] | None:
        """The Lease, ``None`` when it does not exist."""

    def create(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Create the Lease with ``spec``."""

    def update(self, spec: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
        """Replace the Lease's spec, only if it is still at ``resource_version``."""


class Role(StrEnum):
    LEADER = "leader"
    STANDBY = "standby"
    LOST = "lost"  # led, and lost the Lease: reconciles nothing until ``stand_by`` (leadership.py)
    RELEASED = "released"  # gave the Lease up on shutdown


class Attempt(StrEnum):
    """The outcome of one ``Elector.attempt``."""

    ACQUIRED = "acquired"
    RENEWED = "renewed"
    HELD = "held"  # another instance holds a lease that has not expired
    FAILED = "failed"  # the API refused or did not answer; try again


class Elector:
    """The state of one instance in the election for one Lease; thread-safe.

    ``clock`` is monotonic seconds (leadership and expiry are measured on it), ``wall`` the
    time written into the record (for people and other tools to read; no decision uses it).
    """

    def __init__(self, api: LeaseApi, identity: str, timings: LeaseTimings, *,
                 clock: Callable[[], float], wall: Callable[[], datetime] = lambda: datetime.now(UTC),
                 jitter: Callable[[], float] = random.random,
                 predecessor: Callable[[str], bool] = lambda holder: False) -> None:
        self.api = api
        self.identity = identity
        self.predecessor = predecessor  # a holder that is a dead earlier run of this container (leadership.py)
        self.timings = timings
        self.clock = clock
        self.wall = wall
        self.jitter = jitter
        self.role = Role.STANDBY
        self.renewed_at: float | None = None  # when the last successful acquire or renew started
        self.observed: LeaseRecord | None = None
        self.observed_at = 0.0  # when ``observed`` was first seen with its content
        self.last_error: str | None = None
        self._lock = threading.RLock()  # the fields; never held during a request
        self._attempts = threading.Lock()  # one attempt (or release) at a time

    # -- what others ask ------------------------------------------------------------------------

    def leading(self, now: float | None = None) -> bool:
        """Whether this instance may reconcile now: it holds the Lease and its renew deadline has not passed."""
        with self._lock:
            if self.role is not Role.LEADER or self.renewed_at is None:
                return False
            return (self.clock() if now is None else now) < self.renewed_at + self.timings.renew_deadline

    def holder(self) -> str:
        """The holder last seen in the Lease (``""``: none, or not read yet)."""
        with self._lock:
            return self.observed.holder if self.observed is not None else ""

    def leader_alive(self, now: float | None = None) -> bool:
        """Whether some instance leads as far as this one can tell: it leads, or the Lease it last
        saw has a holder whose lease has not expired."""
        with self._lock:
            moment = self.clock() if now is None else now
            if self.leading(moment):
                return True
            record = self.observed
            return (record is not None and record.holder != "" and record.holder != self.identity
                    and not self.predecessor(record.holder)
                    and moment < self.observed_at + record.lease_duration_seconds)

    # -- observing ------------------------------------------------------------------------------

    def observe(self, lease: Mapping[str, Any] | None, now: float | None = None) -> LeaseRecord | None:
        """Take note of the Lease as read or watched; the expiry clock restarts when its content changed."""
        with self._lock:
            if lease is None:
                return None
            record = LeaseRecord.from_lease(lease)
            if self.observed is None or record.content() != self.observed.content():
                self.observed_at = self.clock() if now is None else now
            self.observed = record
            return record

    def _held_by_other(self, record: LeaseRecord, now: float) -> bool:
        return (record.holder != "" and record.holder != self.identity and not self.predecessor(record.holder)
                and now < self.observed_at + record.lease_duration_seconds)

    # -- one attempt ----------------------------------------------------------------------------

    def attempt(self) -> Attempt:
        """client-go's tryAcquireOrRenew: read the Lease, and take or renew it when this instance may.

        No lock is held while a request is out: ``leading()`` must answer at once, whatever the API
        server does. Attempts are serialised among themselves (the loop's and ``release``).
        """
        with self._attempts:
            started = self.clock()
            stamp = _micro_time(self.wall())
            try:
                lease = self.api.get()
                if lease is None:
                    fresh = LeaseRecord(self.identity, self.timings.lease_duration_seconds, stamp, stamp, 0)
                    return self._took(self.api.create(fresh.spec()), started)
                record = LeaseRecord.from_lease(lease)
                self.observe(lease, started)
                if self._held_by_other(record, started):
                    return Attempt.HELD
                ours = record.holder == self.identity
                wanted = replace(
                    record, holder=self.identity, lease_duration_seconds=self.timings.lease_duration_seconds,
                    renew_time=stamp, acquire_time=record.acquire_time if ours else stamp,
                    transitions=record.transitions if ours else record.transitions + 1,
                )
                return self._took(self.api.update(wanted.spec(), record.resource_version), started)
            except ApiError as error:
                with self._lock:
                    self.last_error = str(error)
                return Attempt.FAILED

    def _took(self, lease: Mapping[str, Any], started: float) -> Attempt:
        self.observe(lease, started)
        with self._lock:
            self.last_error = None
            if self.role is Role.LEADER:
                self.renewed_at = started
                return Attempt.RENEWED
            if self.role is Role.STANDBY:
                self.renewed_at = started
                self.role = Role.LEADER
            return Attempt.ACQUIRED  # also after release() or a loss: the role stays, nothing leads

    # -- the loop's step ------------------------------------------------------------------------

    def tick(self) -> tuple[Role, float]:
        """One step of the election loop: attempt if this instance may lead, decide whether it lost.

        Returns the role after the step and the seconds until the next step should run (the
        loop may run it earlier, for instance when a watch shows the Lease changed).
        """
        retry = self.timings.retry_period
        role = self._role()
        if role in (Role.LOST, Role.RELEASED):
            return role, math.inf
        if role is Role.LEADER:
            if not self.leading():
                return self._lose(), math.inf
            started = self.clock()
            outcome = self.attempt()
            if outcome is Attempt.HELD or not self.leading():
                return self._lose(), math.inf  # another holder, or the deadline passed while we asked
            return self._role(), max(0.0, started + retry - self.clock())
        outcome = self.attempt()
        if outcome is Attempt.ACQUIRED:
            return self._role(), retry
        delay = retry * (1 + JITTER * self.jitter())
        with self._lock:
            record, seen = self.observed, self.observed_at
        if outcome is Attempt.HELD and record is not None:
            expiry = seen + record.lease_duration_seconds - self.clock()
            delay = min(delay, max(0.0, expiry) + 0.01)
        return self._role(), delay

    def _role(self) -> Role:
        with self._lock:
            return self.role

    def _lose(self) -> Role:
        with self._lock:
            if self.role is Role.LEADER:
                self.role = Role.LOST
            return self.role

    def lose(self) -> Role:
        """Stop leading now (the watchdog saw the renew deadline pass); the role after."""
        return self._lose()

    def stand_by(self) -> bool:
        """After a loss, once the operator has stopped and forgotten (``leadership.py``): compete
        for the Lease again, as a standby that never led. True when the role was ``LOST``."""
        with self._lock:
            if self.role is not Role.LOST:
                return False
            self.role = Role.STANDBY
            self.renewed_at = None
            return True

    # -- giving up ------------------------------------------------------------------------------

    def release(self) -> bool:
        """Give the Lease up (shutdown, after the last pass ended): clear the holder so a standby
        may take it at once. Stops leading first, whatever the API answers. True when released."""
        with self._lock:
            was_leader = self.role is Role.LEADER
            if self.role is not Role.LOST:
                self.role = Role.RELEASED
        if not was_leader:
            return False
        with self._attempts:
            try:
                record = self.observe(self.api.get())
                if record is None or record.holder != self.identity:
                    return False
                stamp = _micro_time(self.wall())
                freed = replace(record, holder="", lease_duration_seconds=1, renew_time=stamp, acquire_time=stamp)
                self.observe(self.api.update(freed.spec(), record.resource_version))
                return True
            except ApiError as error:
                with self._lock:
                    self.last_error = str(error)
                return False
