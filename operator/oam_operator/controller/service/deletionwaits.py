"""A deletion that waits is no error (docs/operator.md#logging).

The deletion handler asks kopf to call it again by raising ``kopf.TemporaryError`` while objects
are still being deleted, or while the deletion is blocked (instances of an owned CRD, a
`deletion-policy`), and kopf logs every such retry at ERROR: dozens of error lines for a deletion
that went as it should. The operator drops kopf's line for its own deletion handler and says
instead what it waits for: at INFO while it progresses, at WARNING when it is blocked, once per
change of the blocking message (then INFO again until it changes).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from oam_operator.api.conditions import Reason

__all__ = ["DeletionWaits", "KopfRetryFilter"]

log = logging.getLogger("oam_operator.controller")


class KopfRetryFilter(logging.Filter):
    """Drops kopf's "failed temporarily" record of the handler function ``function``; keeps all
    others. kopf names a handler by its function's qualified name (``register.<locals>.
    application_deleted`` for one defined in ``register``), so the name is matched as its last part."""

    _HEAD, _TAIL = "Handler '", "' failed temporarily:"

    def __init__(self, function: str) -> None:
        super().__init__()
        self.function = function

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        end = message.find(self._TAIL)
        if not message.startswith(self._HEAD) or end < 0:
            return True
        name = message[len(self._HEAD):end]
        return not (name == self.function or name.endswith("." + self.function))


class DeletionWaits:
    """The log line of each deletion pass that did not finish, per Application."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def level(self, uid: str, reason: str, message: str) -> int:
        """WARNING for a blocked deletion whose message changed since the last one, else INFO."""
        with self._lock:
            changed = self._last.get(uid) != (reason, message)
            self._last[uid] = (reason, message)
        blocked = reason == Reason.DELETION_BLOCKED.value
        return logging.WARNING if blocked and changed else logging.INFO

    def say(self, uid: str, where: Mapping[str, Any], reason: str, message: str, retry_in: float) -> None:
        level = self.level(uid, reason, message)
        what = "deletion blocked" if reason == Reason.DELETION_BLOCKED.value else "deletion in progress"
        log.log(level, what, extra={"fields": {**where, "reason": reason, "message": message,
                                               "retry_in": round(retry_in, 3)}})

    def forget(self, uid: str) -> None:
        with self._lock:
            self._last.pop(uid, None)
