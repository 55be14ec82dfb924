"""``copy_tree``: an independent copy of a JSON-like tree, faster than ``copy.deepcopy``."""

from __future__ import annotations

import datetime

from oam_operator.common.treecopy import copy_tree


def test_every_dict_and_list_is_new_and_equal() -> None:
    tree = {"metadata": {"labels": {"app": "web"}}, "spec": {"ports": [{"port": 80}], "replicas": 2,
                                                               "paused": False, "ratio": 0.5, "note": None}}
    copied = copy_tree(tree)
    assert copied == tree
    copied["metadata"]["labels"]["app"] = "other"
    copied["spec"]["ports"][0]["port"] = 81
    copied["spec"]["ports"].append({"port": 82})
    assert tree == {"metadata": {"labels": {"app": "web"}}, "spec": {"ports": [{"port": 80}], "replicas": 2,
                                                                     "paused": False, "ratio": 0.5, "note": None}}


def test_a_container_reached_twice_is_copied_twice() -> None:
    shared = {"name": "main"}
    copied = copy_tree({"a": shared, "b": [shared]})
    assert copied["a"] == shared and copied["a"] is not shared
    assert copied["a"] is not copied["b"][0]


def test_what_is_not_plain_json_is_deep_copied() -> None:
    when = datetime.date(2026, 12, 7)
    nested = {"pair": ([1], "x"), "when": when}
    copied = copy_tree(nested)
    assert copied == nested
    assert copied["pair"][0] is not nested["pair"][0]
    assert copied["when"] == when


def test_scalars_are_the_same_values() -> None:
    for value in ("text", 7, 2.5, True, None):
        assert copy_tree(value) is value


def test_the_caller_decides_what_becomes_of_what_is_not_plain_json() -> None:
    pair = ([1], "x")
    copied = copy_tree({"pair": pair, "items": [pair]}, other=lambda value: ("seen", value))
    assert copied == {"pair": ("seen", pair), "items": [("seen", pair)]}
    assert copied["pair"][1] is pair
