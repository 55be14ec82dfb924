"""The managedFields migration of server-side apply (docs/reconciler.md#managedfields-migration)."""

from __future__ import annotations

from oam_operator.reconciler.ssa import merge_field_sets, migrate_managed_fields

OWNER = "reconciler.testing.oam-operator.dev"


def entry(manager: str, operation: str, fields: dict, subresource: str = "") -> dict:  # type: ignore[type-arg]
    e = {"manager": manager, "operation": operation, "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        e["subresource"] = subresource
    return e


def test_merge_field_sets() -> None:
    a = {"f:data": {"f:a": {}, ".": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}
    b = {"f:data": {"f:b": {}}, "f:metadata": {"f:annotations": {"f:y": {}}}, "f:spec": {}}
    assert merge_field_sets(a, b) == {
        "f:data": {"f:a": {}, ".": {}, "f:b": {}},
        "f:metadata": {"f:labels": {"f:x": {}}, "f:annotations": {"f:y": {}}},
        "f:spec": {},
    }
    assert a == {"f:data": {"f:a": {}, ".": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}


def test_nothing_to_migrate() -> None:
    entries = [entry(OWNER, "Apply", {"f:data": {}}), entry("other", "Update", {"f:x": {}})]
    result, changed = migrate_managed_fields(entries, OWNER, ("kubectl",))
    assert not changed
    assert result[0]["manager"] == "other" and result[-1]["manager"] == OWNER


def test_our_update_becomes_apply_when_no_apply_exists() -> None:
    entries = [entry(OWNER, "Update", {"f:data": {"f:a": {}}}), entry("other", "Update", {"f:x": {}})]
    result, changed = migrate_managed_fields(entries, OWNER, ())
    assert changed
    assert [(e["manager"], e["operation"]) for e in result] == [("other", "Update"), (OWNER, "Apply")]
    assert result[-1]["fieldsV1"] == {"f:data": {"f:a": {}}}


def test_reclaimed_prefixes_fold_into_our_apply() -> None:
    entries = [
        entry("kubectl-client-side-apply", "Update", {"f:data": {"f:k": {}}}),
        entry(OWNER, "Apply", {"f:data": {"f:a": {}}}),
        entry("kubectl-edit", "Update", {"f:metadata": {"f:annotations": {"f:e": {}}}}),
        entry("helm", "Update", {"f:data": {"f:h": {}}}),
        entry("kubectl", "Update", {"f:status": {}}, subresource="status"),
        entry(OWNER, "Update", {"f:data": {"f:u": {}}}),
    ]
    result, changed = migrate_managed_fields(entries, OWNER, ("kubectl",))
    assert changed
    assert [(e["manager"], e.get("subresource", "")) for e in result] == [
        ("helm", ""),
        ("kubectl", "status"),
        (OWNER, ""),
    ]
    assert result[-1]["operation"] == "Apply"
    assert result[-1]["fieldsV1"] == {
        "f:data": {"f:a": {}, "f:k": {}, "f:u": {}},
        "f:metadata": {"f:annotations": {"f:e": {}}},
    }


def test_ssa_merge_keeps_kubectl_entries() -> None:
    entries = [entry("kubectl", "Update", {"f:data": {"f:k": {}}}), entry(OWNER, "Apply", {"f:data": {"f:a": {}}})]
    result, changed = migrate_managed_fields(entries, OWNER, ())
    assert not changed
    assert result == entries
