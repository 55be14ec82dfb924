"""Unit tests of the status analyzer (docs/reconciler.md#readiness): the analyzer table of
docs/reconciler.md#the-status-analyzer, the
status hints, the extra conditions, the Job rule, and every branch of the kstatus port."""

from __future__ import annotations

import ast
import copy
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.reconciler.status import (
    STATUS_HINT_SUFFIX,
    DefaultStatusAnalyzer,
    StatusAnalysisError,
    StatusAnalyzer,
    StatusHintError,
    StatusHints,
    StatusResult,
    compute_kstatus,
    parse_status_hints,
    status_hint_annotation_key,
)

NOW = datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC)
HINT_KEY = "test/status-hint"

CURRENT = "Current"
IN_PROGRESS = "InProgress"
FAILED = "Failed"
TERMINATING = "Terminating"


def analyzer(name: str = "test") -> DefaultStatusAnalyzer:
    return DefaultStatusAnalyzer(name, clock=lambda: NOW)


def compute(obj: dict[str, Any]) -> tuple[str, str]:
    result = analyzer().compute(obj)
    return result.status, result.message


def cond(
    type_: str, status: str, og: int | None = None, *, reason: str = "", message: str | None = None
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "type": type_,
        "status": status,
        "message": f"{type_} is {status}" if message is None else message,
    }
    if reason:
        c["reason"] = reason
    if og is not None:
        c["observedGeneration"] = og
    return c


# ---------------------------------------------------------------------------------------
# The analyzer table (3 observedGenerations x 2 hint settings x 18 groups = 108 rows),
# docs/reconciler.md#the-status-analyzer
# ---------------------------------------------------------------------------------------

R = tuple[str, str]


def gen(og: int) -> R:
    # The object has no kind, so the kstatus message starts with a blank (faithful port).
    return IN_PROGRESS, f" generation is 3, but latest observed generation is {og}"


RESOURCE_CURRENT: R = (CURRENT, "Resource is current")
RESOURCE_READY: R = (CURRENT, "Resource is Ready")
WAIT_TEST: R = (IN_PROGRESS, "Waiting for condition Test")

# Each group: (id, extra hints, conditions, expected with og absent and no og hint,
# expected with og absent and the has-observed-generation hint, expected with og = 3).
# With og = 1 every row is the generation mismatch `gen(1)`, hint or not.
GROUPS: list[tuple[str, list[str], list[dict[str, Any]], R, R, R]] = [
    ("no-conditions", [], [], RESOURCE_CURRENT, gen(-1), RESOURCE_CURRENT),
]
for og_label, cond_og in (("no-og", None), ("og0", 0), ("og1", 1), ("og3", 3)):
    for ready_status in ("Unknown", "False", "True"):
        as_ready: R = RESOURCE_READY if ready_status == "True" else (IN_PROGRESS, f"Ready is {ready_status}")
        # With the hint and og absent, the condition's observedGeneration (0 = absent) is used.
        with_hint = as_ready if cond_og == 3 else gen(cond_og if cond_og else -1)
        GROUPS.append(
            (
                f"ready-{ready_status.lower()}-{og_label}",
                [],
                [cond("Ready", ready_status, cond_og)],
                as_ready,
                with_hint,
                as_ready,
            )
        )
GROUPS += [
    ("has-ready-condition", ["has-ready-condition"], [], (IN_PROGRESS, ""), gen(-1), (IN_PROGRESS, "")),
    ("conditions-test-none", ["conditions=Test"], [], WAIT_TEST, gen(-1), WAIT_TEST),
    ("conditions-test-unknown", ["conditions=Test"], [cond("Test", "Unknown")], WAIT_TEST, gen(-1), WAIT_TEST),
    ("conditions-test-false", ["conditions=Test"], [cond("Test", "False")], WAIT_TEST, gen(-1), WAIT_TEST),
    ("conditions-test-true", ["conditions=Test"], [cond("Test", "True")], RESOURCE_CURRENT, gen(-1), RESOURCE_CURRENT),
]
assert len(GROUPS) == 18


def _table() -> list[Any]:
    rows = []
    for group_id, hints, conditions, absent_plain, absent_hint, og3 in GROUPS:
        for og in (None, 1, 3):
            for og_hint in (False, True):
                expected = {None: absent_hint if og_hint else absent_plain, 1: gen(1), 3: og3}[og]
                row_id = f"{group_id}-og{og if og is not None else 'absent'}-{'hint' if og_hint else 'nohint'}"
                rows.append(pytest.param(hints, conditions, og, og_hint, expected, id=row_id))
    return rows


TABLE = _table()


def _spec_rule(hints: list[str], conditions: list[dict[str, Any]], og: int | None, og_hint: bool) -> str:
    """The rule of the analyzer table (docs/reconciler.md#the-status-analyzer),
    written independently of the implementation, to cross-check TABLE."""
    ready = [c for c in conditions if c["type"] == "Ready"]
    effective = og
    if og_hint and effective is None:
        effective = (ready[-1].get("observedGeneration") or None) if ready else None
        if effective is None:
            effective = -1
    if (effective is not None and effective != 3) or ("has-ready-condition" in hints and not ready):
        status = IN_PROGRESS
    elif ready:
        status = CURRENT if ready[0]["status"] == "True" else IN_PROGRESS
    else:
        status = CURRENT
    if "conditions=Test" in hints and not any(c["type"] == "Test" and c["status"] == "True" for c in conditions):
        status = IN_PROGRESS
    return status


def test_table_has_108_rows_and_matches_the_spec_rule() -> None:
    assert len(TABLE) == 108
    assert len({p.id for p in TABLE}) == 108
    for param in TABLE:
        hints, conditions, og, og_hint, expected = param.values
        assert expected[0] == _spec_rule(hints, conditions, og, og_hint), param.id


