"""The operator's side of leader election (docs/operator.md#leader-election): the fence refuses a
pass request before it is sent, and the process learns of a lost Lease without the election loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from kubernetes.client import ApiClient, Configuration
from test_leaderelection import FakeLeases, LeaseView

from oam_operator.controller.service.fence import NOT_LEADER, FencedRateLimiter
from oam_operator.controller.service.leaderelection import Attempt, Elector, LeaseTimings, Role
from oam_operator.controller.service.leadership import Leadership, identity, predecessor_of
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import TransientApiError
from oam_operator.reconciler.ratelimit import RateLimiter
from tests.unit.unitkit import DaemonStopped


def test_a_fenced_request_is_refused_before_it_is_sent() -> None:
    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"  # nothing listens: a request that went out would fail differently
    leading = [False]
    limiter = FencedRateLimiter(RateLimiter(0, 1), fence=lambda: leading[0])
    client = ClusterClient(ApiClient(configuration), rate_limiter=limiter)
    derived = client.impersonating("system:serviceaccount:team:deployer")  # a tenant's client: same fence
    for each in (client, derived):
        with pytest.raises(TransientApiError) as refused:
            each.request("update", "PUT", "/api/v1/namespaces/team/configmaps/web", body={})
        assert str(refused.value) == NOT_LEADER and refused.value.reason == "NotLeader" and refused.value.retryable
    assert client.accounting.total == 0  # nothing was counted as sent
    leading[0] = True
    with pytest.raises(TransientApiError) as failed:
        client.request("get", "GET", "/api/v1/namespaces")
    assert failed.value.reason == "ConnectionError"  # now it went out
    client.close()


def test_the_fence_keeps_the_inner_buckets_rates() -> None:
    inner = RateLimiter(50, 100)
    fenced = FencedRateLimiter(inner)
    fenced.configure(0.0, 100)  # the flow control turning the bucket off
    assert inner.qps == 0.0 and fenced.qps == 0.0 and fenced.burst == 100
    assert fenced.acquire() == 0.0 and fenced.acquire_idle() == 0.0


def test_the_holder_identity_is_the_pod_name_and_a_random_suffix() -> None:
    first, second = identity({"POD_NAME": "oam-operator-7d9f-x2"}), identity({"POD_NAME": "oam-operator-7d9f-x2"})
    assert first.startswith("oam-operator-7d9f-x2_") and len(first) == len("oam-operator-7d9f-x2_") + 8
    assert first != second
    assert identity({"HOSTNAME": "host-a"}).startswith("host-a_")


POD = {"POD_NAME": "oam-operator-7d9f-x2", "POD_UID": "4f1c2b9e-0d7a-4c55-9a51-2b8f0c6d1e3a"}


def test_a_restarted_container_takes_its_dead_predecessors_lease_at_once() -> None:
    """Issue 43: a crash or an OOM kill cost the lease duration (15 s) before the restarted
    container led; an earlier run of the same container of the same Pod is dead (the kubelet
    restarts a container only once it exited), so its Lease is taken at once."""
    own = identity(POD)
    assert own.startswith("oam-operator-7d9f-x2_4f1c2b9e-0d7a-4c55-9a51-2b8f0c6d1e3a_")
    predecessor = predecessor_of(own, POD)
    assert predecessor(identity(POD))  # the run before this one, in the same Pod
    assert not predecessor(own)
    assert not predecessor(identity({**POD, "POD_UID": "another-pod-uid"}))  # a Pod replaced, or another replica
    assert not predecessor(identity({"POD_NAME": "oam-operator-7d9f-x2"}))  # a holder without a UID
    store = FakeLeases()
    elector = Elector(LeaseView(store), identity(POD), LeaseTimings(15, 10, 2), clock=time.monotonic)
    assert elector.attempt() is Attempt.ACQUIRED  # the run that crashed
    restarted = Elector(LeaseView(store), own, LeaseTimings(15, 10, 2), clock=time.monotonic, predecessor=predecessor)
    assert not restarted.leader_alive()
    assert restarted.attempt() is Attempt.ACQUIRED and restarted.leading()
    replica = identity({**POD, "POD_UID": "another-pod-uid"})
    standby = Elector(LeaseView(store), replica, LeaseTimings(15, 10, 2), clock=time.monotonic,
                      predecessor=predecessor_of(replica, {**POD, "POD_UID": "another-pod-uid"}))
    assert standby.attempt() is Attempt.HELD  # another Pod waits for the lease to expire, as before


def test_outside_a_pod_nothing_is_a_predecessor() -> None:
    """One host may run several processes with the same host name: none may take another's Lease."""
    own = identity({"HOSTNAME": "host_a"})
    assert not predecessor_of(own, {"HOSTNAME": "host_a"})(identity({"HOSTNAME": "host_a"}))
    pod_named = identity({"POD_NAME": "oam-operator-7d9f-x2"})
    assert not predecessor_of(pod_named, {"POD_NAME": "oam-operator-7d9f-x2"})(identity(
        {"POD_NAME": "oam-operator-7d9f-x2"}))


