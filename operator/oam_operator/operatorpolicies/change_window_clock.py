"""When change windows are open: pure arithmetic on a clock the caller passes in
(docs/operator.md#change-windows).

One owner's windows (:class:`Windows`) are open at an instant when an allow window is open, or it
has none, and no deny window is open — Argo CD's rule for sync windows. Windows of several
owners (a ClusterProfile's and an Application's) are :class:`ChangeWindows`: open only when every
owner's are, so an Application's windows can only narrow its profile's (:func:`combine`).

A window opened by a start ``s`` is open on ``[s, s + duration)``: a window that closes at the
instant another opens leaves no gap. Starts are cronsim's, read on the zone's clock: a schedule
with a fixed minute and hour that falls in the hour skipped in spring opens when the gap ends,
one in the hour repeated in autumn opens once, at its first occurrence (Debian's cron); a
schedule whose minute or hour field starts with ``*`` follows elapsed time (no start in the
skipped hour, two in the repeated one). A duration is elapsed time, whatever the clock does.

:func:`next_opening` searches :data:`HORIZON` ahead and looks at :data:`BUDGET` starts at most
(a deny window open from every minute for a minute would otherwise cost a year of minutes);
``None`` means none found before :attr:`Closed.searched_until`, which the message then names.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cronsim import CronSim

from .change_window import Window, Windows

STATE = "Waiting"
REASON = "ChangeWindowClosed"
#: How far :func:`next_opening` looks ahead: a year and a day, so a yearly window is always found.
HORIZON = timedelta(days=366)
#: How many window starts one search looks at, at most (about 0.2 s of cronsim on this project's machines).
BUDGET = 20_000


@dataclass(frozen=True)
class ChangeWindows:
    """The windows of each owner that has some, in order: the ClusterProfile's, then the Application's."""

    owners: tuple[Windows, ...] = ()

    @property
    def corrects_drift_while_closed(self) -> bool:
        """Drift is corrected while closed unless an owner says ``driftWhileClosed: Report``."""
        return all(owner.drift_while_closed == "Correct" for owner in self.owners)


def combine(profile: Windows | None, application: Windows | None) -> ChangeWindows:
    """Both owners' windows apply: a change lands only when the profile's *and* the Application's
    windows let it, so the Application's can only narrow the profile's."""
    return ChangeWindows(tuple(owner for owner in (profile, application) if owner is not None))


@dataclass(frozen=True)
class Closed:
    """Why no change may land at ``now``, and when one may next."""

    blocking: str  # ``deny window "…" for 2h (Europe/Berlin) of policy "p"`` or ``outside the allow windows of …``
    opens_at: datetime | None  # UTC; ``None``: no opening found before ``searched_until``
    searched_until: datetime  # UTC

    @property
    def wake_at(self) -> datetime:
        """When to look again: the opening, else where the search stopped (a pass then searches again)."""
        return self.opens_at or self.searched_until

    @property
    def message(self) -> str:
        """The Ready message of ``Waiting``/``ChangeWindowClosed``."""
        if self.opens_at is None:
            return f"Change window closed with no opening before {rfc3339(self.searched_until)}: {self.blocking}"
        return f"Change window closed until {rfc3339(self.opens_at)}: {self.blocking}"


def rfc3339(instant: datetime) -> str:
    """``2027-03-28T01:00:00Z``: UTC, whole seconds (window starts are on whole minutes)."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Exhausted(Exception):
    """The search looked at :data:`BUDGET` starts."""


class _Search:
    """The starts of windows, counted against :data:`BUDGET`.

    Telling whether a window is open at one instant takes a few starts whatever the windows, so
    that is never cut short (``strict`` off); following a deny window through its openings, and
    each later instant of :func:`next_opening`'s walk (``strict`` on), stop when the budget is spent."""

    def __init__(self, budget: int = BUDGET) -> None:
        self.left = budget
        self.strict = False

    def starts_after(self, window: Window, after: datetime, *, budgeted: bool) -> Iterator[datetime]:
        """The window's starts later than ``after``, in UTC and in order.

        cronsim reads a fixed-time schedule on the naive wall clock, so from an instant in the
        repeated autumn hour it may first name the earlier occurrence: those are skipped."""
        starts = CronSim(window.schedule, after.astimezone(window.zone))
        while True:
            if budgeted and self.left <= 0:
                raise _Exhausted
            self.left -= 1
            try:
                instant = next(starts).astimezone(UTC)
            except StopIteration:  # cronsim found no start within 50 years
                return
            if instant > after:
                yield instant

    def opened_by(self, window: Window, now: datetime) -> datetime | None:
        """The first start whose window is open at ``now`` (``now - duration < start <= now``)."""
        for start in self.starts_after(window, now - window.length, budgeted=self.strict):
            return start if start <= now else None
        return None

    def open_until(self, window: Window, start: datetime) -> datetime:
        """When the window opened at ``start`` closes, the openings it runs into included; when the
        budget runs out first, a time it is open until at least."""
        end = start + window.length
        try:
            for later in self.starts_after(window, start, budgeted=True):
                if later > end:
                    break
                end = max(end, later + window.length)
        except _Exhausted:
            pass
        return end

    def next_start(self, windows: Sequence[Window], after: datetime) -> datetime | None:
        """The earliest start of any of ``windows`` later than ``after``."""
        found = [start for window in windows
                 for start in itertools.islice(self.starts_after(window, after, budgeted=self.strict), 1)]
        return min(found) if found else None


