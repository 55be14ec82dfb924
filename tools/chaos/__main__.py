"""The soak (``make soak``): the chaos engine for longer, with more Applications, on a control
plane of its own; writes a report (docs/chaos.md#the-soak). Exit 1 when an invariant was violated.

``python -m tools.chaos --seed 1 --duration 900 --apps 60 --report bench/results/SOAK.md``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from .engine import Run, RunConfig
from .plane import ROOT, start_plane
from .report import markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.chaos", description=__doc__)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration", type=float, default=900.0, help="seconds of faults (default 900)")
    parser.add_argument("--apps", type=int, default=60)
    parser.add_argument("--profile", choices=("minimal", "full"), default="minimal",
                        help="full adds a Deployment to every third Application")
    parser.add_argument("--report", type=Path, default=ROOT / "bench" / "results" / "SOAK.md")
    args = parser.parse_args(argv)
    commit = running_commit()
    work = Path(tempfile.mkdtemp(prefix="oam-soak-"))
    (work / "logs").mkdir()
    plane = start_plane(work / "plane", args.profile)
    config = RunConfig(seed=args.seed, duration=args.duration, apps=args.apps, log_dir=work / "logs",
                       deployments=args.profile == "full", app_gap=max(0.5, 120 / args.apps), process_gap=30.0,
                       converge_bound=300.0)
    try:
        outcome = Run(plane, "soak", config).execute()
    finally:
        plane.stop()
    text = markdown(outcome, commit, args.profile)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text)
    sys.stdout.write(text + f"\n(operator logs in {work / 'logs'})\n")
    return 1 if outcome.violations else 0


def running_commit() -> str:
    """The commit the run starts from (read at the start: the tree may move while it runs), with
    ``-dirty`` when tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + ("-dirty" if dirty else "")


if __name__ == "__main__":
    sys.exit(main())
