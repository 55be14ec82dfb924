"""The grace of a missing app-dependency target (operatorpolicies/missing.py,
docs/app-dependencies.md#a-missing-application)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from oam_operator.operatorpolicies import AppRef
from oam_operator.operatorpolicies.missing import MissingDependencies, missing_message

T0 = datetime(2026, 12, 6, tzinfo=UTC)
GRACE = timedelta(minutes=1)
DB, CACHE = AppRef("shop", "db"), AppRef("infra", "cache")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_each_missing_one_is_warned_of_once_after_its_grace() -> None:
    missing = MissingDependencies()
    assert missing.observe([DB], at(0), GRACE) == ([], 60.0)
    assert missing.observe([DB, CACHE], at(20), GRACE) == ([], 40.0)
    assert missing.observe([DB, CACHE], at(60), GRACE) == ([DB], 20.0)
    assert missing.observe([DB, CACHE], at(80), GRACE) == ([CACHE], None)
    assert missing.observe([DB, CACHE], at(500), GRACE) == ([], None)


def test_a_dependency_that_appeared_and_went_again_has_a_new_grace() -> None:
    missing = MissingDependencies()
    missing.observe([DB], at(0), GRACE)
    assert missing.observe([DB], at(60), GRACE) == ([DB], None)
    assert missing.observe([], at(70), GRACE) == ([], None)
    assert missing.observe([DB], at(80), GRACE) == ([], 60.0)
    missing.clear()
    assert missing.observe([DB], at(90), timedelta(0)) == ([DB], None)  # 0s: at once


def test_the_message_names_them_relative_to_the_waiting_application() -> None:
    assert missing_message("shop", [DB], "1m") == (
        "Application db named by app-dependency does not exist after 1m; still waiting for it (check its name, "
        "or create it)")
    assert missing_message("shop", [CACHE, DB], "2m30s") == (
        "Applications infra/cache, db named by app-dependency do not exist after 2m30s; still waiting for them "
        "(check their names, or create them)")
