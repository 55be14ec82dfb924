"""Whether kopf has listed a resource once (docs/multicluster.md#refusals).

The operator's own ClusterProfiles reach a pass through kopf's events (``profile_event``). At a
start kopf lists them while the first passes already run: a pass that looked a profile up before
kopf's LIST of them ended found none, refused the Application (``ClusterProfile <p> not found``)
and halted a fleet's rollout, which then reverted the clusters it had reached. So a pass waits,
once, until kopf's first LIST of them ended (shown through ``kopftuning.observe_lists``);
``wait`` returns at once after that, and at once where nobody ``expect``-ed such a LIST (tests,
tools). A LIST that does not end within ``timeout`` is given up on once, with a warning, and the
passes go on with what the events brought.

The end of kopf's LIST is not the end of its handlers: kopf hands the listed objects to its
workers, which run ``profile_event`` a moment later (a suite run saw the pass win that race too).
So each listed object is given to ``on_item`` as its page comes, before the LIST is called done;
kopf's event with the same object later changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["ListedOnce"]

log = logging.getLogger("oam_operator.controller")


class ListedOnce:
    """kopf's first LIST of one resource, waited for by the passes; thread-safe."""

    def __init__(self, what: str, timeout: float, on_item: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.what = what
        self.timeout = timeout
        self.on_item = on_item
        self._done = threading.Event()
        self._expected = False

    def expect(self) -> None:
        """kopf will list the resource (its LISTs are shown to ``pages``): ``wait`` waits for it."""
        self._expected = True

    def pages(self, namespace: str | None, selector: str) -> ListedOnce | None:
        """``kopftuning.ListObserver``: this, to be told when a LIST of kopf's ended."""
        return None if self._done.is_set() else self

    def page(self, items: Sequence[Mapping[str, Any]]) -> None:
        """Each object to ``on_item`` now, not when kopf's handler gets to it."""
        if self.on_item is not None:
            for item in items:
                self.on_item(item)

    def done(self, list_version: Any) -> None:
        self._done.set()

    def wait(self) -> None:
        """Return once kopf listed the resource, or at once when that is not expected or was given up on."""
        if not self._expected or self._done.is_set():
            return
        if not self._done.wait(self.timeout):
            log.warning("kopf did not list the %s within %s s; passes go on with what its events brought",
                        self.what, self.timeout)
            self._done.set()
