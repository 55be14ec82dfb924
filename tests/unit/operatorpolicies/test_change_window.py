"""The ``change-window`` policy (docs/operator.md#change-windows): its refusals word for word, and
the window arithmetic on a fake clock (every ``now`` is passed in) across daylight-saving changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cronsim import CronSim
from hypothesis import given, settings
from hypothesis import strategies as st

from oam_operator.oam.errors import PolicyError
from oam_operator.operatorpolicies import (
    ChangeWindows,
    Window,
    Windows,
    closed,
    combine,
    is_open,
    next_opening,
    read_operator_policies,
)
from oam_operator.operatorpolicies.change_window import KINDS, for_profile, parse, parse_windows
from oam_operator.operatorpolicies.change_window_clock import HORIZON, REASON, STATE, rfc3339
from tests.unit.operatorpolicies.test_operator_policy_handlers import document, operator, policy, refusal, run

SCHEMA = 'policy "w" (type "change-window"): properties.'


def window(kind: Any = "deny", schedule: str = "30 2 * * *", duration: Any = "1h", **more: Any) -> dict[str, Any]:
    return {"kind": kind, "schedule": schedule, "duration": duration, **more}


def windows(*entries: dict[str, Any], name: str = "w", **props: Any) -> Windows:
    return parse(name, {"windows": list(entries), **props})


def at(text: str) -> datetime:
    """An instant in UTC: ``2027-03-28 01:00``."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# --- the policy: read back, and refused -------------------------------------------------------


def test_a_change_window_is_read_back_with_its_defaults() -> None:
    result = run(operator(), document(policy("w", "change-window", windows=[
        window("allow", "0 9 * * 1-5", "8h", timeZone="Europe/Berlin"), window("deny", "0 0 24 12 *", "48h")])))
    assert result.extensions["oam-operator.dev/change-window"] == {"policy": "w", "driftWhileClosed": "Correct", "windows": [
        {"kind": "allow", "schedule": "0 9 * * 1-5", "duration": "8h", "timeZone": "Europe/Berlin"},
        {"kind": "deny", "schedule": "0 0 24 12 *", "duration": "48h", "timeZone": "UTC"}]}
    read = read_operator_policies(result, "shop", {}, allow_cross_namespace=False).change_window
    assert read == Windows('policy "w"', (Window("allow", "0 9 * * 1-5", "8h", "Europe/Berlin"),
                                          Window("deny", "0 0 24 12 *", "48h")), "Correct", "w")
    assert read.windows[0].length == timedelta(hours=8) and read.allows == read.windows[:1]
    assert str(read.windows[0].zone) == "Europe/Berlin" and read.windows[1].zone is UTC
    assert read_operator_policies(run(operator(), document()), "shop", {}, allow_cross_namespace=False).change_window is None


BAD_FIELD = " (or *, a list, a range or a step of them)"


