"""Annotation parsing (docs/reconciler.md#annotations):
kebab normalisation, policies, orders, durations, hints."""

from __future__ import annotations

from datetime import timedelta

import pytest

from oam_operator.reconciler.annotations import (
    NO_PURGE_ORDER,
    AnnotationDefaults,
    kebab,
    parse_go_duration,
    parse_object_annotations,
)
from oam_operator.reconciler.errors import ObjectValidationError
from oam_operator.reconciler.objectpolicies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy

NAME = "oam-operator.dev"
KEY = "/v1, Kind=ConfigMap shop/c"


def parse(**annotations: str):  # type: ignore[no-untyped-def]
    raw = {f"{NAME}/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return parse_object_annotations(raw, KEY, NAME, AnnotationDefaults())


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("IfUnowned", "if-unowned"),
        ("if-unowned", "if-unowned"),
        (" if_unowned ", "if-unowned"),
        ("OnObjectOrComponentChange", "on-object-or-component-change"),
        ("SsaMerge", "ssa-merge"),
        ("SSAMerge", "ssa-merge"),
        ("ssa-merge", "ssa-merge"),
        ("OrphanOnApply", "orphan-on-apply"),
        ("Orphan On Apply", "orphan-on-apply"),
        ("ORPHAN", "orphan"),
        ("Default", "default"),
        ("Invalid", "invalid"),
        ("if--unowned", "if--unowned"),
        ("JSONData", "json-data"),
        ("abc123def", "abc-123-def"),
        ("ABC1", "abc-1"),
        ("a.b", "a-b"),
        ("Grüße", "grüße"),
        ("", ""),
    ],
)
def test_kebab(raw: str, expected: str) -> None:
    assert kebab(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("never", AdoptionPolicy.NEVER),
        ("Never", AdoptionPolicy.NEVER),
        ("IfUnowned", AdoptionPolicy.IF_UNOWNED),
        ("if_unowned", AdoptionPolicy.IF_UNOWNED),
        ("If Unowned", AdoptionPolicy.IF_UNOWNED),
        ("ALWAYS", AdoptionPolicy.ALWAYS),
        ("", AdoptionPolicy.IF_UNOWNED),
    ],
)
def test_adoption_policy_spellings(raw: str, expected: AdoptionPolicy) -> None:
    assert parse(adoption_policy=raw).adoption_policy is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("on-object-change", ReconcilePolicy.ON_OBJECT_CHANGE),
        ("OnObjectOrComponentChange", ReconcilePolicy.ON_OBJECT_OR_COMPONENT_CHANGE),
        ("on_object_or_component_change", ReconcilePolicy.ON_OBJECT_OR_COMPONENT_CHANGE),
        ("Once", ReconcilePolicy.ONCE),
    ],
)
def test_reconcile_policy_spellings(raw: str, expected: ReconcilePolicy) -> None:
    assert parse(reconcile_policy=raw).reconcile_policy is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("recreate", UpdatePolicy.RECREATE),
        ("Replace", UpdatePolicy.REPLACE),
        ("SsaMerge", UpdatePolicy.SSA_MERGE),
        ("SSAMerge", UpdatePolicy.SSA_MERGE),
        ("ssa_override", UpdatePolicy.SSA_OVERRIDE),
        ("SsaOverride", UpdatePolicy.SSA_OVERRIDE),
        ("default", UpdatePolicy.REPLACE),
        ("Default", UpdatePolicy.REPLACE),
    ],
)
def test_update_policy_spellings(raw: str, expected: UpdatePolicy) -> None:
    assert parse(update_policy=raw).update_policy is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("delete", DeletePolicy.DELETE),
        ("Orphan", DeletePolicy.ORPHAN),
        ("ORPHAN", DeletePolicy.ORPHAN),
        ("OrphanOnApply", DeletePolicy.ORPHAN_ON_APPLY),
        ("Orphan On Apply", DeletePolicy.ORPHAN_ON_APPLY),
        ("orphan-on-delete", DeletePolicy.ORPHAN_ON_DELETE),
        ("default", DeletePolicy.DELETE),
    ],
)
def test_delete_policy_spellings(raw: str, expected: DeletePolicy) -> None:
    assert parse(delete_policy=raw).delete_policy is expected


def test_option_defaults_apply_when_absent_or_default() -> None:
    defaults = AnnotationDefaults(
        adoption_policy=AdoptionPolicy.NEVER,
        update_policy=UpdatePolicy.SSA_MERGE,
        delete_policy=DeletePolicy.ORPHAN,
        reapply_interval=timedelta(minutes=9),
    )
    a = parse_object_annotations({f"{NAME}/update-policy": "Default"}, KEY, NAME, defaults)
    assert a.adoption_policy is AdoptionPolicy.NEVER
    assert a.update_policy is UpdatePolicy.SSA_MERGE
    assert a.delete_policy is DeletePolicy.ORPHAN
    assert a.reconcile_policy is ReconcilePolicy.ON_OBJECT_CHANGE
    assert a.reapply_interval == timedelta(minutes=9)


