"""The Lease elector on a fake clock (docs/operator.md#leader-election): acquire, renew, expiry
takeover, a lost renew deadline, release, and the refused lease settings."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from oam_operator.controller.service.leaderelection import Attempt, Elector, LeaseTimings, Role, timing_problem
from oam_operator.reconciler.errors import TransientApiError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return T0 + timedelta(seconds=self.now)


class FakeLeases:
    """One Lease with the API server's optimistic concurrency: an update must name the current version."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.down = False
        self.writes: list[str] = []  # holder of every successful write

    def _check(self) -> None:
        if self.down:
            raise TransientApiError("connection error: refused", status=0, reason="ConnectionError", verb="get")

    def _store(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.lease = {"metadata": {"name": "oam-operator", "resourceVersion": str(self.version)}, "spec": dict(spec)}
        self.writes.append(str(spec.get("holderIdentity")))
        return copy.deepcopy(self.lease)


class LeaseView:
    """One instance's ``LeaseApi`` onto the shared ``FakeLeases``."""

    def __init__(self, store: FakeLeases) -> None:
        self.store = store
        self.down = False

    def _check(self) -> None:
        if self.down or self.store.down:
            raise TransientApiError("connection error: refused", status=0, reason="ConnectionError", verb="get")

    def get(self) -> dict[str, Any] | None:
        self._check()
        return copy.deepcopy(self.store.lease)

    def create(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        self._check()
        if self.store.lease is not None:
            raise TransientApiError("409 Conflict: already exists", status=409, reason="AlreadyExists", verb="create")
        return self.store._store(spec)

    def update(self, spec: Mapping[str, Any], resource_version: str) -> dict[str, Any]:
        self._check()
        assert self.store.lease is not None
        if resource_version != self.store.lease["metadata"]["resourceVersion"]:
            raise TransientApiError("409 Conflict: the object has been modified", status=409, reason="Conflict",
                                    verb="update")
        return self.store._store(spec)


def elector(store: FakeLeases, clock: FakeClock, name: str, timings: LeaseTimings | None = None) -> Elector:
    return Elector(LeaseView(store), name, timings or LeaseTimings(), clock=clock, wall=clock.wall,
                   jitter=lambda: 0.0)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> FakeLeases:
    return FakeLeases()


def test_the_first_instance_creates_the_lease_and_leads(store: FakeLeases, clock: FakeClock) -> None:
    a = elector(store, clock, "a")
    assert not a.leading()
    role, delay = a.tick()
    assert (role, delay) == (Role.LEADER, 2.0) and a.leading()
    assert store.lease is not None
    spec = store.lease["spec"]
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 0
    assert spec["acquireTime"] == spec["renewTime"] == "2026-01-01T00:16:40.000000Z"


def test_a_standby_waits_while_the_leader_renews(store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    role, delay = b.tick()
    assert role is Role.STANDBY and not b.leading() and b.holder() == "a" and b.leader_alive()
    assert delay == 2.0  # the retry period (no jitter here), sooner than the expiry 15 s away
    for _ in range(20):  # 40 s of renewals every 2 s: the standby never sees the same record for 15 s
        clock.now += 2.0
        assert a.tick()[0] is Role.LEADER
        assert b.tick()[0] is Role.STANDBY
    assert store.writes.count("b") == 0 and store.lease is not None
    assert store.lease["spec"]["acquireTime"] == "2026-01-01T00:16:40.000000Z"  # renewals keep it


def test_a_standby_takes_over_a_lease_not_renewed_for_its_duration(store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()  # sees a's record at t=1000
    clock.now += 14.9  # a is gone (kill -9): nothing renews
    role, delay = b.tick()
    assert role is Role.STANDBY and delay == pytest.approx(0.11)  # next try right at the expiry
    clock.now += delay
    role, _ = b.tick()
    assert role is Role.LEADER and b.leading()
    assert store.lease is not None
    assert store.lease["spec"]["holderIdentity"] == "b" and store.lease["spec"]["leaseTransitions"] == 1


def test_expiry_is_measured_from_when_the_standby_saw_the_record(store: FakeLeases, clock: FakeClock) -> None:
    """The record's renewTime is not trusted: a standby that first reads a stale-looking Lease still waits."""
    a = elector(store, clock, "a")
    a.tick()
    clock.now += 100  # the record's renewTime is 100 s old, but b has never seen it
    b = elector(store, clock, "b")
    assert b.tick()[0] is Role.STANDBY
    clock.now += 14.0
    assert b.tick()[0] is Role.STANDBY
    clock.now += 1.0
    assert b.tick()[0] is Role.LEADER


def test_a_leader_that_cannot_renew_stops_at_the_renew_deadline_before_anyone_may_start(
        store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()
    started = clock.now
    assert isinstance(a.api, LeaseView)
    a.api.down = True  # a's API server is unreachable; b's is not
    lost_at = None
    while clock.now < started + 30:
        clock.now += 0.5
        if lost_at is None and not a.leading():
            lost_at = clock.now
        if a._role() is Role.LEADER:
            a.tick()
        if b.tick()[0] is Role.LEADER:
            break
    assert lost_at == started + 10.0  # the renew deadline, by the clock: no tick needed
    assert a.tick()[0] is Role.LOST
    assert b.leading() and clock.now >= started + 15.0  # the standby only after the lease duration
    assert lost_at + 5.0 <= clock.now


def test_a_paused_leader_is_not_leading_the_moment_it_resumes(store: FakeLeases, clock: FakeClock) -> None:
    """SIGSTOP past the lease: the check is the clock, so no thread has to notice first."""
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()
    clock.now += 16.0  # a is stopped; b takes over
    assert b.tick()[0] is Role.LEADER
    assert not a.leading()  # a resumes: any request of its passes is refused from here on
    assert a.tick()[0] is Role.LOST
    assert store.writes == ["a", "b"]


def test_a_leader_that_sees_another_holder_has_lost_at_once(store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()
    clock.now += 16.0
    b.tick()
    a.renewed_at = clock.now  # as if a's own clock had not noticed the pause
    assert a.tick()[0] is Role.LOST and not a.leading()


def test_a_failed_renewal_is_retried_within_the_deadline(store: FakeLeases, clock: FakeClock) -> None:
    a = elector(store, clock, "a")
    a.tick()
    assert isinstance(a.api, LeaseView)
    a.api.down = True
    clock.now += 2.0
    assert a.tick()[0] is Role.LEADER and a.last_error is not None
    a.api.down = False
    clock.now += 2.0
    assert a.tick()[0] is Role.LEADER and a.last_error is None
    assert a.renewed_at == clock.now and a.leading(clock.now + 9.9) and not a.leading(clock.now + 10.0)


def test_two_standbys_racing_for_an_expired_lease_one_wins(store: FakeLeases, clock: FakeClock) -> None:
    a, b, c = (elector(store, clock, name) for name in "abc")
    a.tick()
    b.tick()
    c.tick()
    clock.now += 15.0
    view_b, view_c = LeaseView(store), LeaseView(store)
    stale = view_c.get()  # c read the Lease before b wrote it
    assert b.tick()[0] is Role.LEADER
    assert stale is not None
    with pytest.raises(TransientApiError) as error:
        view_c.update({"holderIdentity": "c"}, stale["metadata"]["resourceVersion"])
    assert error.value.status == 409
    assert c.tick()[0] is Role.STANDBY and c.holder() == "b"
    del view_b


def test_a_released_lease_is_free_at_once(store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()
    clock.now += 1.0
    assert a.release() is True and not a.leading() and a._role() is Role.RELEASED
    assert store.lease is not None
    assert store.lease["spec"]["holderIdentity"] == "" and store.lease["spec"]["leaseDurationSeconds"] == 1
    assert b.tick()[0] is Role.LEADER  # no wait for the lease duration
    assert a.tick() == (Role.RELEASED, math.inf)


def test_release_of_a_lease_someone_else_holds_writes_nothing(store: FakeLeases, clock: FakeClock) -> None:
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    assert elector(store, clock, "c").release() is False and store.writes == []  # never led
    a.tick()
    b.tick()
    clock.now += 16.0
    b.tick()
    writes = list(store.writes)
    assert a.release() is False and store.writes == writes


def test_an_unreachable_api_at_start_keeps_the_standby_trying(store: FakeLeases, clock: FakeClock) -> None:
    store.down = True
    a = elector(store, clock, "a")
    assert a.tick() == (Role.STANDBY, 2.0) and a.last_error == "connection error: refused"
    assert not a.leader_alive()


def test_timings_round_the_recorded_duration_up() -> None:
    assert LeaseTimings(4.5, 3, 1).lease_duration_seconds == 5


@pytest.mark.parametrize(("timings", "message"), [
    ((10, 10, 2), "renew deadline (10s) must be less than lease duration (10s): the leader stops reconciling at "
                  "the renew deadline, and another instance may take the Lease over only after the lease duration"),
    ((15, 20, 2), "renew deadline (20s) must be less than lease duration (15s): "),
    ((15, 10, 10), "retry period (10s) must be less than renew deadline (10s): the leader renews every retry "
                   "period and must be able to retry before the renew deadline"),
    ((0.5, 0.2, 0.1), "lease duration (0.5s) must be at least 1s (a Lease counts whole seconds)"),
    ((15, 0, 0), "renew deadline must be more than 0s"),
])
def test_lease_settings_that_cannot_work_are_refused_with_the_rule(
        timings: tuple[float, float, float], message: str) -> None:
    problem = timing_problem(*timings)
    assert problem is not None and problem.startswith(message)
    with pytest.raises(ValueError, match="must be"):
        LeaseTimings(*timings)
    assert timing_problem(15, 10, 2) is None
    assert Attempt.FAILED.value == "failed"


def test_a_lost_leader_stands_by_and_takes_the_lease_again_only_once_free(store: FakeLeases,
                                                                          clock: FakeClock) -> None:
    """Standing by again after a loss (leadership.py): the same identity competes as a standby
    that never led, waits for the other holder's lease like any standby, and leads afresh."""
    a, b = elector(store, clock, "a"), elector(store, clock, "b")
    a.tick()
    b.tick()
    clock.now += 16.0
    b.tick()
    assert a.tick()[0] is Role.LOST
    assert a.stand_by() is True and a.role is Role.STANDBY and a.renewed_at is None
    assert a.stand_by() is False  # only from LOST
    assert a.tick()[0] is Role.STANDBY and not a.leading()  # b's lease has not expired
    assert isinstance(b.api, LeaseView)
    b.api.down = True  # b is cut off: a takes over after b's lease duration, as any standby would
    while clock.now < 1100 and a.tick()[0] is not Role.LEADER:
        clock.now += 0.5
    assert a.leading() and store.writes[-1] == "a"
    assert not b.leading()