@pytest.mark.parametrize(("hints", "conditions", "og", "og_hint", "expected"), TABLE)
def test_analyzer_table(
    hints: list[str], conditions: list[dict[str, Any]], og: int | None, og_hint: bool, expected: R
) -> None:
    all_hints = [*hints, *(["has-observed-generation"] if og_hint else [])]
    obj: dict[str, Any] = {"metadata": {"name": "x", "generation": 3}}
    if all_hints:
        obj["metadata"]["annotations"] = {HINT_KEY: ",".join(all_hints)}
    status: dict[str, Any] = {}
    if og is not None:
        status["observedGeneration"] = og
    if conditions:
        status["conditions"] = copy.deepcopy(conditions)
    if status:
        obj["status"] = status
    before = copy.deepcopy(obj)

    assert analyzer().compute(obj) == StatusResult(*expected)
    assert obj == before  # the hints work on a copy


def test_table_examples_from_the_spec() -> None:
    base: dict[str, Any] = {"metadata": {"generation": 3}}
    assert compute(base)[0] == CURRENT
    hinted = {"metadata": {"generation": 3, "annotations": {HINT_KEY: "has-observed-generation"}}}
    assert compute(hinted)[0] == IN_PROGRESS
    assert compute({**hinted, "status": {"conditions": [cond("Ready", "True", 3)]}})[0] == CURRENT
    assert compute({**hinted, "status": {"conditions": [cond("Ready", "True", 1)]}})[0] == IN_PROGRESS
    test_hint = {"metadata": {"generation": 3, "annotations": {HINT_KEY: "conditions=Test"}}}
    assert (
        compute({**test_hint, "status": {"observedGeneration": 3, "conditions": [cond("Test", "True")]}})[0] == CURRENT
    )
    assert compute({**test_hint, "status": {"observedGeneration": 1, "conditions": [cond("Test", "True")]}})[0] == (
        IN_PROGRESS
    )


# ---------------------------------------------------------------------------------------
# Status hints (docs/reconciler.md#status-hints)
# ---------------------------------------------------------------------------------------


def test_status_hint_annotation_key() -> None:
    assert STATUS_HINT_SUFFIX == "status-hint"
    assert status_hint_annotation_key("oam-operator.dev") == "oam-operator.dev/status-hint"
    assert status_hint_annotation_key("test") == HINT_KEY


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("has-observed-generation", StatusHints(has_observed_generation=True)),
        ("HasObservedGeneration", StatusHints(has_observed_generation=True)),
        (" has_observed_generation ", StatusHints(has_observed_generation=True)),
        ("has-ready-condition", StatusHints(has_ready_condition=True)),
        ("HAS.READY.CONDITION", StatusHints(has_ready_condition=True)),
        ("has-observed-generation, HasReadyCondition", StatusHints(True, True)),
        ("conditions=Test", StatusHints(conditions=("Test",))),
        ("Conditions=A;B", StatusHints(conditions=("A", "B"))),
        ("conditions=A,conditions=B;A", StatusHints(conditions=("A", "B", "A"))),
        ("conditions= Spaced ", StatusHints(conditions=(" Spaced ",))),  # values are not trimmed
        ("conditions=a=b", StatusHints(conditions=("a=b",))),
        ("conditions=", StatusHints(conditions=("",))),
        ("conditions=A;", StatusHints(conditions=("A", ""))),
    ],
)
def test_parse_status_hints(value: str, expected: StatusHints) -> None:
    assert parse_status_hints(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("has-observed-generation=x", "status hint has-observed-generation does not take a value"),
        ("HasObservedGeneration=", "status hint has-observed-generation does not take a value"),
        ("has-ready-condition=true", "status hint has-ready-condition does not take a value"),
        ("conditions", "status hint conditions requires a value"),
        ("has-ready-condition,Conditions", "status hint conditions requires a value"),
        ("bogus", "unknown status hint bogus"),
        ("Bogus=1", "unknown status hint Bogus"),
        ("=x", "unknown status hint =x"),
        ("", "unknown status hint "),
        ("has-ready-condition,", "unknown status hint "),
        ("has--ready-condition", "unknown status hint has--ready-condition"),
        ("bogus,conditions", "unknown status hint bogus"),  # the first bad piece wins
    ],
)
def test_status_hint_errors(value: str, message: str) -> None:
    with pytest.raises(StatusHintError) as info:
        parse_status_hints(value)
    assert str(info.value) == message
    # The analyzer raises the same error when it meets the annotation on a live object.
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"annotations": {HINT_KEY: value}}}
    with pytest.raises(StatusAnalysisError) as info2:
        analyzer().compute(obj)
    assert str(info2.value) == message
    assert isinstance(info2.value, StatusHintError)


def test_hints_of_another_reconciler_are_ignored() -> None:
    obj = {"metadata": {"generation": 3, "annotations": {"other/status-hint": "bogus", "test/other": "x"}}}
    assert compute(obj) == (CURRENT, "Resource is current")
    # ... and a bad hint is only an error for the analyzer that owns the key.
    assert analyzer("other").name == "other"
    with pytest.raises(StatusHintError):
        analyzer("other").compute(obj)


def test_null_hint_annotation_is_absent_and_non_string_raises() -> None:
    assert compute({"metadata": {"annotations": {HINT_KEY: None}}}) == (CURRENT, "Resource is current")
    with pytest.raises(StatusAnalysisError) as info:
        compute({"metadata": {"annotations": {HINT_KEY: 1}}})
    assert str(info.value) == "invalid annotation test/status-hint: expected a string, got number"


def test_has_observed_generation_keeps_a_reported_generation() -> None:
    obj = {
        "metadata": {"generation": 3, "annotations": {HINT_KEY: "has-observed-generation"}},
        "status": {"observedGeneration": 3, "conditions": [cond("Ready", "True", 1)]},
    }
    assert compute(obj) == RESOURCE_READY


