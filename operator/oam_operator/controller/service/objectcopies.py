"""Compact copies of owned objects, kept by the watch to answer the reconciler's reads
(docs/operator.md#reads-from-the-watch).

A copy keeps what the reconciler reads: ``apiVersion``, ``kind``, ``metadata`` without
``managedFields`` and without kubectl's last-applied annotation, ``spec`` and ``status``. Content
outside those (a ConfigMap's ``data``, a Role's ``rules``) is dropped: an update decision is made
by the digest annotation, drift by the field sets (fieldsets.py), and any write reads the object
live first. The copy is stored as compressed compact JSON (packing.py), so a typical Deployment
takes well under 1 KiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.reconciler.jsoncodec import dumps, loads

from .packing import pack, unpack

__all__ = ["compact_copy", "expand", "is_older", "resource_version"]

_KEPT = ("apiVersion", "kind", "metadata", "spec", "status")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def compact_copy(obj: Mapping[str, Any]) -> bytes:
    """The compressed copy of ``obj`` (module docstring)."""
    kept = {key: obj[key] for key in _KEPT if key in obj}
    metadata = dict(kept.get("metadata") or {})
    metadata.pop("managedFields", None)
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
        metadata["annotations"] = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
    kept["metadata"] = metadata
    return pack(dumps(kept))


def expand(copy: bytes) -> dict[str, Any]:
    """A fresh object from a copy; the caller may change it."""
    value = loads(unpack(copy))
    assert isinstance(value, dict)
    return value


def resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def is_older(candidate: str, known: str) -> bool:
    """Whether ``candidate`` is an older state than ``known``. resourceVersions are opaque to
    clients, but the API server's are etcd revisions: compared as integers when both are, never
    older otherwise (a copy is then replaced, as without the comparison)."""
    if candidate.isdigit() and known.isdigit():
        return int(candidate) < int(known)
    return False
