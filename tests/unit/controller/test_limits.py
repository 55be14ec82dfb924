"""An Application past the hard limit is refused with its object count and the limit."""

from __future__ import annotations

from oam_operator.controller.limits import MAX_OBJECTS, size_refusal
from oam_operator.reconciler.inventory import InventoryItem


def cm(name: str, namespace: str | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def test_the_limit_itself_passes_and_one_more_is_refused() -> None:
    objects = [cm(f"c-{n}") for n in range(MAX_OBJECTS)]
    assert size_refusal(objects, [], "shop") is None
    assert size_refusal([*objects, cm("one-more")], [], "shop") == (
        "The Application has 10001 objects; at most 10000 fit into one Application's status "
        "(split it into several Applications)")


def test_pruned_objects_still_count_and_the_same_object_counts_once() -> None:
    objects = [cm(f"c-{n}") for n in range(MAX_OBJECTS)]
    same = InventoryItem(group="", version="v1", kind="ConfigMap", namespace="shop", name="c-0")
    gone = InventoryItem(group="", version="v1", kind="ConfigMap", namespace="shop", name="old")
    assert size_refusal(objects, [same], "shop") is None
    assert size_refusal(objects, [same, gone], "shop") is not None


def test_long_names_are_refused_by_bytes() -> None:
    objects = [cm(f"{n:05d}" + "x" * 240) for n in range(5_000)]  # 5,000 × (62 + len("shop") + 245)
    assert size_refusal(objects, [], "shop") == (
        "The inventory of the Application's 5000 objects would take about 1555000 bytes of status; "
        "at most 1000000 fit (use shorter names or split the Application)")