def test_has_observed_generation_uses_the_last_ready_condition() -> None:
    meta = {"generation": 3, "annotations": {HINT_KEY: "has-observed-generation"}}
    last_is_3 = {"metadata": meta, "status": {"conditions": [cond("Ready", "True", 1), cond("Ready", "True", 3)]}}
    assert compute(last_is_3) == RESOURCE_READY
    last_is_1 = {"metadata": meta, "status": {"conditions": [cond("Ready", "True", 3), cond("Ready", "True", 1)]}}
    assert compute(last_is_1) == gen(1)


def test_has_observed_generation_without_metadata_generation_changes_nothing() -> None:
    obj = {"metadata": {"annotations": {HINT_KEY: "has-observed-generation"}}}
    assert compute(obj) == RESOURCE_CURRENT


def test_has_ready_condition_with_a_ready_condition_changes_nothing() -> None:
    obj = {
        "metadata": {"annotations": {HINT_KEY: "has-ready-condition"}},
        "status": {"conditions": [cond("Ready", "True")]},
    }
    assert compute(obj) == RESOURCE_READY


def test_has_ready_condition_keeps_other_conditions() -> None:
    obj = {
        "metadata": {"annotations": {HINT_KEY: "has-ready-condition,conditions=Synced"}},
        "status": {"conditions": [cond("Synced", "True")]},
    }
    before = copy.deepcopy(obj)
    assert compute(obj) == (IN_PROGRESS, "")
    assert obj == before


def test_empty_condition_name_never_becomes_current() -> None:
    obj = {"metadata": {"annotations": {HINT_KEY: "conditions="}}, "status": {"conditions": [cond("Ready", "True")]}}
    assert compute(obj) == (IN_PROGRESS, "Waiting for condition ")


def test_extra_condition_must_be_true_in_every_occurrence() -> None:
    meta = {"annotations": {HINT_KEY: "conditions=A;B"}}
    ok = {"metadata": meta, "status": {"conditions": [cond("A", "True"), cond("B", "True"), cond("A", "True")]}}
    assert compute(ok) == RESOURCE_CURRENT
    second_false = {
        "metadata": meta,
        "status": {"conditions": [cond("A", "True"), cond("B", "True"), cond("A", "False")]},
    }
    assert compute(second_false) == (IN_PROGRESS, "Waiting for condition A")
    b_missing = {"metadata": meta, "status": {"conditions": [cond("A", "True")]}}
    assert compute(b_missing) == (IN_PROGRESS, "Waiting for condition B")


def test_extra_conditions_do_not_override_a_non_current_result() -> None:
    obj = {
        "metadata": {"annotations": {HINT_KEY: "conditions=A"}},
        "status": {"conditions": [cond("Stalled", "True", message="broken")]},
    }
    assert compute(obj) == (FAILED, "broken")


# ---------------------------------------------------------------------------------------
# docs/reconciler.md#the-status-analyzer: CRD / APIService extra conditions, the Job rule
# ---------------------------------------------------------------------------------------

CRD_V1 = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.x.io"},
}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([cond("NamesAccepted", "True"), cond("Established", "True")], (CURRENT, "CRD is established")),
        ([cond("Established", "True")], (IN_PROGRESS, "Waiting for condition NamesAccepted")),
        (
            [cond("NamesAccepted", "True"), cond("Established", "True"), cond("Established", "Unknown")],
            (IN_PROGRESS, "Waiting for condition Established"),
        ),
        ([], (IN_PROGRESS, "Install in progress")),
        (
            [cond("NamesAccepted", "False", message="names clash"), cond("Established", "True")],
            (FAILED, "names clash"),
        ),
    ],
)
def test_crd_v1_extra_conditions(conditions: list[dict[str, Any]], expected: R) -> None:
    assert compute({**CRD_V1, "status": {"conditions": conditions}}) == expected


def test_crd_extra_conditions_apply_to_v1_only() -> None:
    v1beta1 = {
        **CRD_V1,
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "status": {"conditions": [cond("Established", "True")]},
    }
    assert compute(v1beta1) == (CURRENT, "CRD is established")


def test_extra_conditions_order_hints_first_then_kind() -> None:
    obj = {
        **CRD_V1,
        "metadata": {"name": "foos.x.io", "annotations": {HINT_KEY: "conditions=Custom"}},
        "status": {"conditions": [cond("Established", "True")]},
    }
    assert compute(obj) == (IN_PROGRESS, "Waiting for condition Custom")


APISERVICE_V1 = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.x.io"}}


def test_apiservice_v1_waits_for_available() -> None:
    # kstatus alone calls it Current (no rule, no conditions) ...
    assert compute_kstatus(APISERVICE_V1, now=NOW) == StatusResult(CURRENT, "Resource is current")
    # ... the analyzer does not.
    assert compute(APISERVICE_V1) == (IN_PROGRESS, "Waiting for condition Available")
    assert compute({**APISERVICE_V1, "status": {"conditions": [cond("Available", "False")]}}) == (
        IN_PROGRESS,
        "Waiting for condition Available",
    )
    assert compute({**APISERVICE_V1, "status": {"conditions": [cond("Available", "True")]}}) == RESOURCE_CURRENT


def test_apiservice_extra_condition_applies_to_v1_only() -> None:
    assert compute({**APISERVICE_V1, "apiVersion": "apiregistration.k8s.io/v1beta1"}) == RESOURCE_CURRENT


JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"completions": 2}}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({}, (IN_PROGRESS, "Job not started")),
        ({"startTime": "2026-03-01T09:59:00Z", "active": 1}, (IN_PROGRESS, "Job not finished")),
        (
            {"startTime": "2026-03-01T09:59:00Z", "succeeded": 2, "conditions": [cond("Complete", "True")]},
            (CURRENT, "Job Completed. succeeded: 2/2"),
        ),
        (
            {"startTime": "2026-03-01T09:59:00Z", "failed": 3, "conditions": [cond("Failed", "True")]},
            (FAILED, "Job Failed. failed: 3/2"),
        ),
        (
            {"startTime": "2026-03-01T09:59:00Z", "conditions": [cond("Complete", "False"), cond("Failed", "False")]},
            (IN_PROGRESS, "Job not finished"),
        ),
        # first decisive condition wins
        (
            {"succeeded": 2, "failed": 1, "conditions": [cond("Failed", "True"), cond("Complete", "True")]},
            (FAILED, "Job Failed. failed: 1/2"),
        ),
    ],
)
def test_job(status: dict[str, Any], expected: R) -> None:
    assert compute({**JOB, "status": status}) == expected


