"""Plain, detached copies of kopf's bodies (controller/service/bodies.py)."""

from __future__ import annotations

import kopf

from oam_operator.controller.service.bodies import plain, snapshot


def test_a_snapshot_is_plain_and_does_not_follow_the_live_body() -> None:
    raw = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"components": [{"name": "c"}]}}
    body = kopf.Body(raw)
    copy = snapshot(body)
    assert copy == raw
    assert type(copy["metadata"]) is dict and type(copy["spec"]["components"]) is list
    raw["metadata"]["labels"]["x"] = "2"
    raw["spec"]["components"].append({"name": "d"})
    assert copy["metadata"]["labels"] == {"x": "1"}
    assert copy["spec"]["components"] == [{"name": "c"}]


def test_plain_keeps_leaves_and_rebuilds_containers() -> None:
    nested = {"a": [1, {"b": "c"}], "d": None}
    copied = plain(nested)
    assert copied == nested and copied is not nested and copied["a"][1] is not nested["a"][1]
    assert plain("leaf") == "leaf"


def test_a_snapshot_shares_the_managed_fields_and_copies_the_rest_of_the_metadata() -> None:
    managed = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    raw = {"metadata": {"name": "a", "finalizers": ["f"], "managedFields": managed}, "spec": {}}
    copy = snapshot(kopf.Body(raw))
    assert copy == raw
    assert copy["metadata"]["managedFields"] is managed  # read-only, replaced by kopf with each event
    assert copy["metadata"]["finalizers"] is not raw["metadata"]["finalizers"]
    assert snapshot(kopf.Body({"kind": "X"})) == {"kind": "X"}