@pytest.mark.parametrize(("properties", "message"), [
    ({}, ": missing required property 'windows'"),
    ({"windows": []}, ": property 'windows' must not be empty"),
    ({"windows": "0 * * * *"}, ' (type "change-window"): properties.windows: expected array, got string'),
    ({"windows": [window(kind="sometimes")]},
     ' (type "change-window"): properties.windows[0].kind: unknown kind "sometimes" (valid: allow, deny)'),
    ({"windows": [{"schedule": "0 * * * *", "duration": "1h"}]},
     ' (type "change-window"): properties.windows[0]: "kind" is required'),
    ({"windows": [window(timezone="UTC")]},
     ' (type "change-window"): properties.windows[0]: unsupported field "timezone" (allowed: duration, kind, schedule, '
     'timeZone); did you mean "timeZone"?'),
    ({"windows": [window()], "driftWhileClosed": "Ignore"},
     ' (type "change-window"): properties.driftWhileClosed: unknown driftWhileClosed "Ignore" (valid: Correct, Report)'),
    ({"windows": [window(schedule="61 * * * *")]},
     ': windows[0].schedule "61 * * * *" is not a cron schedule: its minute field "61" is not 0-59' + BAD_FIELD),
    ({"windows": [window(schedule="0 24 * * *")]},
     ': windows[0].schedule "0 24 * * *" is not a cron schedule: its hour field "24" is not 0-23' + BAD_FIELD),
    ({"windows": [window(schedule="0 0 32 * *")]},
     ': windows[0].schedule "0 0 32 * *" is not a cron schedule: its day-of-month field "32" is not 1-31, L or LW'
     + BAD_FIELD),
    ({"windows": [window(schedule="0 0 30 2 *")]},
     ': windows[0].schedule "0 0 30 2 *" is not a cron schedule: no month of its month field "2" has a day "30"'),
    ({"windows": [window(schedule="0 0 * 13 *")]},
     ': windows[0].schedule "0 0 * 13 *" is not a cron schedule: its month field "13" is not 1-12 or JAN-DEC'
     + BAD_FIELD),
    ({"windows": [window(schedule="0 0 * * FUNDAY")]},
     ': windows[0].schedule "0 0 * * FUNDAY" is not a cron schedule: its day-of-week field "FUNDAY" is not 0-7 or '
     "SUN-SAT, with L or #1-#5" + BAD_FIELD),
    ({"windows": [window(schedule="* * * *")]},
     ': windows[0].schedule "* * * *" is not a cron schedule: it has 4 fields, not 5 (minute hour day-of-month month '
     "day-of-week)"),
    ({"windows": [window(schedule="0 0 0 * * *")]},
     ': windows[0].schedule "0 0 0 * * *" is not a cron schedule: it has 6 fields, not 5 (minute hour day-of-month '
     "month day-of-week)"),
    ({"windows": [window(schedule="@daily")]},
     ': windows[0].schedule "@daily" is not a cron schedule: it has 1 field, not 5 (minute hour day-of-month month '
     "day-of-week)"),
    ({"windows": [window(schedule="")]},
     ": windows[0].schedule is required: a cron expression of five fields (minute hour day-of-month month "
     "day-of-week)"),
    ({"windows": [window(timeZone="Mars/Olympus_Mons")]},
     ': windows[0].timeZone "Mars/Olympus_Mons" is not a time zone: an IANA name such as UTC, Europe/Berlin or '
     "America/New_York"),
    ({"windows": [window(timeZone="Europe/Berln")]},
     ': windows[0].timeZone "Europe/Berln" is not a time zone: an IANA name such as UTC, Europe/Berlin or '
     'America/New_York; did you mean "Europe/Berlin"?'),
    ({"windows": [window(timeZone="../../etc/passwd")]},
     ': windows[0].timeZone "../../etc/passwd" is not a time zone: an IANA name such as UTC, Europe/Berlin or '
     "America/New_York"),
    ({"windows": [window(duration="soon")]},
     ': windows[0].duration "soon" is not a duration such as 30m, 2h or 1h30m'),
    ({"windows": [window(duration="-1h")]},
     ': windows[0].duration "-1h" is not a duration such as 30m, 2h or 1h30m'),
    ({"windows": [window(duration="99999999999h")]},
     ': windows[0].duration "99999999999h" is not a duration such as 30m, 2h or 1h30m'),
    ({"windows": [window(duration="0s")]}, ': windows[0].duration must be longer than 0s, not "0s"'),
    ({"windows": [window(), window(duration="0h0m")]}, ': windows[1].duration must be longer than 0s, not "0h0m"'),
])
def test_bad_change_windows_are_refused_with_the_exact_message(properties: dict[str, Any], message: str) -> None:
    assert refusal(policy("w", "change-window", **properties)) == f'policy "w"{message}'


def test_two_change_window_policies_are_refused() -> None:
    assert refusal(policy("w", "change-window", windows=[window()]),
                   policy("again", "change-window", windows=[window("allow")])) == (
        'policy "again": only one change-window policy is allowed; policy "w" already sets it')


