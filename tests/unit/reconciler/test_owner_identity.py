"""Identity: hashed owner id (bit-exact with Go), digests, keys (docs/reconciler.md#identity-and-digests)."""

from __future__ import annotations

import re

from oam_operator.reconciler.identity import (
    canonical_json,
    group_kind_string,
    hash_owner_id,
    manifest_hash,
    object_key,
    split_api_version,
)


def test_hashed_owner_id_known_vector() -> None:
    assert (
        hash_owner_id("00000000-0000-0000-0000-000000000000/default/demo")
        == "4aabi2lwjhpdgzf6smxkglsfhj5sj6svmoqpkox6gsf4padap2qq"
    )


def test_hashed_owner_id_shape() -> None:
    for owner in ("", "x", "ü/ns/name", "a" * 1000):
        assert re.fullmatch(r"[a-z2-7]{52}", hash_owner_id(owner))


def test_object_keys() -> None:
    assert object_key("", "v1", "ConfigMap", "shop", "web") == "/v1, Kind=ConfigMap shop/web"
    assert object_key("apps", "v1", "Deployment", "shop", "web") == "apps/v1, Kind=Deployment shop/web"
    assert object_key("", "v1", "Namespace", "", "shop") == "/v1, Kind=Namespace shop"
    assert split_api_version("apps/v1") == ("apps", "v1")
    assert split_api_version("v1") == ("", "v1")
    assert group_kind_string("", "ConfigMap") == "ConfigMap"
    assert group_kind_string("apps", "Deployment") == "Deployment.apps"


def test_canonical_json() -> None:
    assert canonical_json({"b": [1, {"d": 1, "c": "é"}], "a": None}) == '{"a":null,"b":[1,{"c":"é","d":1}]}'


def test_digest_deterministic_and_ignores_bookkeeping() -> None:
    a = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"x": "1", "y": "2"}}}
    b = {"kind": "ConfigMap", "metadata": {"labels": {"y": "2", "x": "1"}, "name": "c"}, "apiVersion": "v1"}
    assert manifest_hash(a) == manifest_hash(b)
    assert re.fullmatch(r"[0-9a-f]{64}", manifest_hash(a))
    c = {**a, "metadata": {**a["metadata"], "resourceVersion": "5", "generation": 2, "managedFields": []}}
    assert manifest_hash(c) == manifest_hash(a)
    d = {**a, "data": {"k": "v"}}
    assert manifest_hash(d) != manifest_hash(a)
    e = {**a, "status": {"x": 1}}
    assert manifest_hash(e) != manifest_hash(a)
    # The input is not mutated.
    assert c["metadata"]["resourceVersion"] == "5"
