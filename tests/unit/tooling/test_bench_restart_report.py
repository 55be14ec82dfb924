"""The report's section of the restart benchmark (bench/report.py, docs/operator.md#a-quiet-restart):
a run's row as measured (reads without the Lease's, LISTs by resource), a failed step as its
failure, a step not run as such."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import report

FIGURES = {"apps": 10000, "objects": 4, "observe_s": 300.0, "leading_s": 16.4, "writes": 0, "lease_writes": 7, "new_ready_after_start_s": 3.21, "changed_ready_s": 1.04,
           "warm_changed_ready_s": 0.98, "idle_cpu_percent": 1.5, "peak_rss_mib": 900.4, "restarted_peak_rss_mib": 700.2,
           "requests": [{"agent": "oam-operator", "verb": "list", "resource": "configmaps", "count": 1},
                        {"agent": "oam-operator", "verb": "list", "resource": "applications", "count": 1},
                        {"agent": "oam-operator", "verb": "watch", "resource": "configmaps", "count": 1},
                        {"agent": "oam-operator", "verb": "get", "resource": "leases", "count": 7},
                        {"agent": "oam-operator", "verb": "update", "resource": "leases", "count": 7}]}


def test_the_row_as_measured() -> None:
    step = {"date_utc": "2026-12-07 03:00:00 UTC", "ok": True, "runs": [{"exit_code": 0, "figures": FIGURES}]}
    text = report.restart_section(step)
    assert ("| 10,000 × 4 | 300 s | 0 (7) | 3 | applications 1, configmaps 1 | 16.4 s | 3.2 s | 1.0 s (warm 1.0 s) | 1.50 % | 900 / 700 MiB |"
            in text.splitlines())
    assert "Run 2026-12-07 03:00:00 UTC." in text


def test_a_step_not_run_says_how_to_run_it() -> None:
    assert report.restart_section(None).endswith(
        "_Not run in this report's results (`bench/run_all.py --only restart --merge`)._")


def test_a_failed_step_shows_no_figures() -> None:
    text = report.restart_section({"ok": False, "error": "RuntimeError: boom", "runs": []})
    assert "| 10,000 × 4 |" not in text and "boom" in text


def test_a_run_that_timed_the_change_from_leading_shows_it() -> None:
    figures = {**FIGURES, "changed_ready_after_leading_s": 0.61}
    text = report.restart_section({"date_utc": "2026-12-07 03:00:00 UTC", "ok": True,
                                   "runs": [{"exit_code": 0, "figures": figures}]})
    assert "| 1.0 s, 0.6 s after leading (warm 1.0 s) |" in text
