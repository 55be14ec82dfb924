"""``Runtime.stand_down`` (docs/operator.md#leader-election): after a lost Lease the operator
waits for its running passes, forgets each Application's memory, and begins a new term, whose
passes check kopf's copies against the API server (tests/unit/controller/test_freshview.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.runtime import Runtime
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
    assert instance.memory == {} and instance.fresh._term == 2  # a new term: copies are checked again