def test_job_rule_applies_to_batch_v1_only() -> None:
    obj = {**JOB, "apiVersion": "batch/v2", "status": {"startTime": "2026-03-01T09:59:00Z", "active": 1, "failed": 1}}
    assert compute(obj) == (CURRENT, "Job in progress. success:0, active: 1, failed: 1")
    assert compute_kstatus({**JOB, "status": obj["status"]}, now=NOW) == StatusResult(
        CURRENT, "Job in progress. success:0, active: 1, failed: 1"
    )


def test_job_completions_default_to_parallelism() -> None:
    obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"parallelism": 3},
        "status": {"succeeded": 3, "conditions": [cond("Complete", "True")]},
    }
    assert compute(obj) == (CURRENT, "Job Completed. succeeded: 3/3")
    obj["spec"] = {}
    assert compute(obj) == (CURRENT, "Job Completed. succeeded: 3/1")


# ---------------------------------------------------------------------------------------
# docs/reconciler.md#kstatus-rules: generic rules
# ---------------------------------------------------------------------------------------


def test_deletion_timestamp_is_terminating_before_everything() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"deletionTimestamp": "2026-03-01T10:00:00Z", "generation": 2},
        "status": {"observedGeneration": 1, "conditions": [cond("Stalled", "True")]},
    }
    assert compute(obj) == (TERMINATING, "Resource scheduled for deletion")
    obj["metadata"]["deletionTimestamp"] = ""
    assert compute(obj) == (IN_PROGRESS, "ConfigMap generation is 2, but latest observed generation is 1")
    obj["metadata"]["deletionTimestamp"] = None
    assert compute(obj)[0] == IN_PROGRESS


def test_terminating_wins_over_extra_conditions() -> None:
    obj = {**APISERVICE_V1, "metadata": {"name": "v1.x.io", "deletionTimestamp": "2026-03-01T10:00:00Z"}}
    assert compute(obj) == (TERMINATING, "Resource scheduled for deletion")


def test_generation_check() -> None:
    obj: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"generation": 5}}
    assert compute(obj) == RESOURCE_CURRENT  # no observedGeneration: check skipped
    obj["status"] = {"observedGeneration": 4}
    assert compute(obj) == (IN_PROGRESS, "Foo generation is 5, but latest observed generation is 4")
    obj["status"] = {"observedGeneration": 5}
    assert compute(obj) == RESOURCE_CURRENT
    assert compute({"kind": "Foo", "status": {"observedGeneration": 4}}) == RESOURCE_CURRENT  # no generation


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"metadata": {"generation": "3"}}, "invalid metadata.generation: expected an integer, got string"),
        ({"metadata": {"generation": 3.0}}, "invalid metadata.generation: expected an integer, got number"),
        ({"metadata": {"generation": True}}, "invalid metadata.generation: expected an integer, got boolean"),
        ({"status": {"observedGeneration": "1"}}, "invalid status.observedGeneration: expected an integer, got string"),
        ({"status": "ok"}, "invalid status: expected an object, got string"),
        ({"status": {"conditions": {}}}, "invalid status.conditions: expected an array, got object"),
        ({"status": {"conditions": ["Ready"]}}, "invalid status.conditions[0]: expected an object, got string"),
        (
            {"status": {"conditions": [cond("A", "True"), {"type": 1, "status": "True"}]}},
            "invalid status.conditions[1].type: expected a string, got number",
        ),
        (
            {"status": {"conditions": [{"type": "A", "status": True}]}},
            "invalid status.conditions[0].status: expected a string, got boolean",
        ),
        (
            {"status": {"conditions": [{"type": "A", "status": "True", "message": []}]}},
            "invalid status.conditions[0].message: expected a string, got array",
        ),
        (
            {"status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": "3"}]}},
            "invalid status.conditions[0].observedGeneration: expected an integer, got string",
        ),
        ({"metadata": "x"}, "invalid metadata: expected an object, got string"),
        ({"metadata": {"deletionTimestamp": 5}}, "invalid metadata.deletionTimestamp: expected a string, got number"),
    ],
)
def test_wrongly_typed_fields_raise(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(StatusAnalysisError) as info:
        analyzer().compute(obj)
    assert str(info.value) == message


def test_wrong_types_raise_for_every_kind() -> None:
    with pytest.raises(StatusAnalysisError):
        compute({"apiVersion": "v1", "kind": "ConfigMap", "status": {"conditions": "x"}})


def test_non_mapping_object_raises() -> None:
    with pytest.raises(StatusAnalysisError) as info:
        analyzer().compute([])  # type: ignore[arg-type]
    assert str(info.value) == "invalid object: expected an object, got array"


def test_null_fields_read_as_absent() -> None:
    obj = {
        "apiVersion": None,
        "kind": None,
        "metadata": {"generation": None, "annotations": None},
        "status": {"observedGeneration": None, "conditions": [{"type": "Ready", "status": "True", "reason": None}]},
    }
    assert compute(obj) == RESOURCE_READY
    assert compute({"status": None}) == RESOURCE_CURRENT
    assert compute({"status": {"conditions": None}}) == RESOURCE_CURRENT


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([cond("Reconciling", "True", message="working")], (IN_PROGRESS, "working")),
        ([cond("Stalled", "True", message="stuck")], (FAILED, "stuck")),
        ([cond("Stalled", "True", message="stuck"), cond("Reconciling", "True")], (FAILED, "stuck")),
        ([cond("Reconciling", "True", message="working"), cond("Stalled", "True")], (IN_PROGRESS, "working")),
        ([cond("Reconciling", "False"), cond("Stalled", "Unknown")], RESOURCE_CURRENT),
        ([cond("Reconciling", "True", message="working"), cond("Ready", "True")], (IN_PROGRESS, "working")),
    ],
)
def test_reconciling_and_stalled(conditions: list[dict[str, Any]], expected: R) -> None:
    assert compute({"apiVersion": "example.com/v1", "kind": "Foo", "status": {"conditions": conditions}}) == expected