@pytest.mark.parametrize(("props", "message"), [
    ({"windows": [window(kind="sometimes")]}, 'windows[0].kind: unknown kind "sometimes" (valid: allow, deny)'),
    ({"windows": [window(kind=None)]}, "windows[0].kind: unknown kind <nil> (valid: allow, deny)"),
    ({"windows": [window()], "driftWhileClosed": "correct"},
     'driftWhileClosed: unknown driftWhileClosed "correct" (valid: Correct, Report); did you mean "Correct"?'),
    ({"windows": ["deny"]}, "windows[0] must be a map"),
    ({"windows": [window(timeZone=1)]},
     "windows[0].timeZone 1 is not a time zone: an IANA name such as UTC, Europe/Berlin or America/New_York"),
    ({"windows": [window(duration=60)]}, "windows[0].duration is not a duration such as 30m, 2h or 1h30m"),
])
def test_windows_without_the_schema_are_refused_in_the_same_words(props: dict[str, Any], message: str) -> None:
    """A ClusterProfile's windows are read by ``parse_windows`` alone, with no schema in front."""
    with pytest.raises(PolicyError) as refused:
        parse_windows('ClusterProfile "prod"', props)
    assert refused.value.message == message


# --- the arithmetic: one owner, across daylight-saving changes ------------------------------


BERLIN_SPRING, BERLIN_AUTUMN = "2027-03-28", "2027-10-31"  # 02:00 CET -> 03:00 CEST; 03:00 CEST -> 02:00 CET
NEW_YORK_SPRING, NEW_YORK_AUTUMN = "2027-03-14", "2027-11-07"  # 02:00 EST -> 03:00 EDT; 02:00 EDT -> 01:00 EST


@pytest.mark.parametrize(("zone", "day", "opens", "closes"), [
    # 02:30 does not exist: the window opens when the gap ends (03:00 local), for its full hour.
    ("Europe/Berlin", BERLIN_SPRING, "01:00", "02:00"),
    ("America/New_York", NEW_YORK_SPRING, "07:00", "08:00"),
    # 02:30 happens twice in Berlin: the window opens once, at the first (CEST), for one elapsed hour.
    ("Europe/Berlin", BERLIN_AUTUMN, "00:30", "01:30"),
    # New York repeats 01:00-02:00, so 02:30 is plain EST there.
    ("America/New_York", NEW_YORK_AUTUMN, "07:30", "08:30"),
    # The day before and after: 02:30 local as ever.
    ("Europe/Berlin", "2027-03-27", "01:30", "02:30"),
    ("Europe/Berlin", "2027-03-29", "00:30", "01:30"),
    ("Europe/Berlin", "2027-11-01", "01:30", "02:30"),
])
def test_a_deny_window_at_0230_across_daylight_saving(zone: str, day: str, opens: str, closes: str) -> None:
    freeze = windows(window(timeZone=zone))
    start, end = at(f"{day} {opens}"), at(f"{day} {closes}")
    assert is_open(freeze, start - timedelta(seconds=1))
    assert not is_open(freeze, start) and not is_open(freeze, end - timedelta(seconds=1))
    assert is_open(freeze, end)
    assert next_opening(freeze, start) == end
    assert next_opening(freeze, end) == end
    found = closed(freeze, start + timedelta(minutes=5))
    assert found is not None and found.message == (
        f'Change window closed until {rfc3339(end)}: deny window "30 2 * * *" for 1h ({zone}) of policy "w"')


def test_an_allow_window_at_0230_opens_once_on_each_change_day() -> None:
    nightly = windows(window("allow", timeZone="Europe/Berlin"))
    assert next_opening(nightly, at(f"{BERLIN_SPRING} 00:00")) == at(f"{BERLIN_SPRING} 01:00")
    assert next_opening(nightly, at(f"{BERLIN_AUTUMN} 00:00")) == at(f"{BERLIN_AUTUMN} 00:30")
    # After the autumn window closed (02:30 CET, the second 02:30), the next opening is the next night.
    assert not is_open(nightly, at(f"{BERLIN_AUTUMN} 01:30"))
    assert next_opening(nightly, at(f"{BERLIN_AUTUMN} 01:30")) == at("2027-11-01 01:30")
    found = closed(nightly, at(f"{BERLIN_AUTUMN} 01:45"))  # 02:45 CET, inside the repeated hour
    assert found is not None and found.message == (
        'Change window closed until 2027-11-01T01:30:00Z: outside the allow windows of policy "w"')


