"""The ``change-window`` policy (docs/operator.md#change-windows): read back, and its refusals word for word."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from oam_operator.oam.errors import PolicyError
from oam_operator.operatorpolicies import Window, Windows, read_operator_policies
from oam_operator.operatorpolicies.change_window import parse, parse_windows
from tests.unit.operatorpolicies.test_operator_policy_handlers import document, operator, policy, refusal, run

SCHEMA = 'policy "w" (type "change-window"): properties.'


def window(kind: str = "deny", schedule: str = "30 2 * * *", duration: str = "1h", **more: Any) -> dict[str, Any]:
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
