"""Agreement of ``oam-operator build`` with kurel on the oracle corpus (prints figures and differences).

Runs every case of ../shared/kurel-oracle in-process (tests/unit/oam/oamkit/kurel.py) and
prints how many fall in each verdict. Every disagreement is told apart: a *documented
difference* is one of ``DOCUMENTED_DIFFERENCES`` (docs/transform.md#deliberate-differences-from-kurel)
giving its documented verdict; any other is *unexplained* and printed with a first differing
line; a documented difference whose case no longer gives its verdict is printed as *no longer
occurring*. The script exits 1 when there is an unexplained or no-longer-occurring one, else 0.
``--list VERDICT`` also prints the cases of a verdict with that detail, to find the general
mechanism behind a difference. The pass/fail rules live in tests/unit/oam/kurel/test_kurel_oracle.py.

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

from oamkit.kurel import (  # noqa: E402
    DIFFERENCES_DOC,
    DISAGREEMENTS,
    DOCUMENTED_DIFFERENCES,
    ORACLE,
    VERDICTS,
    Case,
    Outcome,
    build,
    cases,
    no_longer_occurring,
    unexplained,
    verdict,
)


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


def report(verdicts: dict[str, str], details: dict[str, str]) -> list[str]:
    """The summary: figures per verdict (disagreements split into documented and unexplained), then the
    documented differences, the unexplained disagreements and the documented ones no longer occurring."""
    counts = Counter(verdicts.values())
    strays = unexplained(verdicts)
    gone = no_longer_occurring(verdicts)
    lines = []
    for name in VERDICTS:
        line = f"  {name:28} {counts.get(name, 0):5}"
        if name in DISAGREEMENTS and counts.get(name, 0):
            stray = sum(1 for case_id in strays if verdicts[case_id] == name)
            line += f"   documented {counts[name] - stray}, unexplained {stray}"
        lines.append(line)
    documented = sorted(c for c in DOCUMENTED_DIFFERENCES if c in verdicts and c not in gone)
    lines.append(f"documented differences ({DIFFERENCES_DOC}): {len(documented)}")
    lines += [f"  {c} {verdicts[c]}: {DOCUMENTED_DIFFERENCES[c].reason}" for c in documented]
    lines.append(f"unexplained disagreements: {len(strays)}")
    for case_id in strays:
        lines.append(f"  {case_id} {verdicts[case_id]}: {details.get(case_id, '')}")
    lines.append(f"documented differences no longer occurring: {len(gone)}")
    for case_id in gone:
        lines.append(f"  {case_id} documented as {DOCUMENTED_DIFFERENCES[case_id].verdict}, now {verdicts[case_id]}")
    return lines


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
    details: dict[str, str] = {}
    for case in corpus:
        ours = build(case)
        verdicts[case.id] = name = verdict(case, ours)
        if name in DISAGREEMENTS:
            details[case.id] = _detail(case, ours, name)
        if name in args.list:
            print(f"{case.id} {name}: {_detail(case, ours, name)}")
    elapsed = time.perf_counter() - started
    print(f"{len(corpus)} cases in {elapsed:.1f} s")
    print("\n".join(report(verdicts, details)))
    if args.json:
        args.json.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 1 if unexplained(verdicts) or no_longer_occurring(verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
