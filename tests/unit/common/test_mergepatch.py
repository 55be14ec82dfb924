"""JSON merge patch (RFC 7386), shared by override policies and TraitDefinitions (common/mergepatch.py)."""

from __future__ import annotations

from oam_operator.common.mergepatch import merge_patch


def test_a_merge_patch_merges_maps_removes_nulls_and_replaces_the_rest() -> None:
    target = {"a": 1, "m": {"x": 1, "y": 2}, "l": [1, 2]}
    assert merge_patch(target, {"a": None, "m": {"y": 3, "z": 4}, "l": [3]}) == {"m": {"x": 1, "y": 3, "z": 4}, "l": [3]}
    assert target == {"a": 1, "m": {"x": 1, "y": 2}, "l": [1, 2]}  # the target is not changed
    assert merge_patch({"a": 1}, "text") == "text"
    assert merge_patch("text", {"a": {"b": None, "c": 1}}) == {"a": {"c": 1}}
