"""The report's section of the multicluster benchmark (bench/report.py, docs/multicluster.md#measured):
its rows as measured, a failed step as its failure, a step not run as such."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import report

ROW = {"mode": "remote", "clusters": 3, "apps": 300, "objects": 5, "ready": 300, "ready_s": 32.7,
       "requests_per_app": 10.1, "writes_per_app": 8.0, "steady_requests_per_app_minute": 0.0, "peak_rss_mib": 122}


def test_the_rows_as_measured() -> None:
    step = {"date_utc": "2026-12-02 19:50:00 UTC", "ok": True, "runs": [{"exit_code": 0, "figures": {"rows": [ROW]}}]}
    text = report.multicluster_section(step)
    assert "| remote | 3 | 300/300 | 32.7 s | 10.1 | 8.0 | 0.00 | 122 MiB |" in text.splitlines()
    assert "(5 ConfigMaps each)" in text and "Run 2026-12-02 19:50:00 UTC." in text


def test_a_step_not_run_says_how_to_run_it() -> None:
    assert report.multicluster_section(None).endswith(
        "_Not run in this report's results (`bench/run_all.py --only multicluster --merge`)._")


def test_a_failed_step_shows_no_figures() -> None:
    text = report.multicluster_section({"ok": False, "error": "RuntimeError: boom", "runs": []})
    assert "| remote |" not in text and "boom" in text
