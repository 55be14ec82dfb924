"""One definition of every persisted type, importable without the kubernetes client."""

from __future__ import annotations

import subprocess
import sys

import pytest

from oam_operator import api, persisted
from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.persisted import inventory
from oam_operator.persisted import objectpolicies as policies
from oam_operator.reconciler import inventory as reconciler_inventory
from oam_operator.reconciler import objectpolicies as reconciler_policies
from oam_operator.reconciler import typeinfo


@pytest.mark.parametrize("module", ["oam_operator.persisted", "oam_operator.persisted.inventory", "oam_operator.api"])
def test_importing_loads_no_cluster_code(module: str) -> None:
    probe = f"import sys, {module}; print(sorted(m for m in ('kubernetes', 'kopf') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_api_and_reconciler_share_the_classes() -> None:
    assert api.InventoryItem is reconciler_inventory.InventoryItem is inventory.InventoryItem
    assert api.Phase is reconciler_inventory.Phase is inventory.Phase
    assert api.TypeVersionInfo is typeinfo.TypeVersionInfo is inventory.TypeVersionInfo
    for name in ("AdoptionPolicy", "ReconcilePolicy", "UpdatePolicy", "DeletePolicy"):
        assert getattr(api, name) is getattr(reconciler_policies, name) is getattr(policies, name)
    assert persisted.__doc__ is not None


def test_the_schema_enum_of_phase_omits_the_unset_value() -> None:
    schema = inventory.InventoryItem.model_json_schema(by_alias=True)["properties"]
    assert schema["phase"]["enum"] == [p.value for p in inventory.Phase if p.value]
    assert schema["status"]["enum"] == [s.value for s in ObjectStatus]
