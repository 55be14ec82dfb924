"""Identity of objects and owners: keys, GroupKind strings, the hashed owner id, digests.

The hashed owner id must be bit-exact with the Go implementation because it is compared with
live labels either implementation wrote (docs/reconciler.md#owner-id). Digests only need to be deterministic
within this implementation (docs/reconciler.md#object-digest).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from oam_operator.persisted.inventory import group_kind_string, object_key

__all__ = [
    "ONCE_DIGEST",
    "canonical_json",
    "group_kind_string",
    "hash_owner_id",
    "manifest_hash",
    "object_key",
    "split_api_version",
]

ONCE_DIGEST = "__once__"


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` → ``("apps", "v1")``; ``v1`` → ``("", "v1")`` (the core group)."""
    group, sep, version = api_version.partition("/")
    return (group, version) if sep else ("", group)


def hash_owner_id(owner_id: str) -> str:
    """Lower-case unpadded base32 of SHA-256: 52 characters, valid as a label value."""
    digest = hashlib.sha256(owner_id.encode("utf-8")).digest()
    return base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def canonical_json(value: Any) -> str:
    """Sorted keys at every level, no insignificant whitespace, non-ASCII kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def manifest_hash(obj: Mapping[str, Any]) -> str:
    """Hex SHA-256 of the manifest without server-owned bookkeeping fields (docs/reconciler.md#object-digest)."""
    copy = dict(obj)
    metadata = copy.get("metadata")
    if isinstance(metadata, Mapping):
        copy["metadata"] = {
            k: v for k, v in metadata.items() if k not in ("resourceVersion", "generation", "managedFields")
        }
    return hashlib.sha256(canonical_json(copy).encode("utf-8")).hexdigest()
