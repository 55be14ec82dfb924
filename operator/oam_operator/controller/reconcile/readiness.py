"""Readiness wake-ups: a pass waiting for a workload runs again when the workload is ready
(docs/operator.md#readiness-wake-ups).

A pass that ends waiting for a Deployment would otherwise come back after the Processing
backoff (50 ms, 100 ms, … then every second): most of those passes find it still progressing,
and each costs the reads of every object of the wave (with 1,000 Applications, a third of all
requests). Instead the watches of owned objects (``ownedwatch.py``) stream the changes of
the objects the operator wrote; an event whose object the status analyzer no longer finds
``InProgress`` (or a deletion) wakes the Application whose owner annotation it carries
(``no_longer_progressing``). A pass whose every pending object is either of a watched kind or
of a kind that is Ready as soon as it is read (``INSTANT``) then waits up to ``WATCHED_WAIT``
for that wake-up instead of the backoff. The workload kinds (``WATCHED``) are watched from the
start (with ConfigMaps, runtime.py ``STARTED``); other kinds once an Application uses them.

The watch decides *when* the Application's pass runs again; that pass reads its objects from
the same watch (docs/operator.md#reads-from-the-watch), and writes with the Application's own
identity. Where the operator may not watch a kind (403: one
outside the chart's ``leastPrivilege`` reads) that kind stays unwatched and passes waiting for
it keep the backoff; while a watch is down, its kind counts as unwatched too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.reconciler.identity import split_api_version
from oam_operator.reconciler.status import DefaultStatusAnalyzer, StatusAnalysisError, always_ready_kinds

from .watched import WatchedKind

__all__ = ["INSTANT", "WATCHED", "WATCHED_WAIT", "no_longer_progressing", "waits_for_wake_up"]

#: The workload kinds whose readiness a controller reports some time after they are written.
WATCHED = (
    WatchedKind("apps", "v1", "deployments", "Deployment"),
    WatchedKind("apps", "v1", "statefulsets", "StatefulSet"),
    WatchedKind("apps", "v1", "daemonsets", "DaemonSet"),
    WatchedKind("batch", "v1", "jobs", "Job"),
)

#: (group, kind) the status analyzer reports Current whenever they exist
#: (docs/reconciler.md#kstatus-rules): a pending one is Ready at the next read, so it needs no wake-up.
INSTANT = always_ready_kinds()

#: The longest a pass waiting only for watched objects sleeps without a wake-up: the bound on
#: the delay when an event is missed (a watch reconnecting), not the usual one.
WATCHED_WAIT = 5.0



def waits_for_wake_up(pending: Iterable[tuple[str, str]], watched: Callable[[str, str], bool]) -> bool:
    """Whether a pass pending on objects of these (group, kind) may wait for a wake-up: at
    least one that is not Ready as soon as it is read is pending, and every such one is watched
    (a watched ConfigMap gives no wake-up: its events are no news, ``no_longer_progressing``)."""
    any_watched = False
    for group, kind in pending:
        if (group, kind) in INSTANT:
            continue
        if not watched(group, kind):
            return False
        any_watched = True
    return any_watched


def no_longer_progressing(obj: Mapping[str, Any], deleted: bool, analyzer: DefaultStatusAnalyzer) -> bool:
    """Whether an event's object is no longer progressing: ready, failed or gone. A change of a
    kind that is Ready whenever it exists (``INSTANT``: a ConfigMap just created) is no news for
    a waiting pass, which finds it Ready at its next read anyway: only its deletion wakes."""
    if deleted:
        return True
    if (split_api_version(str(obj.get("apiVersion") or ""))[0], str(obj.get("kind") or "")) in INSTANT:
        return False
    try:
        return analyzer.compute(obj).status != ObjectStatus.IN_PROGRESS.value
    except StatusAnalysisError:
        return True  # the pass reports it
