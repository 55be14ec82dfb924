"""JSON decoding of the API server's answers, and the compact encoding (reconciler/jsoncodec.py)."""

from __future__ import annotations

import json
import sys

from oam_operator.reconciler.jsoncodec import dumps, loads


def test_the_same_values_as_the_standard_decoder() -> None:
    document = b'{"a": 1.0, "b": 18446744073709551615, "c": "\\u00e9\\n", "d": [null, true, -0.5e3], "e": {}}'
    assert loads(document) == json.loads(document)
    assert loads(document.decode()) == json.loads(document)
    assert loads(memoryview(document)) == json.loads(document)


def test_a_document_deeper_than_orjson_reads_falls_back_to_the_standard_decoder() -> None:
    depth = 1500
    document = "[" * depth + "]" * depth
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * depth))  # as the operator's process does (depth.py)
    try:
        value = loads(document)
    finally:
        sys.setrecursionlimit(limit)
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


def test_the_compact_encoding_is_the_standard_encoders_and_goes_deeper_than_orjson() -> None:
    value = {"a": [1, None, True], "é": "x\u2028", "n": {"m": -0.5}}
    assert dumps(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    deep: list[object] = []
    for _ in range(300):  # orjson writes 255 levels at most
        deep = [deep]
    assert dumps(deep) == json.dumps(deep, separators=(",", ":")).encode()
