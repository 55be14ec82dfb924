"""Bundles become waves (docs/operator.md#bundles-become-waves): the encoding of orders, pure."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile.encode import encode
from oam_operator.oam.document.document import application_from_object
from oam_operator.oam.engine.transformer import TransformContext, new_builtin_transformer
from oam_operator.reconciler.errors import ObjectValidationError

D = "oam-operator.dev"


def cm(name: str, **annotations: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    if annotations:
        obj["metadata"]["annotations"] = {f"{D}/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"name": name, "type": "passthrough", "properties": {"object": obj}}


def tree(components: list[dict[str, Any]], policies: list[dict[str, Any]] | None = None) -> Any:
    transformer = new_builtin_transformer()
    app = application_from_object(
        {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
         "metadata": {"name": "shop", "namespace": "shop"},
         "spec": {"components": components, "policies": policies or []}},
        component_types=transformer.component_types(), trait_types=transformer.trait_types())
    return transformer.transform(app, TransformContext(namespace="shop", domain=D)).cluster


def orders(encoded: Any) -> dict[str, tuple[str, str, str | None]]:
    result = {}
    for obj in encoded.objects:
        a = obj["metadata"]["annotations"]
        result[obj["metadata"]["name"]] = (a[f"{D}/apply-order"], a[f"{D}/delete-order"], a.get(f"{D}/purge-order"))
    return result


def dep(*rules: tuple[str, list[str]]) -> dict[str, Any]:
    return {"name": "order", "type": "dependency",
            "properties": {"rules": [{"component": c, "dependsOn": d} for c, d in rules]}}


def test_a_flat_application_is_one_bundle_in_wave_zero() -> None:
    encoded = encode(tree([cm("a"), cm("b")]), D)
    assert orders(encoded) == {"a": ("0", "0", None), "b": ("0", "0", None)}
    assert [(b.name, b.depends_on, b.first_wave, b.last_wave, b.objects) for b in encoded.bundles] == [
        ("shop", (), 0, 0, 2)]


def test_groups_get_consecutive_waves_and_reverse_delete_orders() -> None:
    encoded = encode(tree([cm("db"), cm("api"), cm("web")], [dep(("api", ["db"]), ("web", ["api"]))]), D)
    assert orders(encoded) == {"db": ("0", "2", None), "api": ("1", "1", None), "web": ("2", "0", None)}
    assert [(b.name, b.depends_on, b.first_wave, b.last_wave) for b in encoded.bundles] == [
        ("shop-00", (), 0, 0), ("shop-01", ("shop-00",), 1, 1), ("shop-02", ("shop-01",), 2, 2)]
    assert encoded.bundle_of_wave(1).name == "shop-01"
    assert encoded.bundle_of_wave(7) is None


def test_authored_orders_are_ranked_densely_inside_their_bundle() -> None:
    components = [cm("crd", apply_order="-5", delete_order="9"), cm("cr", apply_order="10"), cm("plain"),
                  cm("web")]
    encoded = encode(tree(components, [dep(("web", ["crd", "cr", "plain"]))]), D)
    # bundle 0 holds three distinct apply orders (-5, 0, 10) → waves 0, 1, 2; bundle 1 starts at 3.
    assert orders(encoded) == {
        "crd": ("0", "2", None), "plain": ("1", "1", None), "cr": ("2", "1", None), "web": ("3", "0", None)}
    assert [(b.first_wave, b.last_wave) for b in encoded.bundles] == [(0, 2), (3, 3)]


def test_purge_orders_stay_inside_their_bundle() -> None:
    components = [cm("job", apply_order="1", purge_order="5"), cm("early", purge_order="-3"), cm("base"),
                  cm("web")]
    encoded = encode(tree(components, [dep(("web", ["job", "early", "base"]))]), D)
    result = orders(encoded)
    assert result["job"][2] == "1"  # largest authored order ≤ 5 is 1 → its wave
    assert result["early"][2] == "-1"  # none ≤ -3 → base(bundle) - 1
    assert result["base"][2] is None


def test_an_invalid_authored_order_fails_with_the_reconcilers_text() -> None:
    with pytest.raises(ObjectValidationError) as error:
        encode(tree([cm("c", apply_order="32768")]), D)
    assert str(error.value) == (
        "error validating object /v1, Kind=ConfigMap shop/c: invalid value for annotation "
        "oam-operator.dev/apply-order: 32768: value 32768 not in allowed range [-32768,32767]")


def test_the_input_tree_is_not_modified() -> None:
    cluster = tree([cm("a", apply_order="3")])
    encode(cluster, D)
    assert cluster.objects()[0]["metadata"]["annotations"] == {f"{D}/apply-order": "3"}
