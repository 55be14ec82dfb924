"""The fields a desired object sets that the operator's field manager does not own (docs/operator.md#drift).

Drift is normally what another manager took since the operator's own last write (fieldsets.py).
An object this process never wrote has no such baseline: an edit made while no instance watched
(the only witness was killed before it corrected it) is already in the first state the watch
sees. So on first sight the desired object itself is the baseline: after the operator's server-side
apply its manager owns every field the desired object sets, and a field it does not own now was
taken by another manager (``kubectl set image`` moves ``image`` to kubectl's manager).

The walk follows the desired object's maps (``f:`` keys) and, in lists, the element whose
``fieldsV1`` key (``k:{"name":"web"}``, ``v:"x"``) matches the desired element; a list the
manager owns as a whole (no children) covers its elements. ``status`` and the identity
(``apiVersion``, ``kind``, ``metadata.name``/``namespace``) are not compared; of the rest of
``metadata`` only labels and annotations are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .fieldsets import segment

__all__ = ["unowned_paths"]

_SKIPPED_TOP = frozenset({"apiVersion", "kind", "status"})
_COMPARED_METADATA = ("labels", "annotations")


def unowned_paths(desired: Mapping[str, Any], owned: Mapping[str, Any] | None) -> list[str]:
    """The paths (``spec.template.spec.containers[name=web].image``) the desired object sets and
    ``owned`` (the manager's ``fieldsV1``; ``None``: it owns nothing) does not, sorted."""
    found: list[str] = []
    tree = owned or {}
    for key, value in desired.items():
        if key in _SKIPPED_TOP or value is None:
            continue
        if key == "metadata":
            if not isinstance(value, Mapping):
                continue
            meta_owned = _child(tree, f"f:{key}")
            for part in _COMPARED_METADATA:
                if isinstance(value.get(part), Mapping) and value[part]:
                    _walk(value[part], _child(meta_owned, f"f:{part}"), f"metadata.{part}", found)
            continue
        _walk(value, _child(tree, f"f:{key}"), key, found)
    return sorted(found)


def _child(tree: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if tree is None:
        return None
    value = tree.get(key)
    return value if isinstance(value, Mapping) else None


def _walk(value: Any, owned: Mapping[str, Any] | None, path: str, found: list[str]) -> None:
    if isinstance(value, Mapping | list) and not value:
        return  # an empty map or list sets nothing the server need record
    if owned is None:
        found.append(path)
        return
    if isinstance(value, Mapping):
        if not owned or set(owned) == {"."}:
            return  # owned as a whole
        for key, inner in value.items():
            if inner is None:
                continue
            _walk(inner, _child(owned, f"f:{key}"), f"{path}.{key}", found)
        return
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not owned or set(owned) == {"."}:
            return  # an atomic list, or owned as a whole
        for element in value:
            match = _element(owned, element)
            if match is None:
                found.append(f"{path}[{_shown(element)}]")
                continue
            key, inner_owned = match
            if isinstance(element, Mapping):
                _walk(element, inner_owned, f"{path}{segment(key)}", found)


def _element(owned: Mapping[str, Any], element: Any) -> tuple[str, Mapping[str, Any]] | None:
    """The owned list element (its ``fieldsV1`` key and subtree) that ``element`` is."""
    for key, inner in owned.items():
        kind, _, rest = key.partition(":")
        subtree = inner if isinstance(inner, Mapping) else {}
        if kind == "k" and isinstance(element, Mapping):
            try:
                keys = json.loads(rest)
            except ValueError:
                continue
            # A key the desired element leaves out is one the server defaulted (a port's protocol).
            if isinstance(keys, Mapping) and all(element.get(k, v) == v for k, v in keys.items()):
                return key, subtree
        elif kind == "v":
            try:
                if json.loads(rest) == element:
                    return key, subtree
            except ValueError:
                continue
    return None


def _shown(element: Any) -> str:
    if isinstance(element, Mapping):
        name = element.get("name")
        return f"name={name}" if name is not None else json.dumps(element, sort_keys=True)[:60]
    return json.dumps(element)