def test_a_wildcard_schedule_follows_elapsed_time_across_daylight_saving() -> None:
    """``*/30 * * * *`` opens every half hour that happens: none in the skipped hour, both repeated ones."""
    half_hours = windows(window("allow", "*/30 * * * *", "1m", timeZone="Europe/Berlin"))
    assert next_opening(half_hours, at(f"{BERLIN_SPRING} 00:31")) == at(f"{BERLIN_SPRING} 01:00")  # 01:30 CET -> 03:00 CEST
    opened = []
    now = at(f"{BERLIN_AUTUMN} 00:01")
    for _ in range(5):
        now = next_opening(half_hours, now + timedelta(minutes=1)) or now
        opened.append(rfc3339(now))
    assert opened == ["2027-10-31T00:30:00Z", "2027-10-31T01:00:00Z", "2027-10-31T01:30:00Z", "2027-10-31T02:00:00Z",
                      "2027-10-31T02:30:00Z"]  # 02:30 CEST, 02:00 CET, 02:30 CET, 03:00 CET, 03:30 CET


def test_a_duration_is_elapsed_time_across_the_change() -> None:
    """22:00 for 10h on the spring night closes at 09:00 CEST: ten hours later, not 08:00 on the clock."""
    night = windows(window(schedule="0 22 * * *", duration="10h", timeZone="Europe/Berlin"))
    assert next_opening(night, at("2027-03-27 21:30")) == at("2027-03-28 07:00")
    assert datetime(2027, 3, 28, 7, tzinfo=UTC).astimezone(night.windows[0].zone).hour == 9


# --- allow and deny together; a profile's and an Application's --------------------------------


WORKDAYS = window("allow", "0 9 * * 1-5", "8h", timeZone="Europe/Berlin")  # Mon-Fri 09:00-17:00
FRIDAY_AFTERNOON = window("deny", "0 15 * * 5", "2h", timeZone="Europe/Berlin")  # Fri 15:00-17:00


@pytest.mark.parametrize(("now", "open_", "opens"), [
    ("2027-06-14 07:00", True, "2027-06-14 07:00"),  # Monday 09:00 CEST
    ("2027-06-14 06:59", False, "2027-06-14 07:00"),
    ("2027-06-14 15:00", False, "2027-06-15 07:00"),  # Monday 17:00: closed until Tuesday
    ("2027-06-18 12:59", True, "2027-06-18 12:59"),  # Friday 14:59
    ("2027-06-18 13:00", False, "2027-06-21 07:00"),  # Friday 15:00: the deny, then the weekend
    ("2027-06-19 12:00", False, "2027-06-21 07:00"),  # Saturday
])
def test_a_change_lands_in_an_allow_window_outside_every_deny_window(now: str, open_: bool, opens: str) -> None:
    weekly = windows(WORKDAYS, FRIDAY_AFTERNOON)
    assert is_open(weekly, at(now)) is open_
    assert next_opening(weekly, at(now)) == at(opens)


def test_the_message_names_the_deny_window_before_the_allow_windows() -> None:
    found = closed(windows(WORKDAYS, FRIDAY_AFTERNOON), at("2027-06-18 13:30"))
    assert found is not None
    assert (found.message, STATE, REASON) == (
        'Change window closed until 2027-06-21T07:00:00Z: deny window "0 15 * * 5" for 2h (Europe/Berlin) of policy '
        '"w"', "Waiting", "ChangeWindowClosed")
    found = closed(windows(WORKDAYS, FRIDAY_AFTERNOON), at("2027-06-19 12:00"))
    assert found is not None and found.message == (
        'Change window closed until 2027-06-21T07:00:00Z: outside the allow windows of policy "w"')