def test_a_leader_cut_off_from_the_api_server_is_told_at_its_renew_deadline() -> None:
    """Real threads, short timings: the watchdog ends leadership although every request hangs."""
    store = FakeLeases()
    view = LeaseView(store)
    elector = Elector(view, "a", LeaseTimings(2, 1, 0.2), clock=time.monotonic)
    lost = threading.Event()
    roles: list[bool] = []
    leadership = Leadership(elector, "ns/oam-operator", on_lost=lost.set, on_role=roles.append)
    leadership.start()
    deadline = time.monotonic() + 5
    while not leadership.leading() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert leadership.leading() and leadership.describe()["role"] == "leader"
    hang = threading.Event()
    original = view.get

    def stuck() -> object:  # the API server stops answering: a request hangs far past the deadline
        hang.wait(30)
        return original()

    view.get = stuck  # type: ignore[method-assign]
    cut = time.monotonic()
    assert lost.wait(5)
    took = time.monotonic() - cut
    assert not leadership.leading() and roles[-1] is False
    assert took <= 1.0 + 0.3  # the renew deadline (1 s) after the last renewal, plus the watchdog's period
    hang.set()


def test_a_leader_that_lost_the_lease_stops_forgets_and_leads_again_in_the_same_process() -> None:
    """Real threads: the loss is handled once (``on_lost``, the operator's stop-and-forget), the
    election stands by meanwhile, and leads again once the API server answers: no exit."""
    store = FakeLeases()
    view = LeaseView(store)
    # A renew deadline of 2 s at 8 retries: a loaded machine does not lose the Lease a second time.
    elector = Elector(view, "a", LeaseTimings(4, 2, 0.25), clock=time.monotonic)
    forgetting = threading.Event()
    release_forget = threading.Event()
    lost: list[bool] = []
    acquired: list[float] = []

    def on_lost() -> None:  # the operator's stand_down: waits for its passes, here for the test
        lost.append(leadership.leading())
        forgetting.set()
        release_forget.wait(5)

    leadership = Leadership(elector, "ns/oam-operator", on_lost=on_lost)
    leadership.on_leading(lambda: acquired.append(time.monotonic()))
    leadership.start()
    deadline = time.monotonic() + 5
    while not acquired and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(acquired) == 1
    view.down = True  # every Lease request fails from now on
    assert forgetting.wait(10)
    store.down = False
    view.down = False  # the API server is back while the operator still forgets
    time.sleep(0.5)
    assert not leadership.leading() and len(acquired) == 1  # never leads before the forgetting ended
    assert leadership.describe()["role"] == "lost"
    release_forget.set()
    deadline = time.monotonic() + 5
    while len(acquired) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(acquired) == 2 and leadership.leading()  # the same Lease, by the same process
    assert lost == [False] and leadership.losses == 1
    assert leadership.describe()["role"] == "leader" and leadership.describe()["losses"] == 1
    leadership.release()


