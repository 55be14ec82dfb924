"""Agreement of ``oam-operator build`` with kurel on the oracle corpus (prints figures, asserts nothing).

Runs every case of ../shared/kurel-oracle in-process (tests/unit/oam/oamkit/kurel.py) and
prints how many fall in each verdict; with ``--list VERDICT`` also the case ids and a first
differing line, to find the general mechanism behind a difference. The pass/fail rules live in
tests/unit/oam/kurel/test_kurel_oracle.py; this script only counts.

    .venv/bin/python bench/oracle_agreement.py [--list built-differs] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "operator"))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "oam"))

from oamkit.kurel import ORACLE, VERDICTS, Case, Outcome, build, cases, verdict  # noqa: E402


def _first_difference(expected: str, got: str) -> str:
    a, b = expected.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"line {i + 1}: kurel {x!r} / ours {y!r}"
    return f"lengths differ: kurel {len(a)} lines / ours {len(b)} lines"


def _detail(case: Case, ours: Outcome, name: str) -> str:
    if name == "built-differs":
        return _first_difference(case.stdout, ours.stdout)
    if name == "refused-different-text":
        return f"kurel {case.stderr.strip()!r}\n      ours  {ours.stderr.strip()!r}"
    if name in ("refused-by-schema", "refused-but-kurel-built"):
        return ours.stderr.strip()
    if name == "accepted-but-kurel-refused":
        return case.stderr.strip()
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="append", default=[], choices=VERDICTS, help="print the cases of a verdict")
    parser.add_argument("--json", type=Path, help="write {case id: verdict} to this file")
    args = parser.parse_args()
    corpus = cases()
    if not corpus:
        print(f"no corpus at {ORACLE}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    verdicts: dict[str, str] = {}
    for case in corpus:
        ours = build(case)
        verdicts[case.id] = name = verdict(case, ours)
        if name in args.list:
            print(f"{case.id} {name}: {_detail(case, ours, name)}")
    elapsed = time.perf_counter() - started
    counts = Counter(verdicts.values())
    print(f"{len(corpus)} cases in {elapsed:.1f} s")
    for name in VERDICTS:
        print(f"  {name:28} {counts.get(name, 0):5}")
    if args.json:
        args.json.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