@pytest.mark.parametrize(
    ("field", "raw", "normalised"),
    [
        ("adoption-policy", "Invalid", "invalid"),
        ("adoption-policy", "default", "default"),
        ("reconcile-policy", "OnChange", "on-change"),
        ("update-policy", "SSA Merge Now", "ssa-merge-now"),
        ("delete-policy", "if--unowned", "if--unowned"),
    ],
)
def test_invalid_policy_exact_message(field: str, raw: str, normalised: str) -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse_object_annotations({f"{NAME}/{field}": raw}, KEY, NAME, AnnotationDefaults())
    assert str(info.value) == (
        f"error validating object {KEY}: invalid value for annotation {NAME}/{field}: {normalised}"
    )


@pytest.mark.parametrize(("raw", "value"), [("5", 5), ("-32768", -32768), ("32767", 32767), ("+7", 7), ("007", 7)])
def test_orders_accepted(raw: str, value: int) -> None:
    a = parse(apply_order=raw, delete_order=raw, purge_order=raw)
    assert (a.apply_order, a.delete_order, a.purge_order) == (value, value, value)


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("32768", "32768: value 32768 not in allowed range [-32768,32767]"),
        ("-32769", "-32769: value -32769 not in allowed range [-32768,32767]"),
        ("+040000", "+040000: value 40000 not in allowed range [-32768,32767]"),
        ("abc", "abc: not a decimal integer"),
        ("1.5", "1.5: not a decimal integer"),
        (" 1", " 1: not a decimal integer"),
        ("1_000", "1_000: not a decimal integer"),
        ("", ": not a decimal integer"),
        ("٣", "٣: not a decimal integer"),
    ],
)
@pytest.mark.parametrize("field", ["apply-order", "purge-order", "delete-order"])
def test_order_errors(field: str, raw: str, detail: str) -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse_object_annotations({f"{NAME}/{field}": raw}, KEY, NAME, AnnotationDefaults())
    assert str(info.value) == f"error validating object {KEY}: invalid value for annotation {NAME}/{field}: {detail}"


def test_spec_example_apply_order_out_of_range() -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse(apply_order="32768")
    assert str(info.value) == (
        "error validating object /v1, Kind=ConfigMap shop/c: invalid value for annotation "
        "oam-operator.dev/apply-order: 32768: value 32768 not in allowed range [-32768,32767]"
    )


def test_missing_orders() -> None:
    a = parse()
    assert (a.apply_order, a.delete_order, a.purge_order) == (0, 0, NO_PURGE_ORDER)
    assert not a.has_purge_order
    assert parse(purge_order="3").has_purge_order


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("0", 0),
        ("-0", 0),
        ("90s", 90),
        ("3m33s", 213),
        ("1h", 3600),
        ("1.5h", 5400),
        (".5s", 0.5),
        ("1.s", 1),
        ("1h1m1s", 3661),
        ("100ms", 0.1),
        ("1500us", 0.0015),
        ("1500µs", 0.0015),
        ("1500μs", 0.0015),
        ("10000ns", 1e-5),
        ("-1m", -60),
        ("+2s", 2),
    ],
)
def test_durations(raw: str, seconds: float) -> None:
    assert parse_go_duration(raw).total_seconds() == pytest.approx(seconds)
    assert parse(reapply_interval=raw).reapply_interval.total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("raw", ["invalid", "", "1", "s", ".s", "1x", "1hm", "1 h", "- 1s", "1d", "3m 33s"])
def test_duration_errors(raw: str) -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse(reapply_interval=raw)
    assert str(info.value) == (
        f"error validating object {KEY}: invalid value for annotation {NAME}/reapply-interval: {raw}: invalid duration"
    )


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ("has-observed-generation=x", "status hint has-observed-generation does not take a value"),
        ("HasReadyCondition=1", "status hint has-ready-condition does not take a value"),
        ("conditions", "status hint conditions requires a value"),
        ("bogus", "unknown status hint bogus"),
        ("", "unknown status hint "),
        ("has-ready-condition,", "unknown status hint "),
    ],
)
def test_status_hint_errors(raw: str, detail: str) -> None:
    with pytest.raises(ObjectValidationError) as info:
        parse(status_hint=raw)
    assert str(info.value) == f"error validating object {KEY}: {detail}"


def test_status_hints_parsed() -> None:
    hints = parse(status_hint="HasObservedGeneration,has_ready_condition,conditions=A;B").status_hints
    assert hints is not None
    assert hints.has_observed_generation and hints.has_ready_condition
    assert hints.conditions == ("A", "B")


def test_first_error_in_documented_order() -> None:
    # The adoption policy is parsed before the apply order: its error wins.
    with pytest.raises(ObjectValidationError, match="adoption-policy"):
        parse(adoption_policy="x", apply_order="y")