def test_generic_conditions_come_before_per_kind_rules() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "status": {"conditions": [cond("Stalled", "True", message="m")]}}
    assert compute(obj) == (FAILED, "m")


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([cond("Ready", "True")], RESOURCE_READY),
        ([cond("Ready", "False", message="not yet")], (IN_PROGRESS, "not yet")),
        ([cond("Ready", "Unknown", message="hm")], (IN_PROGRESS, "hm")),
        ([cond("Ready", "Maybe"), cond("Ready", "True")], RESOURCE_READY),  # undecisive statuses are skipped
        ([cond("Ready", "False", message="first"), cond("Ready", "True")], (IN_PROGRESS, "first")),
        ([cond("Ready", "Maybe")], RESOURCE_CURRENT),
        ([cond("Synced", "False")], RESOURCE_CURRENT),
        ([], RESOURCE_CURRENT),
    ],
)
def test_ready_condition_of_custom_resources(conditions: list[dict[str, Any]], expected: R) -> None:
    assert compute({"apiVersion": "example.com/v1", "kind": "Foo", "status": {"conditions": conditions}}) == expected


def test_per_kind_rules_shadow_the_ready_condition() -> None:
    obj = {"apiVersion": "v1", "kind": "Secret", "status": {"conditions": [cond("Ready", "False")]}}
    assert compute(obj) == (CURRENT, "Resource is always ready")


@pytest.mark.parametrize(
    ("api_version", "kind", "has_rule"),
    [
        ("apps/v1", "Deployment", True),
        ("apps/v1beta2", "Deployment", True),
        ("extensions/v1beta1", "Deployment", True),
        ("v1", "Deployment", False),
        ("example.com/v1", "Deployment", False),
        ("apps/v1", "deployment", False),
        ("a/b/c", "Deployment", False),
        ("", "ConfigMap", True),
        ("v1", "ConfigMap", True),
        ("example.com/v1", "ConfigMap", False),
    ],
)
def test_per_kind_rules_are_keyed_by_group_and_kind(api_version: str, kind: str, has_rule: bool) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "spec": {"replicas": 2}}
    if kind == "ConfigMap":
        expected = (CURRENT, "Resource is always ready") if has_rule else RESOURCE_CURRENT
    else:
        expected = (IN_PROGRESS, "Replicas: 0/2") if has_rule else RESOURCE_CURRENT
    assert compute(obj) == expected


# ---------------------------------------------------------------------------------------
# docs/reconciler.md#kstatus-rules: per-kind rules
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("api_version", "kind"), [("v1", "ConfigMap"), ("v1", "Secret"), ("batch/v1", "CronJob")])
def test_always_ready(api_version: str, kind: str) -> None:
    assert compute({"apiVersion": api_version, "kind": kind}) == (CURRENT, "Resource is always ready")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, (CURRENT, "Service is ready")),
        ({"type": "ClusterIP", "clusterIP": ""}, (CURRENT, "Service is ready")),
        ({"type": "NodePort"}, (CURRENT, "Service is ready")),
        ({"type": "LoadBalancer"}, (IN_PROGRESS, "ClusterIP not set. Service type: LoadBalancer")),
        ({"type": "LoadBalancer", "clusterIP": ""}, (IN_PROGRESS, "ClusterIP not set. Service type: LoadBalancer")),
        ({"type": "LoadBalancer", "clusterIP": "10.0.0.1"}, (CURRENT, "Service is ready")),
    ],
)
def test_service(spec: dict[str, Any], expected: R) -> None:
    assert compute({"apiVersion": "v1", "kind": "Service", "spec": spec}) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"phase": "Bound"}, (CURRENT, "PVC is Bound")),
        ({"phase": "Pending"}, (IN_PROGRESS, "PVC is not Bound. phase: Pending")),
        ({"phase": "Lost"}, (IN_PROGRESS, "PVC is not Bound. phase: Lost")),
        ({}, (IN_PROGRESS, "PVC is not Bound. phase: unknown")),
    ],
)
def test_pvc(status: dict[str, Any], expected: R) -> None:
    assert compute({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "status": status}) == expected


def _pod(status: dict[str, Any], created: datetime | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if created is not None:
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": status}


UNSCHEDULABLE = [cond("PodScheduled", "False", reason="Unschedulable")]
CRASHING = [
    {"name": "c1", "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
    {"name": "c2", "state": {"running": {}}},
    {"name": "c3", "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
    {"name": "c4", "state": {"waiting": {"reason": "ContainerCreating"}}},
    {"state": {"waiting": {"reason": "CrashLoopBackOff"}}},  # no name: skipped
    "garbage",  # malformed: skipped
]


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (_pod({"phase": "Succeeded"}), (CURRENT, "Pod has completed successfully")),
        (_pod({"phase": "Failed"}), (CURRENT, "Pod has completed, but not successfully")),
        (_pod({"phase": "Running", "conditions": [cond("Ready", "True")]}), (CURRENT, "Pod is Ready")),
        (
            _pod({"phase": "Running", "conditions": [cond("Ready", "False")], "containerStatuses": CRASHING}),
            (FAILED, "Containers in CrashLoop state: c1,c3"),
        ),
        (
            _pod({"phase": "Running", "conditions": [cond("Ready", "True")], "containerStatuses": CRASHING}),
            (CURRENT, "Pod is Ready"),
        ),
        (_pod({"phase": "Running"}), (IN_PROGRESS, "Pod is running but is not Ready")),
        (
            _pod({"phase": "Running", "containerStatuses": CRASHING[1:2]}),
            (IN_PROGRESS, "Pod is running but is not Ready"),
        ),
        (_pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, NOW), (IN_PROGRESS, "Pod has not been scheduled")),
        (
            _pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, NOW - timedelta(seconds=14)),
            (IN_PROGRESS, "Pod has not been scheduled"),
        ),
        (
            _pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, NOW - timedelta(seconds=15)),
            (FAILED, "Pod could not be scheduled"),
        ),
        (
            _pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, NOW - timedelta(minutes=5)),
            (FAILED, "Pod could not be scheduled"),
        ),
        (_pod({"phase": "Pending", "conditions": UNSCHEDULABLE}), (FAILED, "Pod could not be scheduled")),
        (
            _pod({"phase": "Pending", "conditions": [cond("PodScheduled", "False", reason="Other")]}, NOW),
            (IN_PROGRESS, "Pod is in the Pending phase"),
        ),
        (
            _pod({"phase": "Pending", "conditions": [cond("PodScheduled", "True", reason="Unschedulable")]}),
            (IN_PROGRESS, "Pod is in the Pending phase"),
        ),
        (_pod({"phase": "Pending"}), (IN_PROGRESS, "Pod is in the Pending phase")),
        (_pod({}), (IN_PROGRESS, "Pod phase not available")),
        (_pod({"phase": ""}), (IN_PROGRESS, "Pod phase not available")),
    ],
)
def test_pod(pod: dict[str, Any], expected: R) -> None:
    assert compute(pod) == expected


