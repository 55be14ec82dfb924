"""Readiness of Flux objects (issue 14): Ready only with a Ready condition of the current generation."""

from __future__ import annotations

from typing import Any

from oam_operator.reconciler.status import DefaultStatusAnalyzer

ANALYZER = DefaultStatusAnalyzer("oam-operator.dev")


def release(status: dict[str, Any] | None = None, generation: int = 2) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                           "metadata": {"name": "web", "namespace": "shop", "generation": generation}}
    if status is not None:
        obj["status"] = status
    return obj


def ready(status: str, generation: int | None = None, message: str = "") -> dict[str, Any]:
    condition: dict[str, Any] = {"type": "Ready", "status": status, "reason": "R", "message": message}
    if generation is not None:
        condition["observedGeneration"] = generation
    return condition


def test_an_object_nobody_reconciles_stays_in_progress_and_says_so() -> None:
    for obj in (release(), release({})):
        result = ANALYZER.compute(obj)
        assert (result.status, result.message) == (
            "InProgress", "HelmRelease not reconciled yet: no Ready condition (is Flux's helm-controller running?)")
    source = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
              "metadata": {"name": "charts", "generation": 1}}
    assert ANALYZER.compute(source).message == (
        "HelmRepository not reconciled yet: no Ready condition (is Flux's source-controller running?)")


def test_ready_of_an_older_generation_is_not_ready() -> None:
    result = ANALYZER.compute(release({"observedGeneration": 1, "conditions": [ready("True", 1)]}))
    assert (result.status, result.message) == (
        "InProgress",
        "HelmRelease generation 2 not reconciled yet: Ready is of generation 1 (is Flux's helm-controller running?)")
    result = ANALYZER.compute(release({"conditions": [ready("True")]}))
    assert result.message == (
        "HelmRelease generation 2 not reconciled yet: Ready is of generation unknown "
        "(is Flux's helm-controller running?)")


def test_ready_of_the_current_generation_is_current() -> None:
    assert ANALYZER.compute(release({"observedGeneration": 2, "conditions": [ready("True", 2)]})).status == "Current"
    assert ANALYZER.compute(release({"conditions": [ready("True", 2)]})).status == "Current"


def test_not_ready_and_stalled() -> None:
    result = ANALYZER.compute(release({"observedGeneration": 2, "conditions": [ready("False", 2, "install failed")]}))
    assert (result.status, result.message) == ("InProgress", "install failed")
    stalled = {"type": "Stalled", "status": "True", "reason": "RetriesExceeded", "message": "gave up"}
    result = ANALYZER.compute(release({"observedGeneration": 2, "conditions": [ready("False", 2, "x"), stalled]}))
    assert (result.status, result.message) == ("Failed", "gave up")


def test_other_kinds_keep_kstatus() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert ANALYZER.compute(config).status == "Current"