@dataclass(frozen=True)
class _Verdict:
    """What holds at one instant: open, or the reason and the earliest instant worth looking again."""

    blocking: str = ""
    retry_at: datetime | None = None

    @property
    def open(self) -> bool:
        return not self.blocking


def _verdict(windows: ChangeWindows, now: datetime, search: _Search, *, until: bool = True) -> _Verdict:
    """Open at ``now``, or why not: the deny window that stays open longest (nothing can open before
    it closes), else the first owner none of whose allow windows is open (until its next start).
    Without ``until`` only whether it is open counts (no ``retry_at``)."""
    longest: tuple[datetime, str] | None = None
    for owner in windows.owners:
        for window in owner.denies:
            start = search.opened_by(window, now)
            if start is not None:
                if not until:
                    return _Verdict(f"{window.describe()} of {owner.owner}")
                ends = search.open_until(window, start)
                if longest is None or ends > longest[0]:
                    longest = (ends, f"{window.describe()} of {owner.owner}")
    if longest is not None:
        return _Verdict(longest[1], longest[0])
    outside: list[tuple[Windows, datetime | None]] = []
    for owner in windows.owners:
        allows = owner.allows
        if allows and not any(search.opened_by(window, now) is not None for window in allows):
            if not until:
                return _Verdict(f"outside the allow windows of {owner.owner}")
            outside.append((owner, search.next_start(allows, now)))
    if not outside:
        return _Verdict()
    starts = [start for _, start in outside]
    retry = None if None in starts else max(start for start in starts if start is not None)
    return _Verdict(f"outside the allow windows of {outside[0][0].owner}", retry)


def _as_windows(windows: ChangeWindows | Windows) -> ChangeWindows:
    return windows if isinstance(windows, ChangeWindows) else ChangeWindows((windows,))


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    return now.astimezone(UTC)


def is_open(windows: ChangeWindows | Windows, now: datetime) -> bool:
    """Whether a change may land at ``now``."""
    return _verdict(_as_windows(windows), _utc(now), _Search(), until=False).open


def closed(windows: ChangeWindows | Windows, now: datetime) -> Closed | None:
    """``None`` when a change may land at ``now``; else why not and the next opening."""
    all_windows, now = _as_windows(windows), _utc(now)
    search = _Search()
    first = _verdict(all_windows, now, search)
    if first.open:
        return None
    search.strict = True
    opens_at, searched_until = _walk(all_windows, now, first, search)
    return Closed(first.blocking, opens_at, searched_until)


def next_opening(windows: ChangeWindows | Windows, now: datetime) -> datetime | None:
    """The first instant at or after ``now`` a change may land (in UTC): ``now`` itself while open,
    ``None`` when none is found within :data:`HORIZON` (or :data:`BUDGET`)."""
    found = closed(windows, now)
    return _utc(now) if found is None else found.opens_at


def _walk(windows: ChangeWindows, now: datetime, verdict: _Verdict,
          search: _Search) -> tuple[datetime | None, datetime]:
    """From one reason to be closed to the next, each time to the earliest instant it can end: the
    first instant found open, or ``None`` and how far the search got."""
    horizon = now + HORIZON
    at = now
    while not verdict.open:
        if verdict.retry_at is None or verdict.retry_at > horizon:
            return None, horizon
        if search.left <= 0:
            return None, verdict.retry_at
        at = verdict.retry_at
        try:
            verdict = _verdict(windows, at, search)
        except _Exhausted:
            return None, at
    return at, at
