"""The ``change-window`` policy: when a new revision may land (docs/operator.md#change-windows).

``properties.windows`` lists windows, each ``kind`` (``allow`` or ``deny``), ``schedule`` (a
five-field cron expression: when the window opens), ``duration`` (how long it stays open, a Go
duration such as ``2h``) and ``timeZone`` (the IANA zone the schedule is read in; ``UTC`` by
default). ``driftWhileClosed`` says what happens to drift while the window is closed:
``Correct`` (the default: a hand edit is not a change, so it is corrected as ever) or ``Report``
(left and reported, as with ``spec.drift: Report``). One change-window policy per Application;
the value goes to ``extensions["oam-operator.dev/change-window"]``. A ClusterProfile's windows
are read by :func:`for_profile`, with the profile as their owner; when windows are open is
``change_window_clock.py``'s question.

The schedule is parsed and iterated by ``cronsim`` (PyPI), not by hand: it has no dependencies,
ships type hints, is maintained (healthchecks.io evaluates every cron check with it) and treats
daylight-saving changes as Debian's cron does, the rule the docs state. ``croniter``, the other
candidate, pulls in ``python-dateutil`` and ``pytz`` for what ``zoneinfo`` does in the standard
library. cronsim's error texts are its own (``Bad minute``); a refusal names the field in the
project's words (:data:`FIELDS`), so the message stays the same whatever the library says.
"""

from __future__ import annotations

import functools
import re
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from cronsim import CronSim, CronSimError

from oam_operator.common.durations import CRD_DURATION_PATTERN, parse_go_duration
from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.choices import closest, unknown_at
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map, record_once, required_list

TYPE = "change-window"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
KINDS = ("allow", "deny")
DRIFT_WHILE_CLOSED = ("Correct", "Report")
DEFAULT_TIME_ZONE = "UTC"
#: The five fields in order, each with the values it takes (lists ``1,3``, ranges ``1-5``,
#: steps ``*/15`` and ``*`` on top), as a refusal names them.
FIELDS = (
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31, L or LW"),
    ("month", "1-12 or JAN-DEC"),
    ("day-of-week", "0-7 or SUN-SAT, with L or #1-#5"),
)
#: cronsim's message for a bad field (``Bad minute``) -> the field's index in :data:`FIELDS`.
_LIBRARY_FIELDS = {"minute": 0, "hour": 1, "day-of-month": 2, "month": 3, "day-of-week": 4}
_DURATION = re.compile(CRD_DURATION_PATTERN)
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Window:
    """One window: from each time ``schedule`` names on the clock of ``time_zone``, open for ``duration``."""

    kind: str
    schedule: str
    duration: str
    time_zone: str = DEFAULT_TIME_ZONE

    @functools.cached_property
    def length(self) -> timedelta:
        return parse_go_duration(self.duration)

    @functools.cached_property
    def zone(self) -> tzinfo:
        """The zone's rules; ``UTC`` is the standard library's (no database needed)."""
        return UTC if self.time_zone == DEFAULT_TIME_ZONE else zoneinfo.ZoneInfo(self.time_zone)

    def describe(self) -> str:
        """``deny window "0 22 * * 5" for 2h (Europe/Berlin)``: how a status message names it."""
        return f"{self.kind} window {go_quote(self.schedule)} for {self.duration} ({self.time_zone})"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "schedule": self.schedule, "duration": self.duration, "timeZone": self.time_zone}


@dataclass(frozen=True)
class Windows:
    """The windows one owner sets: a change-window policy (``policy "freeze"``) or a ClusterProfile
    (``ClusterProfile "prod"``). ``owner`` is how a status message names it."""

    owner: str
    windows: tuple[Window, ...]
    drift_while_closed: str = "Correct"
    policy: str = ""  # the policy's name; "" for a ClusterProfile's windows

    @property
    def allows(self) -> tuple[Window, ...]:
        return tuple(w for w in self.windows if w.kind == "allow")

    @property
    def denies(self) -> tuple[Window, ...]:
        return tuple(w for w in self.windows if w.kind == "deny")

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "windows": [w.to_json() for w in self.windows],
                "driftWhileClosed": self.drift_while_closed}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Windows:
        return parse(str(raw["policy"]), dict(raw))


def _schema() -> Schema:
    window = PropertySchema(
        type="object", description="One window: when it opens, for how long, and whether it allows or denies.",
        properties={
            "kind": PropertySchema(type="string", required=True, enum=list(KINDS),
                                   description="allow (a change may land while it is open) or deny (no change "
                                   "lands while it is open)."),
            "schedule": PropertySchema(type="string", required=True,
                                       description="When the window opens: a five-field cron expression (minute "
                                       "hour day-of-month month day-of-week), such as 0 22 * * 5."),
            "duration": PropertySchema(type="string", required=True,
                                       description="How long the window stays open after each opening: a "
                                       "duration such as 30m, 2h or 1h30m."),
            "timeZone": PropertySchema(type="string", default=DEFAULT_TIME_ZONE,
                                       description="The IANA time zone the schedule is read in, such as "
                                       "Europe/Berlin; UTC when absent."),
        },
    )
    return {
        "windows": PropertySchema(type="array", required=True, items=window,
                                  description="The windows. A change lands when an allow window is open (or "
                                  "there is none) and no deny window is open."),
        "driftWhileClosed": PropertySchema(
            type="string", enum=list(DRIFT_WHILE_CLOSED), default="Correct",
            description="Drift while the window is closed: Correct (re-applied, as at any time; a hand edit "
            "is not a change) or Report (left and reported, as spec.drift: Report).",
        ),
    }