def test_only_deny_windows_leave_every_other_time_open() -> None:
    christmas = windows(window("deny", "0 0 24 12 *", "72h"))
    assert is_open(christmas, at("2027-12-23 23:59"))
    assert next_opening(christmas, at("2027-12-25 12:00")) == at("2027-12-27 00:00")


def test_deny_windows_that_meet_or_overlap_close_as_one() -> None:
    """One closing as the next opens leaves no gap, in one window's openings or across two."""
    meeting = windows(window("deny", "0 22 * * *", "1h"), window("deny", "0 23 * * *", "2h"))
    assert next_opening(meeting, at("2027-06-14 22:10")) == at("2027-06-15 01:00")
    overlapping = windows(window("deny", "0 */2 * * *", "3h"))  # opens every 2h for 3h: always closed
    found = closed(overlapping, at("2027-06-14 12:00"))
    assert found is not None and found.opens_at is None
    assert found.searched_until == at("2027-06-14 12:00") + HORIZON
    assert found.message == (
        'Change window closed with no opening before 2028-06-14T12:00:00Z: deny window "0 */2 * * *" for 3h (UTC) of '
        'policy "w"')


def test_a_window_opening_too_rarely_is_not_found_within_the_horizon() -> None:
    leap_day = windows(window("allow", "0 0 29 2 *", "24h"))
    assert next_opening(leap_day, at("2027-03-01 00:00")) == at("2028-02-29 00:00")  # 365 days ahead
    found = closed(leap_day, at("2028-03-01 00:00"))  # the next is in 2032
    assert found is not None and (found.opens_at, found.searched_until) == (None, at("2029-03-02 00:00"))
    assert found.wake_at == at("2029-03-02 00:00")
    soon = closed(leap_day, at("2027-03-01 00:00"))
    assert soon is not None and soon.wake_at == soon.opens_at == at("2028-02-29 00:00")
    assert found.message == ('Change window closed with no opening before 2029-03-02T00:00:00Z: outside the allow '
                             'windows of policy "w"')


def test_the_search_stops_after_its_budget_saying_how_far_it_got() -> None:
    every_minute = windows(window("deny", "* * * * *", "1m"))
    now = at("2027-06-14 12:00")
    found = closed(every_minute, now)
    assert found is not None and found.opens_at is None and now < found.searched_until < now + HORIZON
    assert found.message == (f"Change window closed with no opening before {rfc3339(found.searched_until)}: deny "
                             'window "* * * * *" for 1m (UTC) of policy "w"')


def test_the_profile_and_the_application_both_apply() -> None:
    """The Application's windows narrow the profile's: open only while both are."""
    profile = for_profile("prod", {"windows": [window("allow", "0 8 * * *", "12h")]})  # 08-20
    application = windows(window("allow", "0 18 * * *", "4h"), name="evening")  # 18-22
    both = combine(profile, application)
    assert both == ChangeWindows((profile, application))
    assert [is_open(both, at(f"2027-06-14 {h}:00")) for h in ("09", "18", "19", "20", "21")] == [
        False, True, True, False, False]
    assert next_opening(both, at("2027-06-14 20:00")) == at("2027-06-15 18:00")
    found = closed(both, at("2027-06-14 09:00"))
    assert found is not None and found.message == (
        'Change window closed until 2027-06-14T18:00:00Z: outside the allow windows of policy "evening"')
    found = closed(both, at("2027-06-14 21:00"))
    assert found is not None and found.message == (
        'Change window closed until 2027-06-15T18:00:00Z: outside the allow windows of ClusterProfile "prod"')
    freeze = parse_windows('ClusterProfile "prod"', {"windows": [window("deny", "0 0 * * 6", "48h")]})
    weekend = combine(freeze, application)
    found = closed(weekend, at("2027-06-19 19:00"))  # a Saturday evening
    assert found is not None and found.message == (
        'Change window closed until 2027-06-21T18:00:00Z: deny window "0 0 * * 6" for 48h (UTC) of ClusterProfile '
        '"prod"')
    assert combine(None, application) == ChangeWindows((application,))
    assert is_open(combine(None, None), at("2027-06-19 19:00"))


