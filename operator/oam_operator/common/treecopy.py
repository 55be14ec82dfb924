"""A deep copy of a JSON-like tree (docs/operator.md#operator-cpu).

Manifests, bodies and patches are dicts and lists of strings, numbers, booleans and ``None``.
``copy.deepcopy`` copies them too, but it keeps a memo of every container for shared and
cyclic references, which such trees do not need: measured on a Deployment manifest, 29 µs
against 9.5 µs here, and a pass copies each of its objects a few times. Anything else in the
tree (a tuple, a date from YAML) is copied with ``copy.deepcopy``. A container reached twice (a
YAML alias) is copied twice, so no two places of the copy share one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["copy_tree"]

T = TypeVar("T")

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def copy_tree(value: T, other: Callable[[Any], Any] = copy.deepcopy) -> T:
    """An independent copy of ``value``: new dicts and lists all the way down.

    Plain dicts, lists and JSON scalars, nearly all of a tree, are told by their exact type (an
    ``isinstance`` check against an ABC would be a third of the time); anything else goes to
    ``other``, a deep copy unless the caller decides otherwise."""
    kind = type(value)
    if kind is dict:
        return {key: copy_tree(item, other) for key, item in value.items()}  # type: ignore[attr-defined, return-value]
    if kind is list:
        return [copy_tree(item, other) for item in value]  # type: ignore[attr-defined, return-value]
    if kind in _IMMUTABLE:
        return value
    return other(value)  # type: ignore[no-any-return]
