"""The managed fields of the Applications the operator holds, kept as text
(docs/operator.md#memory).

kopf keeps every Application's body in memory, and half of a decoded Application is its
``metadata.managedFields``: the field sets of kubectl's apply, of kopf's finalizer and of the
operator's own status writes, nested dicts of ``f:`` keys (16.5 of 31.7 KB for an Application
of four objects). No pass reads them but the size check (``limits.py``), which needs only their
size. ``compact`` replaces each entry's ``fieldsV1`` by its compact JSON text, and drops the
entries of status writes, which the size check leaves out anyway (its request reserve holds
them); ``entries_bytes`` gives the size the API server stores the rest with, byte for byte the
same as from the original entries.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.reconciler.jsoncodec import dumps

__all__ = ["compact", "entries_bytes", "json_bytes", "without_status_writes"]

_FIELDS = "fieldsV1"

log = logging.getLogger("oam_operator.controller")


def json_bytes(value: Any) -> int:
    """The size of ``value`` as the API server stores it: compact JSON, UTF-8."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def without_status_writes(entries: Sequence[Any]) -> list[Any]:
    """The entries but those of writes to the status subresource."""
    return [entry for entry in entries if not (isinstance(entry, Mapping) and entry.get("subresource") == "status")]


def compact(obj: Any) -> None:
    """Hold ``obj``'s managed fields as text, in place: status writes' entries dropped, every
    other entry's ``fieldsV1`` as its compact JSON. Anything not shaped so is left as it is, and
    nothing an object holds makes it raise: it runs on kopf's watch stream, which an exception
    would end (docs/operator.md#identity-hostile-input-and-limits)."""
    try:
        _compact(obj)
    except Exception:  # an object this cannot hold as text is kept as it came
        log.debug("managed fields kept as they came", exc_info=True)


def _compact(obj: Any) -> None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return
    entries = meta.get("managedFields")
    if not isinstance(entries, list):
        return
    kept = []
    for entry in without_status_writes(entries):
        fields = entry.get(_FIELDS) if isinstance(entry, dict) else None
        if isinstance(fields, dict):
            entry = {**entry, _FIELDS: dumps(fields).decode()}  # deeper than orjson goes: the standard encoder
        kept.append(entry)
    meta["managedFields"] = kept


def entries_bytes(entries: Sequence[Any]) -> int:
    """The compact JSON size of the list ``entries``, each ``fieldsV1`` held as text counted as
    the JSON it holds (``compact``'s entries and original ones alike)."""
    sizes = []
    for entry in entries:
        fields = entry.get(_FIELDS) if isinstance(entry, Mapping) else None
        if isinstance(fields, str):  # held as text: the JSON it holds, not the string's quoted form
            sizes.append(json_bytes({**entry, _FIELDS: 0}) - 1 + len(fields.encode()))
        else:
            sizes.append(json_bytes(entry))
    return 2 + sum(sizes) + max(0, len(sizes) - 1)