def test_drift_is_corrected_while_closed_unless_an_owner_says_report() -> None:
    correct, report = windows(window()), windows(window(), driftWhileClosed="Report")
    assert combine(None, correct).corrects_drift_while_closed
    assert not combine(correct, report).corrects_drift_while_closed
    assert report.drift_while_closed == "Report"


def test_the_clock_must_say_its_zone() -> None:
    with pytest.raises(ValueError, match="aware"):
        is_open(windows(window()), datetime(2027, 6, 14, 12))
    berlin_noon = datetime.fromisoformat("2027-06-14T12:00:00+02:00")
    assert next_opening(windows(window("allow", "0 10 * * *", "1h")), berlin_noon) == berlin_noon


# --- against an oracle: every minute around the changes ---------------------------------------


SCHEDULES = ("30 2 * * *", "0 2 * * *", "15 1-3 * * *", "*/20 * * * *", "0 * * * *", "0 22 * * 6,0", "45 23 * * *")
DURATIONS = ("1m", "20m", "1h", "90m", "5h")
ZONES = ("UTC", "Europe/Berlin", "America/New_York")
CHANGE_DAYS = (BERLIN_SPRING, BERLIN_AUTUMN, NEW_YORK_SPRING, NEW_YORK_AUTUMN)


def _spans(w: Window, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The window's openings up to ``end``, each start listed once from two days before (no change there)."""
    listed: list[tuple[datetime, datetime]] = []
    for opened in CronSim(w.schedule, (start - timedelta(days=2)).astimezone(w.zone)):
        instant = opened.astimezone(UTC)
        if instant > end:
            return listed
        listed.append((instant, instant + w.length))
    return listed


def _oracle_open(owners: tuple[Windows, ...], start: datetime, minutes: int) -> list[bool]:
    """Each minute from ``start``, by the rule itself: an allow window open or none, and no deny window open,
    for every owner."""
    end = start + timedelta(minutes=minutes)
    table = [[(w.kind, _spans(w, start, end)) for w in owner.windows] for owner in owners]

    def owner_open(found: list[tuple[str, list[tuple[datetime, datetime]]]], t: datetime) -> bool:
        allows = [any(s <= t < e for s, e in spans) for kind, spans in found if kind == "allow"]
        denies = [any(s <= t < e for s, e in spans) for kind, spans in found if kind == "deny"]
        return (not allows or any(allows)) and not any(denies)

    return [all(owner_open(found, start + timedelta(minutes=m)) for found in table) for m in range(minutes)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(SCHEDULES), st.sampled_from(DURATIONS),
                          st.sampled_from(ZONES)), min_size=1, max_size=3),
       st.lists(st.tuples(st.sampled_from(KINDS), st.sampled_from(SCHEDULES), st.sampled_from(DURATIONS),
                          st.sampled_from(ZONES)), max_size=2),
       st.sampled_from(CHANGE_DAYS), st.integers(min_value=-180, max_value=360))
def test_is_open_and_next_opening_agree_with_an_oracle_minute_by_minute(
        application: list[tuple[str, str, str, str]], profile: list[tuple[str, str, str, str]], day: str,
        offset: int) -> None:
    def owned(owner: str, entries: list[tuple[str, str, str, str]]) -> Windows | None:
        if not entries:
            return None
        return parse_windows(owner, {"windows": [window(k, s, d, timeZone=z) for k, s, d, z in entries]})

    both = combine(owned('ClusterProfile "p"', profile), owned('policy "w"', application))
    start = at(f"{day} 00:00") + timedelta(minutes=offset)
    minutes = 30 * 60
    expected = _oracle_open(both.owners, start, minutes)
    assert [is_open(both, start + timedelta(minutes=m)) for m in range(0, minutes, 7)] == expected[::7]
    first = next((m for m, open_ in enumerate(expected) if open_), None)
    found = next_opening(both, start)
    if first is not None:
        assert found == start + timedelta(minutes=first)
    else:
        assert found is None or found >= start + timedelta(minutes=minutes)