def test_pod_schedule_window_uses_the_injected_clock() -> None:
    pod = _pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, NOW)
    later = DefaultStatusAnalyzer("test", clock=lambda: NOW + timedelta(seconds=15))
    assert later.compute(pod) == StatusResult(FAILED, "Pod could not be scheduled")
    naive = DefaultStatusAnalyzer("test", clock=lambda: NOW.replace(tzinfo=None) + timedelta(seconds=14))
    assert naive.compute(pod) == StatusResult(IN_PROGRESS, "Pod has not been scheduled")
    assert compute_kstatus(pod, now=NOW + timedelta(seconds=20)) == StatusResult(FAILED, "Pod could not be scheduled")
    # fractional timestamps and offsets are understood
    pod["metadata"]["creationTimestamp"] = "2026-03-01T11:59:55.5+02:00"
    assert analyzer().compute(pod) == StatusResult(IN_PROGRESS, "Pod has not been scheduled")


def test_pod_unknown_phase_raises() -> None:
    with pytest.raises(StatusAnalysisError) as info:
        compute(_pod({"phase": "Weird"}))
    assert str(info.value) == "unknown phase Weird"


def test_pod_container_statuses_must_be_a_list() -> None:
    with pytest.raises(StatusAnalysisError) as info:
        compute(_pod({"phase": "Running", "containerStatuses": {}}))
    assert str(info.value) == "invalid status.containerStatuses: expected an array, got object"


def _deployment(spec: dict[str, Any], status: dict[str, Any], api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec, "status": status}


FULL3 = {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}
AVAILABLE = [cond("Available", "True")]
PROGRESSED = [cond("Progressing", "True", reason="NewReplicaSetAvailable"), cond("Available", "True")]


@pytest.mark.parametrize("api_version", ["apps/v1", "extensions/v1beta1"])
@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        (
            {"replicas": 3},
            {**FULL3, "conditions": [cond("Progressing", "False", reason="ProgressDeadlineExceeded"), *AVAILABLE]},
            (FAILED, "Progress deadline exceeded"),
        ),
        (
            {"replicas": 3},
            {**FULL3, "conditions": [*PROGRESSED, cond("Progressing", "True", reason="ProgressDeadlineExceeded")]},
            (FAILED, "Progress deadline exceeded"),
        ),
        ({"replicas": 3}, {"replicas": 1, "conditions": AVAILABLE}, (IN_PROGRESS, "Replicas: 1/3")),
        ({"replicas": 3}, {"replicas": 3, "updatedReplicas": 2}, (IN_PROGRESS, "Updated: 2/3")),
        ({"replicas": 3}, {**FULL3, "replicas": 4}, (IN_PROGRESS, "Pending termination: 1")),
        ({"replicas": 3}, {**FULL3, "updatedReplicas": 4, "replicas": 3}, (IN_PROGRESS, "Available: 3/4")),
        ({"replicas": 3}, {**FULL3, "availableReplicas": 2}, (IN_PROGRESS, "Available: 2/3")),
        ({"replicas": 3}, {**FULL3, "readyReplicas": 2}, (IN_PROGRESS, "Ready: 2/3")),
        (
            {"replicas": 3, "progressDeadlineSeconds": 600},
            {**FULL3, "conditions": AVAILABLE},
            (IN_PROGRESS, "ReplicaSet not Available"),
        ),
        (
            {"replicas": 3, "progressDeadlineSeconds": 600},
            {**FULL3, "conditions": [cond("Progressing", "Unknown", reason="NewReplicaSetAvailable"), *AVAILABLE]},
            (IN_PROGRESS, "ReplicaSet not Available"),
        ),
        (
            {"replicas": 3, "progressDeadlineSeconds": 600},
            {**FULL3, "conditions": PROGRESSED},
            (CURRENT, "Deployment is available. Replicas: 3"),
        ),
        (
            {"replicas": 3, "progressDeadlineSeconds": 2147483647},
            {**FULL3, "conditions": AVAILABLE},
            (CURRENT, "Deployment is available. Replicas: 3"),
        ),
        ({"replicas": 3}, {**FULL3, "conditions": AVAILABLE}, (CURRENT, "Deployment is available. Replicas: 3")),
        ({"replicas": 3}, {**FULL3}, (IN_PROGRESS, "Deployment not Available")),
        (
            {"replicas": 3},
            {**FULL3, "conditions": [cond("Available", "False")]},
            (IN_PROGRESS, "Deployment not Available"),
        ),
        (
            {},
            {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "conditions": AVAILABLE},
            (CURRENT, "Deployment is available. Replicas: 1"),
        ),
        (
            {"replicas": "3"},
            {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1, "conditions": AVAILABLE},
            (CURRENT, "Deployment is available. Replicas: 1"),
        ),
        ({"replicas": 0}, {"conditions": AVAILABLE}, (CURRENT, "Deployment is available. Replicas: 0")),
        ({}, {}, (IN_PROGRESS, "Replicas: 0/1")),
    ],
)
def test_deployment(api_version: str, spec: dict[str, Any], status: dict[str, Any], expected: R) -> None:
    assert compute(_deployment(spec, status, api_version)) == expected