def _schedule(entry: dict[str, Any], where: str) -> str:
    value = entry.get("schedule")
    if not isinstance(value, str) or not value.strip():
        raise PolicyError(f"{where}.schedule is required: a cron expression of five fields "
                          "(minute hour day-of-month month day-of-week)")
    fields = value.split()
    if len(fields) != len(FIELDS):
        counted = f"{len(fields)} field" + ("" if len(fields) == 1 else "s")
        raise PolicyError(f"{where}.schedule {go_quote(value)} is not a cron schedule: it has {counted}, not "
                          f"{len(FIELDS)} (minute hour day-of-month month day-of-week)")
    try:
        CronSim(value, _EPOCH)
    except (CronSimError, ValueError, IndexError) as exc:
        raise PolicyError(_bad_schedule(value, where, str(exc))) from None
    return value


def _bad_schedule(value: str, where: str, reason: str) -> str:
    index = _LIBRARY_FIELDS.get(reason.removeprefix("Bad ")) if reason.startswith("Bad ") else None
    if index is None:
        return (f"{where}.schedule {go_quote(value)} is not a cron schedule (minute hour day-of-month month "
                "day-of-week)")
    name, values = FIELDS[index]
    if name == "day-of-month" and _parses(f"0 0 {value.split()[2]} * *"):
        return (f"{where}.schedule {go_quote(value)} is not a cron schedule: no month of its month field "
                f"{go_quote(value.split()[3])} has a day {go_quote(value.split()[2])}")
    return (f"{where}.schedule {go_quote(value)} is not a cron schedule: its {name} field "
            f"{go_quote(value.split()[index])} is not {values} (or *, a list, a range or a step of them)")


def _parses(schedule: str) -> bool:
    try:
        CronSim(schedule, _EPOCH)
    except (CronSimError, ValueError, IndexError):
        return False
    return True


def _duration(entry: dict[str, Any], where: str) -> str:
    value = entry.get("duration")
    if not isinstance(value, str) or not _DURATION.fullmatch(value):
        shown = f" {go_quote(value)}" if isinstance(value, str) else ""
        raise PolicyError(f"{where}.duration{shown} is not a duration such as 30m, 2h or 1h30m")
    try:
        length = parse_go_duration(value)
    except ValueError:
        raise PolicyError(f"{where}.duration {go_quote(value)} is not a duration such as 30m, 2h or 1h30m") from None
    if length <= timedelta(0):
        raise PolicyError(f"{where}.duration must be longer than 0s, not {go_quote(value)}")
    return value


@functools.cache
def _known_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _time_zone(entry: dict[str, Any], where: str) -> str:
    value = entry.get("timeZone", DEFAULT_TIME_ZONE)
    if value is None:
        value = DEFAULT_TIME_ZONE
    if not isinstance(value, str) or value not in _known_zones() | {DEFAULT_TIME_ZONE}:
        shown = go_quote(value) if isinstance(value, str) else repr(value)
        near = closest(value, sorted(_known_zones()))
        hint = f"; did you mean {go_quote(near)}?" if near is not None else ""
        raise PolicyError(f"{where}.timeZone {shown} is not a time zone: an IANA name such as UTC, Europe/Berlin "
                          f"or America/New_York{hint}")
    return value


def _window(raw: Any, where: str) -> Window:
    entry = entry_map(raw, where)
    kind = entry.get("kind")
    if kind not in KINDS:
        raise PolicyError(unknown_at(f"{where}.kind", kind, KINDS))
    schedule = _schedule(entry, where)
    return Window(str(kind), schedule, _duration(entry, where), _time_zone(entry, where))


def parse_windows(owner: str, props: Mapping[str, Any], policy: str = "") -> Windows:
    """The windows of ``props`` (``windows``, ``driftWhileClosed``), owned by ``owner``
    (``policy "freeze"``, ``ClusterProfile "prod"``); raises ``PolicyError`` with the messages of
    docs/operator.md#change-windows."""
    raw = required_list(dict(props), "windows")
    windows = tuple(_window(entry, f"windows[{i}]") for i, entry in enumerate(raw))
    drift = props.get("driftWhileClosed")
    if drift is None:
        drift = "Correct"
    if drift not in DRIFT_WHILE_CLOSED:
        raise PolicyError(unknown_at("driftWhileClosed", drift, DRIFT_WHILE_CLOSED))
    return Windows(owner, windows, str(drift), policy)


def parse(policy_name: str, props: Mapping[str, Any]) -> Windows:
    """A change-window policy's windows, owned by ``policy "<name>"``."""
    return parse_windows(f"policy {go_quote(policy_name)}", props, policy_name)


def for_profile(profile: str, props: Mapping[str, Any]) -> Windows:
    """A ClusterProfile's windows (the same properties as the policy's), owned by ``ClusterProfile "<name>"``."""
    return parse_windows(f"ClusterProfile {go_quote(profile)}", props)


def recorded(result: PolicyResult) -> Windows | None:
    raw = result.extensions.get(EXTENSION_KEY)
    return None if raw is None else Windows.from_json(raw)


class ChangeWindowPolicy(BuiltinType):
    """When a new revision may land: allow and deny windows on a cron schedule."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        record_once(result, EXTENSION_KEY, TYPE, lambda: parse(policy.name, policy.properties).to_json())
