"""The compression of the watch cache's copies and field sets (controller/service/packing.py)."""

from __future__ import annotations

import json
import zlib

from oam_operator.controller.service.packing import pack, unpack


def test_a_packed_object_unpacks_to_the_same_bytes_and_is_no_larger_than_zlibs() -> None:
    data = json.dumps([{"name": f"web-{i}", "image": "registry.invalid/app:1"} for i in range(40)]).encode()
    packed = pack(data)
    assert unpack(packed) == data
    assert len(packed) <= len(zlib.compress(data, 6))


def test_equal_inputs_pack_to_equal_bytes() -> None:
    """Field sets compare by their packed bytes (fieldsets.py)."""
    assert pack(b'{"f:spec":{}}') == pack(b'{"f:spec":{}}')
    assert pack(b'{"f:spec":{}}') != pack(b'{"f:metadata":{}}')
