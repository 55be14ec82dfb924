"""``Runtime.stand_down`` (docs/operator.md#leader-election): after a lost Lease the operator
waits for its running passes, forgets each Application's memory, and reads an Application
afresh before its next pass."""

from __future__ import annotations

import threading
import time
from typing import Any

from oam_operator.controller.runtime import Runtime
from oam_operator.controller.seams import Memory
from oam_operator.controller.settings import Settings
from oam_operator.reconciler.errors import TransientApiError


class Reads:
    """The API server's copy of one Application; counts the reads."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.reads: list[str] = []
        self.down = False

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.reads.append(path)
        if self.down:
            raise TransientApiError("connection refused", status=0, reason="ConnectionError", verb=verb)
        return self.body


def application(uid: str, state: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": "web", "uid": uid, "generation": 2},
            "status": {"state": state}}


def runtime(reads: Reads) -> Runtime:
    return Runtime(Settings(cluster_id="c"), reads, None)  # type: ignore[arg-type]


def test_stand_down_waits_for_the_running_pass_then_forgets_every_memory() -> None:
    instance = runtime(Reads(application("u1", "Ready")))
    instance.memory["u1"] = Memory(status={"state": "Processing"})
    with instance._passing:
        instance._running = 1  # a pass in a worker thread, its requests refused by the fence

    def pass_ends() -> None:
        time.sleep(0.2)
        with instance._passing:
            instance._running -= 1
            instance._passing.notify_all()

    ending = threading.Thread(target=pass_ends)
    ending.start()
    instance.stand_down()
    assert instance._running == 0  # returned only once the pass had ended
    ending.join()
    assert instance.memory == {} and instance._reread == {"u1"}


def test_the_first_pass_after_standing_down_starts_from_the_api_servers_copy() -> None:
    server = Reads(application("u1", "Ready"))  # another leader's last write
    instance = runtime(server)
    instance._reread.add("u1")
    stale = application("u1", "Processing")  # kopf's copy, from before the loss
    assert instance._fresh("u1", stale) == server.body
    assert server.reads == ["/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications/web"]
    assert instance._fresh("u1", stale) is stale  # once: later passes use kopf's copy again
    assert len(server.reads) == 1


def test_a_failed_fresh_read_or_another_object_leaves_kopfs_copy_and_is_tried_again() -> None:
    server = Reads(application("u1", "Ready"))
    instance = runtime(server)
    instance._reread.add("u1")
    stale = application("u1", "Processing")
    server.down = True
    assert instance._fresh("u1", stale) is stale and instance._reread == {"u1"}  # the pass fails the same way
    server.down = False
    server.body = application("u2", "Ready")  # deleted and created again under the same name
    assert instance._fresh("u1", stale) is stale
    instance.forget("u1", "shop", "web")
    assert instance._reread == set()