def _sts(spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": spec, "status": status}


STS3 = {
    "replicas": 3,
    "readyReplicas": 3,
    "currentReplicas": 3,
    "updatedReplicas": 3,
    "currentRevision": "r1",
    "updateRevision": "r1",
}


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        (
            {"replicas": 3, "updateStrategy": {"type": "OnDelete"}},
            {},
            (CURRENT, "StatefulSet is using the ondelete update strategy"),
        ),
        ({"replicas": 3}, {**STS3, "replicas": 1}, (IN_PROGRESS, "Replicas: 1/3")),
        ({"replicas": 3}, {**STS3, "readyReplicas": 2}, (IN_PROGRESS, "Ready: 2/3")),
        ({"replicas": 3}, {**STS3, "replicas": 5}, (IN_PROGRESS, "Pending termination: 2")),
        (
            {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
            {**STS3, "updatedReplicas": 1, "currentReplicas": 0, "updateRevision": "r2"},
            (IN_PROGRESS, "updated: 1/2"),
        ),
        (
            {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}},
            {**STS3, "updatedReplicas": 2, "currentReplicas": 0, "updateRevision": "r2"},
            (CURRENT, "Partition rollout complete. updated: 2"),
        ),
        (
            {"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": 0}}},
            {**STS3, "updatedReplicas": 2},
            (IN_PROGRESS, "updated: 2/3"),
        ),
        ({"replicas": 3}, {**STS3, "currentReplicas": 2}, (IN_PROGRESS, "current: 2/3")),
        (
            {"replicas": 3},
            {**STS3, "updateRevision": "r2"},
            (IN_PROGRESS, "Waiting for updated revision to match current"),
        ),
        ({"replicas": 3}, STS3, (CURRENT, "All replicas scheduled as expected. Replicas: 3")),
        (
            {},
            {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1},
            (CURRENT, "All replicas scheduled as expected. Replicas: 1"),
        ),
    ],
)
def test_statefulset(spec: dict[str, Any], status: dict[str, Any], expected: R) -> None:
    assert compute(_sts(spec, status)) == expected


def _ds(status: dict[str, Any], generation: int | None = 2, api_version: str = "apps/v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "ds"}
    if generation is not None:
        meta["generation"] = generation
    return {"apiVersion": api_version, "kind": "DaemonSet", "metadata": meta, "status": status}


DS2 = {
    "observedGeneration": 2,
    "desiredNumberScheduled": 2,
    "currentNumberScheduled": 2,
    "updatedNumberScheduled": 2,
    "numberAvailable": 2,
    "numberReady": 2,
}


@pytest.mark.parametrize("api_version", ["apps/v1", "extensions/v1beta1"])
@pytest.mark.parametrize(
    ("ds", "expected"),
    [
        (dict(status=DS2, generation=None), (IN_PROGRESS, "Missing .metadata.generation field")),
        (dict(status={**DS2, "observedGeneration": None}), (IN_PROGRESS, "Missing .status.observedGeneration field")),
        (dict(status={"observedGeneration": 2}), (IN_PROGRESS, "Missing .status.desiredNumberScheduled field")),
        (dict(status={**DS2, "currentNumberScheduled": 1}), (IN_PROGRESS, "Current: 1/2")),
        (dict(status={**DS2, "updatedNumberScheduled": 1}), (IN_PROGRESS, "Updated: 1/2")),
        (dict(status={**DS2, "numberAvailable": 1}), (IN_PROGRESS, "Available: 1/2")),
        (dict(status={**DS2, "numberReady": 1}), (IN_PROGRESS, "Ready: 1/2")),
        (dict(status={**DS2, "numberReady": "2"}), (IN_PROGRESS, "Ready: 0/2")),
        (dict(status=DS2), (CURRENT, "All replicas scheduled as expected. Replicas: 2")),
        (
            dict(status={**DS2, "observedGeneration": 1}),
            (IN_PROGRESS, "DaemonSet generation is 2, but latest observed generation is 1"),
        ),
    ],
)
def test_daemonset(api_version: str, ds: dict[str, Any], expected: R) -> None:
    assert compute(_ds(api_version=api_version, **ds)) == expected


def test_daemonset_desired_must_be_an_integer() -> None:
    with pytest.raises(StatusAnalysisError) as info:
        compute(_ds({**DS2, "desiredNumberScheduled": "2"}))
    assert str(info.value) == "invalid status.desiredNumberScheduled: expected an integer, got string"


RS3 = {"replicas": 3, "fullyLabeledReplicas": 3, "availableReplicas": 3, "readyReplicas": 3}


@pytest.mark.parametrize("api_version", ["apps/v1", "extensions/v1beta1"])
@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            {**RS3, "conditions": [cond("ReplicaFailure", "True")]},
            (IN_PROGRESS, "Replica Failure condition. Check Pods"),
        ),
        ({**RS3, "conditions": [cond("ReplicaFailure", "False")]}, (CURRENT, "ReplicaSet is available. Replicas: 3")),
        ({**RS3, "fullyLabeledReplicas": 1}, (IN_PROGRESS, "Labelled: 1/3")),
        ({**RS3, "availableReplicas": 2}, (IN_PROGRESS, "Available: 2/3")),
        ({**RS3, "readyReplicas": 2}, (IN_PROGRESS, "Ready: 2/3")),
        ({**RS3, "replicas": 4}, (IN_PROGRESS, "Pending termination: 1")),
        (RS3, (CURRENT, "ReplicaSet is available. Replicas: 3")),
    ],
)
def test_replicaset(api_version: str, status: dict[str, Any], expected: R) -> None:
    obj = {"apiVersion": api_version, "kind": "ReplicaSet", "spec": {"replicas": 3}, "status": status}
    assert compute(obj) == expected


