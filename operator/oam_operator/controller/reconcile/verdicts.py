"""A check's verdict kept per Application between passes, by the digest of what it depends on.

The ``overrides`` check (checks.py, docs/multicluster.md#overrides) transforms the Application
once more per override policy. Its verdict depends only on the Application's identity and
components and policies (and the operator's cluster id and domain), so a pass whose input did not
change finds it here instead of transforming again: a no-op pass of a fleet Application transforms
once, as any Application's does. What a cluster's own transform refuses is still found every
pass, by that cluster's Application.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any, Generic, TypeVar

__all__ = ["VerdictMemo", "digest_of"]

V = TypeVar("V")


def digest_of(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys): equal inputs, equal digests."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class VerdictMemo(Generic[V]):
    """One verdict per Application (``namespace/name``), valid while its digest is the same."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str, V]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def lookup(self, application: str, digest: str) -> tuple[bool, V | None]:
        """``(True, verdict)`` when ``application``'s verdict was kept for ``digest``, else ``(False, None)``."""
        with self._lock:
            kept = self._kept.get(application)
        if kept is None or kept[0] != digest:
            return False, None
        return True, kept[1]

    def keep(self, application: str, digest: str, verdict: V) -> None:
        with self._lock:
            self._kept[application] = (digest, verdict)

    def forget(self, application: str) -> None:
        """The Application is being deleted."""
        with self._lock:
            self._kept.pop(application, None)
