"""The report's growth section (bench/report.py, issue 43 item 6): one-shard runs of one object count,
grown against the smallest, the ideal's ratio, the plot written; too few sizes say how to run them."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import report


def run(apps: int, ready_s: float, cpu: float, rss: float, objects: int = 4, shards: int = 1,
        steady: bool = True) -> dict[str, object]:
    figures = {"apps": apps, "objects": objects, "shards": shards, "ready": apps, "ready_s": ready_s,
               "audit_requests_per_app": 10.0, "cpu_s": {"operator": cpu}, "peak_rss_mib": rss}
    if steady:
        figures |= {"steady_reads_per_min": apps / 100, "steady_writes_per_min": 0, "steady_cpu_percent": 1.5,
                    "interval": "10m"}
    return {"exit_code": 0, "figures": figures}


def floor(apps: int, ready_s: float) -> dict[str, object]:
    return {"figures": {"client": "reconciler", "with_applications": True, "apps": apps, "objects": 4,
                        "ready": apps, "ready_s": ready_s}}


def test_three_sizes_grow_against_the_smallest_with_the_ideals_ratio_and_a_plot(tmp_path: Path) -> None:
    scale = {"date_utc": "2026-12-07 03:00:00 UTC",
             "runs": [run(10000, 900.0, 300.0, 1000.0), run(1000, 90.0, 25.0, 200.0, steady=False),
                      run(5000, 440.0, 140.0, 600.0), run(5000, 300.0, 100.0, 400.0, shards=2), run(1000, 97.0, 48.0, 264.0, objects=10)]}
    text = report.growth_section(scale, {"runs": [floor(1000, 80.0), floor(10000, 800.0)]}, tmp_path)
    lines = text.splitlines()
    assert "| 1,000 | 90.0 s | 1.00× | 1.12× | 10.00 | 25.0 s | 1.00× | 200 MiB | 1.00× | — |" in lines
    assert ("| 5,000 | 440.0 s | 4.89× | — | 10.00 | 140.0 s | 5.60× | 600 MiB | 3.00× | "
            "0.010 reads, 0 writes, CPU 1.50 % (interval 10m) |") in lines
    assert ("| 10,000 | 900.0 s | 10.00× | 1.12× | 10.00 | 300.0 s | 12.00× | 1,000 MiB | 5.00× | "
            "0.010 reads, 0 writes, CPU 1.50 % (interval 10m) |") in lines
    assert (tmp_path / "growth.png").stat().st_size > 0


def test_fewer_than_three_sizes_say_how_to_run_them(tmp_path: Path) -> None:
    text = report.growth_section({"runs": [run(1000, 90.0, 25.0, 200.0), run(5000, 440.0, 140.0, 600.0)]}, None,
                                 tmp_path)
    assert "_Fewer than three one-shard fleet sizes with the same objects per Application: run" in text
    assert not (tmp_path / "growth.png").exists()
    assert "_Fewer than three" in report.growth_section(None, None, tmp_path)


def test_the_readme_figures_are_rewritten_between_the_markers(tmp_path: Path) -> None:
    results = {"steps": {"scale": {"date_utc": "2026-12-07 05:00:00 UTC", "git_commit": "0123456789abcdef",
                                   "runs": [run(1000, 90.0, 25.0, 200.0), run(5000, 440.0, 140.0, 600.0),
                                            run(10000, 900.0, 300.0, 1000.0)]},
                         "floor": {"runs": [floor(1000, 80.0), floor(10000, 800.0)]}}}
    text = report.readme_growth(results)
    assert text is not None
    assert "2026-12-07 05:00:00 UTC, commit `0123456789ab`" in text
    assert ("| 10,000 | 900.0 s | 10.00× | 1.12× | 10.00 | 300.0 s | 12.00× | 1,000 MiB | 5.00× | "
            "0.010 reads, 0 writes, CPU 1.50 % (interval 10m) |") in text.splitlines()
    assert text.endswith("From 1,000 to 10,000 Applications (10× the fleet) the time to Ready grows 10.00×, the "
                         "operator's CPU 12.00× and its peak RSS 5.00×.")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\nbefore\n{report.README_START}\nold figures\n{report.README_END}\nafter\n")
    assert report.update_readme(readme, text)
    assert readme.read_text() == f"# x\n\nbefore\n{report.README_START}\n{text}\n{report.README_END}\nafter\n"
    unmarked = tmp_path / "OTHER.md"
    unmarked.write_text("no markers\n")
    assert not report.update_readme(unmarked, text) and unmarked.read_text() == "no markers\n"
    assert report.readme_growth({"steps": {}}) is None
