"""The report's section of the topology benchmark (bench/report.py, docs/multicluster.md#measured-fleet-delivery):
its rows as measured, a failed step as its failure, a step not run as such."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import report

ROW = {"run": "topology", "apps": 1, "clusters": 4, "ready": 1, "ready_s": 6.2, "requests": 180,
       "requests_per_cluster": 45.0, "writes": 60, "status_bytes": 2911, "peak_rss_mib": 90}


def test_the_rows_as_measured() -> None:
    step = {"date_utc": "2026-12-06 12:00:00 UTC", "ok": True, "runs": [{"exit_code": 0, "figures": {"rows": [ROW]}}]}
    text = report.topology_section(step)
    assert "| topology | 1 | 4 | 1/1 | 6.2 s | 180 | 45.0 | 60 | 2911 bytes | 90 MiB |" in text.splitlines()
    assert "Run 2026-12-06 12:00:00 UTC." in text


def test_a_step_not_run_says_how_to_run_it() -> None:
    assert report.topology_section(None).endswith(
        "_Not run in this report's results (`bench/run_all.py --only topology --merge`)._")


def test_a_failed_step_shows_no_figures() -> None:
    text = report.topology_section({"ok": False, "error": "RuntimeError: boom", "runs": []})
    assert "| topology |" not in text and "boom" in text
