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

What no rule decides is listed below, case by case, with the spec section that makes ours
differ on purpose. An entry that stops differing fails, so the lists cannot go stale.
The folder is read in place; without it the test fails when ``OAM_REQUIRE_GOLDEN=1``.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Iterator

import pytest
from oamkit.kurel import (
    ORACLE,
    VERDICTS,
    Case,
    build,
    cases,
    is_schema_refusal,
    spec_stated_refusal,
    verdict,
)

#: Cases kurel builds whose bytes ours differs from on purpose, beyond the ordering rule.
BUILT_DIFFERENTLY = {
    "2-01191": (
        "docs/transform.md#network-policies: a cilium-networkpolicy endpointSelector is passed through as written; "
        "kurel's typed "
        "decoding drops the unknown key bogusNested"
    ),
}

#: Cases kurel refuses that ours builds on purpose.
ACCEPTED_ON_PURPOSE = {
    "2-00030": (
        "docs/transform.md#the-helm-component: helm delivery flux is a synonym of native "
        "(kurel's release knows only native and template)"
    ),
    "2-01874": (
        "docs/transform.md#scaling-and-storage, docs/transform.md#durations-and-quantities: a pvc size is a quantity, "
        "and a bare number (size: 123) is read as its decimal text"
    ),
}

#: Cases both refuse, where the first refusal differs on purpose and no rule decides it.
REFUSED_DIFFERENTLY = {
    "2-00425": (
        "D2, docs/transform.md#order-of-validation: kurel applies traits tier by tier "
        "with its default tiers (postgresql in services), "
        "so it reaches component jobs' ingress first; ours applies them in document order and first refuses "
        "component db's networkpolicy"
    ),
    "2-02310": (
        "D2, docs/transform.md#order-of-validation: kurel applies traits tier by tier "
        "with its default tiers (daemonset in infra), "
        "so it reaches component db's ingress first; ours applies them in document order and first refuses "
        "component worker's security-context"
    ),
}

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
    if case.rc == 0:
        _check_built(case, name, ours.stdout, ours.stderr)
    else:
        _check_refused(case, name, ours.rc, ours.stderr)


def _check_built(case: Case, name: str, stdout: str, stderr: str) -> None:
    if case.id in BUILT_DIFFERENTLY:
        assert name == "built-differs", f"{case.id} is listed as differing on purpose but now gives {name}"
        return
    if name == "built-identical":
        return
    if name == "refused-by-schema":
        assert is_schema_refusal(stderr)
        return
    assert name != "built-differs", f"kurel built {case.id}; ours prints other bytes:\n{stdout}"
    raise AssertionError(f"kurel built {case.id}; ours refused it:\n{stderr}")


def _check_refused(case: Case, name: str, rc: int, stderr: str) -> None:
    if case.id in ACCEPTED_ON_PURPOSE:
        assert name == "accepted-but-kurel-refused", f"{case.id} is listed as accepted on purpose but now gives {name}"
        return
    assert rc == 1, f"kurel refused {case.id} with {case.stderr!r}; ours exited {rc}"
    if case.id in REFUSED_DIFFERENTLY:
        assert name == "refused-different-text", f"{case.id} is listed as refused differently but now gives {name}"
        return
    if name == "refused-spec-text":
        assert spec_stated_refusal(case.stderr, stderr) is not None
        return
    assert stderr == case.stderr
