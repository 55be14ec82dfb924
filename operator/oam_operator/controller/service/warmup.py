"""What a process's first pass would load, loaded as the process starts (docs/operator.md#a-quiet-restart).

The first apply pass of a process compiled the health library's CEL rules (about 0.2 s) and made
the API discovery requests its objects' types need (``/api``, ``/apis``, then each
group-version), one after another under the discovery's lock. After a restart that pass is a
changed or new Application's, and it ran while the process was busiest — kopf handing on
thousands of listed Applications, the watches listing their objects — so those steps took a
second of its time, where a warm operator's whole pass takes 0.03 s. ``warm_up`` does them in a
thread of their own as the watches start: the same requests, made once, before a pass needs them.
A failure changes nothing; the pass that needs the type looks it up again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from oam_operator.reconciler.client import ClusterClient

from ..reconcile.health import library
from .ownedwatch import WatchedKind

__all__ = ["warm_up"]

log = logging.getLogger("oam_operator.controller")


def warm_up(client: ClusterClient, kinds: Iterable[WatchedKind]) -> threading.Thread:
    """Start loading the health library and the discovery of ``kinds`` in a daemon thread."""
    wanted = tuple(kinds)
    thread = threading.Thread(target=_load, args=(client, wanted), daemon=True, name="warm-up")
    thread.start()
    return thread


def _load(client: ClusterClient, kinds: tuple[WatchedKind, ...]) -> None:
    started = time.monotonic()
    library()
    for kind in kinds:
        try:
            client.resource_for(kind.api_version, kind.kind)
        except Exception as error:  # the pass that needs it looks it up again, and says what failed
            log.debug("warming up the discovery of %s failed: %s", kind.api_version, error)
    log.debug("warmed up", extra={"fields": {"seconds": round(time.monotonic() - started, 3)}})