def test_a_loss_seen_late_by_a_second_thread_does_not_end_a_fresh_leadership() -> None:
    """The watchdog and the election loop may both see one loss; the second to handle it finds
    the instance leading afresh (the first stood by and acquired again) and leaves that alone."""
    clock = [1000.0]
    elector = Elector(LeaseView(FakeLeases()), "a", LeaseTimings(4, 2, 0.25), clock=lambda: clock[0])
    lost: list[bool] = []
    leadership = Leadership(elector, "ns/oam-operator", on_lost=lambda: lost.append(True))
    elector.tick()
    leadership._publish()  # led
    clock[0] += 3  # past the renew deadline: both threads see the loss
    leadership._lose()  # the first handles it
    assert lost == [True] and elector.stand_by()
    elector.tick()
    leadership._publish()  # leads afresh
    leadership._lose()  # the second thread, late
    assert lost == [True] and leadership.leading() and leadership.losses == 1


def test_the_first_round_ends_after_the_listeners_of_a_first_acquisition_ran() -> None:
    """The start waits for it before kopf's watches begin (controller.py): a process that leads
    from its start has its new term (freshview.py) before kopf lists anything."""
    store = FakeLeases()
    elector = Elector(LeaseView(store), "a", LeaseTimings(2, 1, 0.2), clock=time.monotonic)
    leadership = Leadership(elector, "ns/oam-operator", on_lost=lambda: None)
    called: list[bool] = []
    leadership.on_leading(lambda: (time.sleep(0.2), called.append(True)))
    assert leadership.first_round(0.05) is False  # not started
    leadership.start()
    assert leadership.first_round(5) is True
    assert called == [True] and leadership.leading()
    leadership.release()


def test_the_first_round_of_a_standby_ends_too() -> None:
    store = FakeLeases()
    held = Elector(LeaseView(store), "b", LeaseTimings(30, 20, 2), clock=time.monotonic)
    held.tick()  # another instance holds the Lease
    elector = Elector(LeaseView(store), "a", LeaseTimings(30, 20, 2), clock=time.monotonic)
    leadership = Leadership(elector, "ns/oam-operator", on_lost=lambda: None)
    leadership.start()
    assert leadership.first_round(5) is True
    assert not leadership.leading() and leadership.describe()["role"] == "standby"
    leadership.release()


def test_release_on_shutdown_clears_the_holder() -> None:
    store = FakeLeases()
    elector = Elector(LeaseView(store), "a", LeaseTimings(2, 1, 0.2), clock=time.monotonic)
    leadership = Leadership(elector, "ns/oam-operator", on_lost=lambda: None)
    leadership.start()
    deadline = time.monotonic() + 5
    while not leadership.leading() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert leadership.release() is True
    assert store.lease is not None and store.lease["spec"]["holderIdentity"] == ""
    assert not leadership.leading() and elector.role is Role.RELEASED


class _Leading:
    def __init__(self) -> None:
        self.now = False

    def leading(self) -> bool:
        return self.now


def test_a_pass_waits_at_the_gate_until_the_instance_leads() -> None:
    from oam_operator.controller.service.handlers import _until_leading

    async def scenario() -> None:
        assert await _until_leading(None, asyncio.Event()) is True  # no leader election: at once
        leadership, led = _Leading(), asyncio.Event()
        waiting = asyncio.ensure_future(_until_leading(leadership, led, DaemonStopped()))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        assert not waiting.done()  # standing by
        leadership.now = True
        led.set()
        assert await asyncio.wait_for(waiting, 1) is True
        standby, stopped = _Leading(), DaemonStopped()
        waiting = asyncio.ensure_future(_until_leading(standby, asyncio.Event(), stopped))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        stopped.event.set()  # the daemon is stopped (shutdown, the Application moved): no pass
        assert await asyncio.wait_for(waiting, 2) is False

    asyncio.run(scenario())
