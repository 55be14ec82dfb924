"""An Application past the hard limits is refused with its figures and the limit
(docs/operator.md#identity-hostile-input-and-limits)."""

from __future__ import annotations

from oam_operator.controller.reconcile.encode import BundlePlan
from oam_operator.controller.reconcile.limits import MAX_OBJECTS, json_bytes, size_refusal
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


# -- the whole Application (issue 27): spec and metadata beside the status it will hold -----------

BUNDLE = [BundlePlan("app", (), 0, 0, frozenset(("", "ConfigMap", "shop", f"c-{n:04d}") for n in range(1000)))]
OBJECTS = [cm(f"c-{n:04d}") for n in range(1000)]


def body(inline: str, status: dict[str, object] | None = None) -> dict[str, object]:
    """An Application whose JSON without status is 193 bytes plus ``inline``."""
    app: dict[str, object] = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                              "metadata": {"name": "app", "namespace": "shop"},
                              "spec": {"components": [{"name": "big", "type": "manifests",
                                                       "properties": {"inline": inline}}]}}
    if status is not None:
        app["status"] = status
    return app


def test_sizes_are_those_of_compact_json_in_utf8() -> None:
    assert json_bytes(body("")) == 193
    assert json_bytes({"k": "ü"}) == len('{"k":"ü"}'.encode())


def test_a_spec_that_leaves_too_little_room_for_the_status_is_refused_with_the_figures() -> None:
    # status: 1,000 entries of 62 + len("shop") + len("c-0000") = 72,000 bytes, the inventory's
    # header (96) and its one type ("/v1/ConfigMap" quoted, 16), the bundle (107), the reserve
    # (4,096) and an empty rest of status (2): 76,317 bytes. Room: 1,572,864 - 4,096 - 193 - len(inline).
    fits = "x" * (1_572_864 - 4_096 - 193 - 76_317)
    assert size_refusal(OBJECTS, [], "shop", body(fits), BUNDLE) is None
    assert size_refusal(OBJECTS, [], "shop", body(fits + "x"), BUNDLE) == (
        "The Application's status would be 76317 bytes; the limit is 76316 bytes, what is left of etcd's request "
        "limit of 1572864 bytes after the spec and metadata (1492452 bytes) and 4096 bytes for the request itself "
        "(shorten the spec or split the Application)")


def test_the_status_is_counted_as_the_pass_will_write_it_not_as_it_was() -> None:
    """The inventory, bundles and conditions are counted anew, the small fields are in the
    reserve; only the lists that grow with the Application are counted as they are."""
    fits = "x" * (1_572_864 - 4_096 - 193 - 76_317)
    old = {"compactInventory": {"entries": ["y" * 50_000]}, "inventory": [{"name": "z" * 50_000}],
           "conditions": [{"message": "m" * 10_000}], "summary": "s" * 1_000, "bundles": [{"name": "b" * 1_000}],
           "processingDigest": "0" * 64, "state": "Error", "observedGeneration": 3}
    assert size_refusal(OBJECTS, [], "shop", body(fits, old), BUNDLE) is None
    grown = {**old, "drift": [{"kind": "ConfigMap"}]}  # {"drift":[{"kind":"ConfigMap"}]}: 30 bytes more than {}
    refusal = size_refusal(OBJECTS, [], "shop", body(fits, grown), BUNDLE)
    assert refusal is not None and refusal.startswith("The Application's status would be 76347 bytes; the limit "
                                                      "is 76317 bytes, ")
    # A topology's lines grow with its clusters: {"clusters":[{"name":"eu"}]} is 26 bytes more than {}.
    refusal = size_refusal(OBJECTS, [], "shop", body(fits, {**old, "clusters": [{"name": "eu"}]}), BUNDLE)
    assert refusal is not None and refusal.startswith("The Application's status would be 76343 bytes; ")


def test_the_managed_fields_of_status_writes_are_in_the_reserve_others_count() -> None:
    fits = "x" * (1_572_864 - 4_096 - 193 - 76_317 - len(',"managedFields":[]'))
    app = body(fits)
    meta = app["metadata"]
    assert isinstance(meta, dict)
    meta["managedFields"] = [{"manager": "oam-operator.dev", "subresource": "status", "fieldsV1": {"f:x": {}}}]
    assert size_refusal(OBJECTS, [], "shop", app, BUNDLE) is None
    meta["managedFields"].append({"manager": "kubectl"})
    refusal = size_refusal(OBJECTS, [], "shop", app, BUNDLE)
    # {"manager":"kubectl"}: 21 bytes of spec and metadata more
    assert refusal is not None and "the limit is 76296 bytes, " in refusal and "metadata (1492472 bytes)" in refusal


def test_objects_already_in_the_inventory_count_once_and_its_own_types_count_too() -> None:
    fits = "x" * (1_572_864 - 4_096 - 193 - 76_317)
    same = InventoryItem(group="", version="v1", kind="ConfigMap", namespace="shop", name="c-0000")
    assert size_refusal(OBJECTS, [same], "shop", body(fits), BUNDLE) is None
    role = InventoryItem(group="rbac.authorization.k8s.io", version="v1", kind="Role", namespace="shop", name="r")
    refusal = size_refusal(OBJECTS, [role], "shop", body(fits), BUNDLE)
    # one entry (62 + 4 + 1) and one type ("rbac.authorization.k8s.io/v1/Role" quoted, 36) more
    assert refusal is not None and refusal.startswith("The Application's status would be 76420 bytes;")
