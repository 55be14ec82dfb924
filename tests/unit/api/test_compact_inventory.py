"""The compact inventory encoding is lossless, about 75 bytes per object, and refuses bad input."""

from __future__ import annotations

import base64
import hashlib
import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from oam_operator.api.compact_inventory import CompactInventoryError, decode, encode, read_status_inventory
from oam_operator.reconciler.inventory import InventoryItem, Phase, dump_inventory
from oam_operator.reconciler.objectpolicies import AdoptionPolicy, DeletePolicy, UpdatePolicy
from oam_operator.reconciler.typeinfo import TypeVersionInfo


def digest(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()


def typical(count: int) -> list[InventoryItem]:
    start = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    return [InventoryItem(group="" if n % 2 else "apps", version="v1", kind="ConfigMap" if n % 2 else "Deployment",
                          namespace="shop", name=f"web-{n:05d}", update_policy=UpdatePolicy.SSA_MERGE,
                          digest=digest(n), phase=Phase.READY, status="Current",
                          last_applied_at=start + timedelta(seconds=n))
            for n in range(count)]


def test_round_trip_is_exactly_dump_inventory() -> None:
    rng = random.Random(18)
    items = typical(50)
    items[3].phase, items[3].status, items[3].last_applied_at = Phase.NONE, "", None
    items[4].namespace = ""
    items[5].digest = "__once__"
    items[6].digest = f"{digest(1)}@{digest(2)}"
    items[7].digest = ""
    items[8].status = "Some Status 100%"
    items[9].managed_types = [TypeVersionInfo(group="example.com", version="*", kind="Widget")]
    items[10].adopted = True
    items[11].name = "system:viewer with space"
    items[12].adoption_policy, items[12].delete_policy = AdoptionPolicy.ALWAYS, DeletePolicy.ORPHAN
    items[13].apply_order, items[13].delete_order = 3, -2
    items[14].digest = digest(14) + "\n"  # not a hex digest: kept as text, not shortened to the hex one
    for item in items[15:]:
        item.phase = rng.choice(list(Phase))
    dumped = dump_inventory(items)
    compact = json.loads(json.dumps(encode(dumped)))  # as persisted and read back
    assert decode(compact) == dumped
    assert read_status_inventory({"compactInventory": compact, "inventory": [{"ignored": 1}]}) == dumped
    assert read_status_inventory({"inventory": dumped}) == dumped  # the c-o-r shape is still read
    assert read_status_inventory({}) == []


def test_a_typical_entry_takes_about_75_bytes() -> None:
    items = typical(10_000)
    compact = json.dumps(encode(dump_inventory(items)), separators=(",", ":"))
    full = json.dumps(dump_inventory(items), separators=(",", ":"))
    assert len(compact) / 10_000 < 80
    assert len(full) / 10_000 > 300
    first = encode(dump_inventory(items[:1]))
    b64 = base64.urlsafe_b64encode(hashlib.sha256(b"0").digest()).decode().rstrip("=")
    assert len(b64) == 43
    assert first == {"format": 1, "types": ["apps/v1/Deployment"], "policies": ["IfUnowned/OnObjectChange/SsaMerge/Delete"],
                     "entries": [f"0 shop web-00000 0 0,0 {b64} rc 0"],
                     "since": "2026-12-01T10:00:00Z"}


@pytest.mark.parametrize(("compact", "message"), [
    ({"format": 2, "entries": []}, "compactInventory has format 2; this operator reads 1"),
    ({"format": 1, "types": ["/v1/ConfigMap"], "policies": ["a/b/c/d"], "entries": ["0 shop"]},
     "compactInventory entry 0 ('0 shop') is invalid: fewer than 8 fields"),
    ({"format": 1, "types": ["/v1/ConfigMap"], "policies": ["a/b/c/d"], "entries": ["1 shop c 0 0,0 - r- -"]},
     "compactInventory entry 0 ('1 shop c 0 0,0 - r- -') is invalid: list index out of range"),
])
def test_invalid_compact_inventories_are_refused_exactly(compact: dict[str, object], message: str) -> None:
    with pytest.raises(CompactInventoryError) as info:
        decode(compact)
    assert str(info.value) == message
