"""Agreement with ``kurel build`` on every case of the oracle corpus (../shared/kurel-oracle).

1,792 generated Applications (no policies, no ``helm`` type: there kurel predates our spec) and
kurel's verdict on each. Each case runs in-process as ``oam-operator build app.yaml --profile
cluster.yaml --no-component-label`` inside its folder (kurel_oracle.py) and must agree:

* kurel built it → ours prints the same bytes (``build`` prints in kurel's release order,
  oam/release_order.py; the bundle tree keeps D2/D6/D8); or ours refuses it
  with the schema's message because the Application carries an authored property the schema
  does not declare or types differently (kurel ignores those, ours refuses by design:
  docs/transform.md#validating-authored-properties).
* kurel refused it → ours refuses it (exit 1) with kurel's words, unless a rule of
  ``spec_stated_refusal`` finds that the spec states our text (each rule names its section).

What no rule decides is a deliberate difference (docs/transform.md#deliberate-differences-from-kurel),
listed case by case in ``oamkit.kurel.DOCUMENTED_DIFFERENCES`` with the verdict it gives and its
reason. An entry that stops giving its verdict fails, so the list cannot go stale; the docs table
names the same cases.
The folder is read in place; without it the test fails when ``OAM_REQUIRE_GOLDEN=1``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Iterator

import pytest
from oamkit import REPO_ROOT
from oamkit.kurel import (
    DIFFERENCES_DOC,
    DISAGREEMENTS,
    DOCUMENTED_DIFFERENCES,
    ORACLE,
    VERDICTS,
    Case,
    build,
    cases,
    is_schema_refusal,
    no_longer_occurring,
    spec_stated_refusal,
    unexplained,
    verdict,
)

CASES = cases()
FIGURES: Counter[str] = Counter()


def _params() -> list[object]:
    if not CASES:
        return [pytest.param(None, id="oracle-folder-missing")]
    return [pytest.param(case, id=case.id) for case in CASES]


@pytest.fixture(scope="module", autouse=True)
def agreement_figures(request: pytest.FixtureRequest) -> Iterator[None]:
    """Print how many cases fell in each verdict once the module has run."""
    yield
    if not FIGURES:
        return
    lines = [f"kurel oracle agreement over {sum(FIGURES.values())} cases:"]
    lines += [f"  {name:28} {FIGURES[name]:5}" for name in VERDICTS if FIGURES[name]]
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        print("\n" + "\n".join(lines))


def _case_or_skip(case: Case | None) -> Case:
    if case is None:
        message = f"kurel oracle corpus not found at {ORACLE}"
        if os.environ.get("OAM_REQUIRE_GOLDEN") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return case


@pytest.mark.parametrize("case", _params())
def test_case_agrees_with_kurel(case: Case | None) -> None:
    case = _case_or_skip(case)
    ours = build(case)
    name = verdict(case, ours)
    FIGURES[name] += 1
    documented = DOCUMENTED_DIFFERENCES.get(case.id)
    if documented is not None:
        assert name == documented.verdict, (
            f"{case.id} is documented as {documented.verdict} ({DIFFERENCES_DOC}) but now gives {name}"
        )
        if name.startswith("refused"):
            assert ours.rc == 1, f"{case.id}: ours exited {ours.rc}"
        return
    if case.rc == 0:
        _check_built(case, name, ours.stdout, ours.stderr)
    else:
        _check_refused(case, name, ours.rc, ours.stderr)


def _check_built(case: Case, name: str, stdout: str, stderr: str) -> None:
    if name == "built-identical":
        return
    if name == "refused-by-schema":
        assert is_schema_refusal(stderr)
        return
    assert name != "built-differs", f"kurel built {case.id}; ours prints other bytes:\n{stdout}"
    raise AssertionError(f"kurel built {case.id}; ours refused it:\n{stderr}")


def _check_refused(case: Case, name: str, rc: int, stderr: str) -> None:
    assert rc == 1, f"kurel refused {case.id} with {case.stderr!r}; ours exited {rc}"
    if name == "refused-spec-text":
        assert spec_stated_refusal(case.stderr, stderr) is not None
        return
    assert stderr == case.stderr


def test_documented_differences_are_disagreements_named_in_the_docs() -> None:
    """Each entry is a disagreement verdict whose reason names a docs section, and the docs table
    (DIFFERENCES_DOC) lists exactly these cases."""
    assert DOCUMENTED_DIFFERENCES, "nothing documented: the table below would be checked against nothing"
    for case_id, difference in DOCUMENTED_DIFFERENCES.items():
        assert difference.verdict in DISAGREEMENTS, case_id
        assert re.match(r"docs/transform\.md#[a-z]", difference.reason), case_id  # resolved by test_doc_references
    page, _, anchor = DIFFERENCES_DOC.partition("#")
    text = (REPO_ROOT / page).read_text(encoding="utf-8")
    heading = "### " + anchor.replace("-", " ").capitalize()
    assert heading in text, f"{page} has no heading {heading!r}"
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    assert set(re.findall(r"\b2-[0-9]{5}\b", section)) == set(DOCUMENTED_DIFFERENCES)


def test_unexplained_and_no_longer_occurring_are_told_apart() -> None:
    documented = next(iter(DOCUMENTED_DIFFERENCES))
    verdict_of = DOCUMENTED_DIFFERENCES[documented].verdict
    assert unexplained({documented: verdict_of, "x-1": "built-identical", "x-2": "refused-spec-text"}) == []
    assert no_longer_occurring({documented: verdict_of}) == []
    assert unexplained({"x-1": "built-differs", "x-2": "refused-but-kurel-built", "x-3": "refused-by-schema"}) == [
        "x-1", "x-2"
    ]
    assert no_longer_occurring({documented: "built-identical"}) == [documented]
    other = "refused-but-kurel-built" if verdict_of != "refused-but-kurel-built" else "built-differs"
    assert unexplained({documented: other}) == [documented]  # documented, but for another verdict
    assert no_longer_occurring({}) == []  # a case that was not run is not reported
