"""Managed fields held as text (controller/reconcile/heldfields.py, docs/operator.md#memory): what
is dropped and kept, the size the check measures unchanged, the limit's refusal unchanged."""

from __future__ import annotations

import copy
import json
from typing import Any

from oam_operator.controller.reconcile import heldfields
from oam_operator.controller.reconcile.limits import size_refusal

KUBECTL = {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "oam-operator.dev/v1alpha1",
           "time": "2026-12-07T01:00:00Z", "fieldsType": "FieldsV1",
           "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied": {}}},
                        "f:spec": {".": {}, "f:components": {}, "f:note": {"f:ü": {}}}}}
KOPF = {"manager": "kopf", "operation": "Update", "apiVersion": "oam-operator.dev/v1alpha1",
        "time": "2026-12-07T01:00:01Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:finalizers": {".": {}, 'v:"oam-operator.dev"': {}}}}}
STATUS = {"manager": "oam-operator.dev", "operation": "Apply", "apiVersion": "oam-operator.dev/v1alpha1",
          "time": "2026-12-07T01:00:02Z", "fieldsType": "FieldsV1", "subresource": "status",
          "fieldsV1": {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:status": {}}}}}}


def application(note: str = "") -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1", "generation": 2,
                         "managedFields": [copy.deepcopy(KUBECTL), copy.deepcopy(KOPF), copy.deepcopy(STATUS)]},
            "spec": {"components": [], "note": note}, "status": {"state": "Ready"}}


def test_status_writes_are_dropped_and_the_other_field_sets_are_kept_as_their_compact_json() -> None:
    app = application()
    heldfields.compact(app)
    held = app["metadata"]["managedFields"]
    assert [entry["manager"] for entry in held] == ["kubectl-client-side-apply", "kopf"]
    assert held[0] == {**KUBECTL, "fieldsV1": json.dumps(KUBECTL["fieldsV1"], separators=(",", ":"),
                                                          ensure_ascii=False)}
    assert json.loads(held[1]["fieldsV1"]) == KOPF["fieldsV1"]
    assert app["spec"] == application()["spec"] and app["status"] == {"state": "Ready"}


def test_the_size_is_the_same_held_as_text_or_not() -> None:
    original = application()
    rest = [KUBECTL, KOPF]
    assert heldfields.entries_bytes(rest) == heldfields.json_bytes(rest)
    held = application()
    heldfields.compact(held)
    assert heldfields.entries_bytes(held["metadata"]["managedFields"]) == heldfields.json_bytes(rest)
    assert heldfields.entries_bytes([]) == 2
    heldfields.compact(held)  # held twice: text stays text
    assert heldfields.entries_bytes(held["metadata"]["managedFields"]) == heldfields.json_bytes(rest)
    assert original["metadata"]["managedFields"][2] == STATUS


def test_what_is_not_shaped_so_is_left_as_it_is() -> None:
    for obj in (None, "text", {}, {"metadata": None}, {"metadata": {"managedFields": None}}, {"metadata": []}):
        before = copy.deepcopy(obj)
        heldfields.compact(obj)
        assert obj == before
    odd = {"metadata": {"managedFields": ["not an entry", {"manager": "m", "fieldsV1": "already text"}]}}
    heldfields.compact(odd)
    assert odd == {"metadata": {"managedFields": ["not an entry", {"manager": "m", "fieldsV1": "already text"}]}}


def test_the_limit_refuses_at_the_same_byte_held_as_text_or_not() -> None:
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c-{i:04d}"}} for i in range(1000)]

    def refusal(note: str, held: bool) -> str | None:
        app = application(note)
        if held:
            heldfields.compact(app)
        return size_refusal(objects, [], "shop", app)

    probe = refusal("x" * 1_500_000, held=False)
    assert probe is not None and probe == refusal("x" * 1_500_000, held=True)
    over = int(probe.split("would be ")[1].split(" bytes")[0]) - int(probe.split("the limit is ")[1].split(" bytes")[0])
    fits = "x" * (1_500_000 - over)
    assert refusal(fits, held=False) is None and refusal(fits, held=True) is None
    assert refusal(fits + "x", held=False) == refusal(fits + "x", held=True) is not None


def nested(levels: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    node = top
    for _ in range(levels):
        node["f:x"] = {}
        node = node["f:x"]
    return top


def test_field_sets_deeper_than_orjson_goes_are_held_by_the_standard_encoder() -> None:
    deep = nested(300)  # orjson stops at 255 levels
    app = {"metadata": {"managedFields": [{"manager": "kubectl", "fieldsV1": deep}]}}
    heldfields.compact(app)
    assert app["metadata"]["managedFields"][0]["fieldsV1"] == json.dumps(deep, separators=(",", ":"))


def test_what_cannot_be_held_as_text_is_kept_as_it_came_and_nothing_is_raised() -> None:
    odd = {"f:x": object()}  # no encoder takes it: a stand-in for anything unforeseen
    entries = [{"manager": "kubectl", "fieldsV1": odd}, {"manager": "x", "subresource": "status"}]
    app = {"metadata": {"managedFields": entries}}
    heldfields.compact(app)
    assert app["metadata"]["managedFields"] is entries and entries[0]["fieldsV1"] is odd
