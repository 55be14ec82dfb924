"""Skipping a routine pass that cannot find anything (docs/operator.md#quiet-routine-passes).

A settled Application's routine pass (nobody asked for it: its reapply interval's, a new term's)
reads everything it compares from the watches of owned objects, and any change of what it read
would have woken it instead. Such a pass finds nothing, yet at 10,000 Applications on a
10-minute interval a thousand of them a minute cost 10 % of a core (issue 43). So it is skipped
when the last full pass in this process *confirmed* the Application and nothing it depends on
can have changed unseen since:

- that pass ended ``ready`` on the operator's own cluster, corrected no drift and sent the
  reconciler no request (every object it compared came from a watch), and its transform read no
  URL source and no chart (outside the cluster: no event tells of their changes);
- it had no topology, health checks, hooks, held revision, closed change window or restore
  (their reads are not all the watches'), and no drift reported, held back or lately corrected
  (those passes' timers are their own);
- the generation is the one it saw, and the watches of owned objects have not been down since
  (``epoch``): a relist tells the owners of what changed, but a pass is what looks;
- it is younger than ``FULL_PASS_EVERY`` of the Application's intervals (a full pass still runs
  that often, whatever the watches say), and no object's reapply interval has come due since
  (``--reapply-interval``: that pass re-applies it).

Anything else — a change, a request, a wake-up by a watch, a new process — runs a full pass.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FULL_PASS_EVERY", "Confirmed", "FullReason", "refusal"]

#: A routine pass is skipped for at most this many of the Application's intervals in a row.
FULL_PASS_EVERY = 6


@dataclass(frozen=True)
class Confirmed:
    """What a full pass that confirmed the Application leaves for its routine passes."""

    generation: int
    epoch: int  # the watches' epoch it read from (ownedwatch.OwnedObjects.epoch)
    until: float  # monotonic seconds: when a full pass is due whatever happens (PassResult.confirms)
    delay: float  # its delay until the next pass (the interval, jittered)


class FullReason:
    """Why a routine pass ran in full: the label of ``oam_operator_routine_full_passes_total``, a
    bounded set. The first eight say why the last full pass confirmed nothing (``_Pass.confirms``),
    the last three why its confirmation no longer holds (``refusal``)."""

    FIRST = "first-pass"  # no full pass in this process yet (a start, a new term)
    NOT_READY = "not-ready"  # it did not end Ready
    DRIFT = "drift"  # drift was reported, held back or corrected
    REQUESTS = "requests"  # it sent the reconciler a request: not everything came from a watch
    OUTSIDE = "outside-reads"  # its transform read a URL source or a chart
    POLICIES = "policies"  # topology, health checks, hooks, a held revision, a change window, a restore
    REAPPLY = "reapply-due"  # an object's reapply interval is due
    UNWRITTEN = "unwritten"  # the status it ended with was not written (yet)
    GENERATION = "generation"  # the generation changed since
    RELISTED = "relisted"  # a watch of owned objects went down since
    DUE = "due"  # its full pass is due (FULL_PASS_EVERY intervals)


def refusal(confirmed: Confirmed | None, *, generation: int, epoch: int, now: float) -> str | None:
    """Why a routine pass of the Application may not be skipped now (a ``FullReason``), ``None`` when
    it may (see the module's rules); without a confirmation the caller knows why."""
    if confirmed is None:
        return FullReason.FIRST
    if confirmed.generation != generation:
        return FullReason.GENERATION
    if confirmed.epoch != epoch:
        return FullReason.RELISTED
    return None if now < confirmed.until else FullReason.DUE