@pytest.mark.parametrize("api_version", ["policy/v1", "policy/v1beta1"])
def test_pod_disruption_budget(api_version: str) -> None:
    obj = {
        "apiVersion": api_version,
        "kind": "PodDisruptionBudget",
        "status": {"currentHealthy": 0, "desiredHealthy": 2},
    }
    assert compute(obj) == (CURRENT, "AlwaysReady")


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ([], (IN_PROGRESS, "Install in progress")),
        ([cond("NamesAccepted", "False", message="clash")], (FAILED, "clash")),
        ([cond("Established", "False", reason="Other", message="nope")], (FAILED, "nope")),
        ([cond("Established", "False", reason="Installing")], (IN_PROGRESS, "Install in progress")),
        ([cond("Established", "Unknown")], (IN_PROGRESS, "Install in progress")),
        ([cond("Established", "True")], (CURRENT, "CRD is established")),
        ([cond("Established", "True"), cond("NamesAccepted", "False")], (CURRENT, "CRD is established")),
        ([cond("NamesAccepted", "False", message="clash"), cond("Established", "True")], (FAILED, "clash")),
        ([cond("NamesAccepted", "True")], (IN_PROGRESS, "Install in progress")),
    ],
)
def test_crd_kstatus_rule(conditions: list[dict[str, Any]], expected: R) -> None:
    obj = {**CRD_V1, "status": {"conditions": conditions}}
    assert compute_kstatus(obj, now=NOW) == StatusResult(*expected)


# ---------------------------------------------------------------------------------------
# Interface and module hygiene
# ---------------------------------------------------------------------------------------


def test_interface() -> None:
    default = DefaultStatusAnalyzer("oam-operator.dev")
    assert isinstance(default, StatusAnalyzer)
    assert default.name == "oam-operator.dev"
    assert repr(default) == "DefaultStatusAnalyzer('oam-operator.dev')"
    result = default.compute({"apiVersion": "v1", "kind": "ConfigMap"})
    assert result == StatusResult(status="Current", message="Resource is always ready")
    assert type(result.status) is str
    with pytest.raises(AttributeError):
        result.status = "Failed"  # type: ignore[misc]
    assert issubclass(StatusHintError, StatusAnalysisError)
    assert issubclass(StatusAnalysisError, ValueError)
    assert [s.value for s in ObjectStatus] == ["InProgress", "Failed", "Current", "Terminating", "NotFound", "Unknown"]


def test_default_clock_is_real_time() -> None:
    fresh = _pod({"phase": "Pending", "conditions": UNSCHEDULABLE}, datetime.now(UTC))
    assert DefaultStatusAnalyzer("x").compute(fresh).status == IN_PROGRESS
    assert compute_kstatus(fresh).status == IN_PROGRESS


PACKAGE_DIR = Path(__file__).resolve().parents[3] / "operator" / "oam_operator"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
#: What status.py may import besides the standard library: modules that are standard library only themselves.
STDLIB_ONLY_LOCAL = ("oam_operator.common", "oam_operator.reconciler.strcase")


def _imported(source: str, module: str) -> set[str]:
    """Every module the source of ``module`` imports (function-local too), relative ones made absolute."""
    package = module.rsplit(".", 1)[0].split(".")
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            anchor = package[: len(package) - (node.level - 1)] if node.level else []
            names.add(".".join([*anchor, *([node.module] if node.module else [])]))
    return names


def _beyond_the_standard_library(source: str, module: str, allowed: tuple[str, ...] = STDLIB_ONLY_LOCAL) -> set[str]:
    return {
        name for name in _imported(source, module)
        if name.split(".")[0] not in STDLIB and not any(name == a or name.startswith(a + ".") for a in allowed)
    }


def test_status_module_imports_only_the_standard_library() -> None:
    for module in ("oam_operator.reconciler.status", "oam_operator.reconciler.strcase"):
        path = PACKAGE_DIR.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert _beyond_the_standard_library(path.read_text(encoding="utf-8"), module) == set(), module
    for path in sorted((PACKAGE_DIR / "common").glob("*.py")):  # what status.py may use is stdlib-only itself
        module = "oam_operator.common" if path.stem == "__init__" else f"oam_operator.common.{path.stem}"
        assert _beyond_the_standard_library(path.read_text(encoding="utf-8"), module, allowed=()) == set(), module


def test_the_standard_library_check_refuses_anything_else() -> None:
    source = (
        "import json\nfrom typing import Any\nfrom oam_operator.common.objectstatus import ObjectStatus\n"
        "from .strcase import kebab\nfrom ..common import durations\n"
        "import yaml\nfrom oam_operator.oam.errors import OamError\nfrom .client import ClusterClient\n"
        "from ..persisted.inventory import InventoryItem\ndef f():\n    import kubernetes.client\n"
    )
    assert _beyond_the_standard_library(source, "oam_operator.reconciler.status") == {
        "yaml", "oam_operator.oam.errors", "oam_operator.reconciler.client", "oam_operator.persisted.inventory",
        "kubernetes.client",
    }
    assert _beyond_the_standard_library("from .objectstatus import ObjectStatus\n", "oam_operator.common.x",
                                        allowed=()) == {"oam_operator.common.objectstatus"}


def test_import_has_no_side_effects() -> None:
    code = (
        "import sys, threading\n"
        "before = threading.active_count()\n"
        "import oam_operator.reconciler.status\n"
        "assert threading.active_count() == before\n"
        "assert 'kopf' not in sys.modules\n"
        "assert 'oam_operator.oam' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr == ""
