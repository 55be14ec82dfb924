"""The fields an object's field manager owns, kept small, and what a change took from it (docs/operator.md#drift).

Drift is read from the API server's own bookkeeping, not from comparing values: after the
operator's server-side apply, its field manager owns exactly the fields the Application
sets. When another manager changes one of them (``kubectl set image``, ``kubectl label
x key-``, another controller's forced apply), the API server moves that field to the other
manager, so the operator's set shrinks. A field the Application does not set (the replicas an
HPA scales under the ``scaler`` trait) is never in the operator's set, so changing it is no
drift; values the server defaults or normalises (``1000m`` read back as ``1``) do not change
ownership, so they never look like drift either.

A ``FieldSet`` is the ``fieldsV1`` of one manager's entry, canonical JSON compressed (packing.py):
a Deployment's entry of 1–2 KiB is kept in a few hundred bytes, and two sets compare equal
exactly when their bytes do. ``removed`` expands two sets into paths only when they differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.reconciler.jsoncodec import dumps, loads

from .packing import pack, unpack

__all__ = ["FieldSet", "manager_fields", "paths", "removed", "segment"]


@dataclass(frozen=True)
class FieldSet:
    """One manager's ``fieldsV1``, compressed; ``empty`` when the manager owns nothing."""

    packed: bytes

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> FieldSet:
        return cls(pack(dumps(fields, sort_keys=True)))

    @property
    def fields(self) -> dict[str, Any]:
        loaded: dict[str, Any] = loads(unpack(self.packed))
        return loaded

    @property
    def empty(self) -> bool:
        return not self.fields

    def __len__(self) -> int:
        return len(self.packed)


def manager_fields(obj: Mapping[str, Any], manager: str) -> FieldSet | None:
    """What ``manager`` owns of ``obj`` through server-side apply (its ``Apply`` entries, merged),
    ``None`` when it has no such entry (the object was never applied by it)."""
    merged: dict[str, Any] = {}
    found = False
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") != manager or entry.get("operation") != "Apply":
            continue
        found = True
        _merge(merged, entry.get("fieldsV1") or {})
    return FieldSet.of(merged) if found else None


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, Mapping):
            _merge(into.setdefault(key, {}), value)


def segment(key: str) -> str:
    """One ``fieldsV1`` key as a path segment: ``f:image`` → ``.image``, ``k:{"name":"web"}`` →
    ``[name=web]``, ``v:"x"`` → ``["x"]``, ``i:0`` → ``[0]``."""
    kind, _, rest = key.partition(":")
    if kind == "f":
        return f".{rest}"
    if kind == "k":
        try:
            keys = json.loads(rest)
        except ValueError:
            return f"[{rest}]"
        if isinstance(keys, dict):
            return "[" + ",".join(f"{name}={value}" for name, value in keys.items()) + "]"
        return f"[{rest}]"
    if kind in ("v", "i"):
        return f"[{rest}]"
    return f".{key}"


def paths(fields: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """Every owned field of a ``fieldsV1`` tree as a path (``spec.template.spec.containers[name=web].image``);
    a list element or map the manager owns as a whole (``.``) is its own path."""
    for key, value in fields.items():
        if key == ".":
            yield prefix
            continue
        path = prefix + segment(key)
        children = value if isinstance(value, Mapping) else {}
        if children:
            yield from paths(children, path)
        else:
            yield path


def _shown(path: str) -> str:
    return path[1:] if path.startswith(".") else path


def removed(before: FieldSet, after: FieldSet | None) -> list[str]:
    """The paths ``before`` owned that ``after`` no longer does, sorted; every path when
    ``after`` is ``None`` (the manager lost its entry)."""
    if after is not None and after.packed == before.packed:
        return []
    old = set(paths(before.fields))
    new = set(paths(after.fields)) if after is not None else set()
    return sorted(_shown(path) for path in old - new)
