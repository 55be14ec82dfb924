"""bench/oracle_agreement.py's summary tells documented differences from unexplained ones and flags
documented ones that no longer occur (docs/transform.md#deliberate-differences-from-kurel)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from oamkit import REPO_ROOT
from oamkit.kurel import DIFFERENCES_DOC, DOCUMENTED_DIFFERENCES


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("oracle_agreement", REPO_ROOT / "bench" / "oracle_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_documented_unexplained_and_no_longer_occurring_are_reported_apart() -> None:
    report = _script().report
    documented = sorted(DOCUMENTED_DIFFERENCES)
    gone, kept = documented[0], documented[1:]
    verdicts = {case_id: DOCUMENTED_DIFFERENCES[case_id].verdict for case_id in kept}
    verdicts |= {gone: "built-identical", "x-1": "built-differs", "x-2": "refused-same-text"}
    lines = report(verdicts, {"x-1": "line 3: kurel 'a' / ours 'b'"})
    documented_built_differs = sum(1 for c in kept if DOCUMENTED_DIFFERENCES[c].verdict == "built-differs")
    assert f"  {'built-differs':28} {documented_built_differs + 1:5}   documented {documented_built_differs}, " \
           "unexplained 1" in lines
    assert f"  {'refused-same-text':28} {1:5}" in lines  # an agreement: not split
    start = lines.index(f"documented differences ({DIFFERENCES_DOC}): {len(kept)}")
    assert lines[start + 1:start + 1 + len(kept)] == [
        f"  {c} {DOCUMENTED_DIFFERENCES[c].verdict}: {DOCUMENTED_DIFFERENCES[c].reason}" for c in kept
    ]
    assert lines[start + 1 + len(kept):] == [
        "unexplained disagreements: 1",
        "  x-1 built-differs: line 3: kurel 'a' / ours 'b'",
        "documented differences no longer occurring: 1",
        f"  {gone} documented as {DOCUMENTED_DIFFERENCES[gone].verdict}, now built-identical",
    ]


def test_all_documented_and_occurring() -> None:
    verdicts = {case_id: difference.verdict for case_id, difference in DOCUMENTED_DIFFERENCES.items()}
    lines = _script().report(verdicts, {})
    assert lines[-2:] == ["unexplained disagreements: 0", "documented differences no longer occurring: 0"]
