"""Reads served from a caller's watch (docs/reconciler.md#reads-from-a-watch).

A caller that holds a synced watch of the objects the reconciler owns can answer most reads
without a request. The reconciler trusts such an answer only where being wrong costs nothing
but a request, never correctness:

- **a copy** decides "in sync, analyse readiness"; as soon as the call would write (an
  update, a re-apply, an adoption, a ``Recreate``), the object is read live first, so every
  write is made against the live object and its ``resourceVersion``;
- **absent** is trusted only for an object the reconciler never wrote (step 5's new objects and
  items without ``lastAppliedAt``) and never for a Namespace (an adopted namespace must be
  recognised before it is recorded): the create is an apply pinned to ``resourceVersion`` ``1``
  (or a POST), refused with 409 when the object exists after all (unlabelled, or another
  owner's), and then the object is read live and goes through the adoption check;
- anything else (a kind not watched or not synced, an object the watch saw deleted — which may
  only have lost the owner label) is **unknown** and read live, as without a watch.

The caller keeps its copies current from each write's response (``on_written``), so a copy is
never older than the reconciler's own last write to the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .objects import ObjectRef

__all__ = ["ABSENT", "UNKNOWN", "CachedAnswer", "CachedReads"]


@dataclass(frozen=True)
class CachedAnswer:
    """What the watch knows of one object: a copy, known absence, or nothing."""

    state: Literal["present", "absent", "unknown"]
    obj: dict[str, Any] | None = None


ABSENT = CachedAnswer("absent")
UNKNOWN = CachedAnswer("unknown")


class CachedReads(Protocol):
    """A caller's watch, asked before a read (``ReconcilerOptions.cached_reads``)."""

    def lookup(self, ref: ObjectRef) -> CachedAnswer:
        """The watch's answer for ``ref``; ``obj`` of a ``present`` answer is the caller's
        fresh copy (the reconciler may keep it)."""
        ...
