"""What a rollback policy's pass needs to know (docs/operator.md#automatic-rollback): the digest
it remembers of a failed spec, the revision it returns to, and the words it says it with.

The pass (``passes.py``) decides when; this module reads the revision history and writes no
request of its own beyond the one LIST of ``last_good``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oam_operator.api.revisions import read_revision
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.inventory import InventoryItem

from .history import listed_revisions
from .verdicts import digest_of

__all__ = ["Good", "blocking_object", "failed_message", "last_good", "spec_digest"]

#: The reason a restore revision's outcome carries: its objects were Ready with a good spec.
ROLLED_BACK = "RolledBack"


@dataclass(frozen=True)
class Good:
    """The revision a failed one returns to, and its recorded spec."""

    number: int
    spec: Mapping[str, Any]


def spec_digest(spec: Mapping[str, Any]) -> str:
    """The digest remembered of a failed spec: the spec alone, so only a change of it is tried again."""
    return digest_of([dict(spec)])


def last_good(client: ClusterClient, domain: str, namespace: str, uid: str, before: int) -> Good | None:
    """The newest recorded revision older than ``before`` that was Ready — or that was itself a
    restore (``RolledBack``: a good spec applied Ready) — with its spec; ``None`` when none is kept."""
    revisions = [read_revision(domain, item) for item in listed_revisions(client, domain, namespace, uid)]
    good = [r for r in revisions if r.number < before and r.spec
            and (r.outcome.state == "Ready" or (r.outcome.reason == ROLLED_BACK and r.restores is not None))]
    if not good:
        return None
    best = max(good, key=lambda r: r.number)
    return Good(best.number, best.spec)


def blocking_object(pending: Sequence[tuple[InventoryItem, str]]) -> tuple[str, str] | None:
    """The first object the apply waited for, as ``Kind name``, and what it said."""
    for item, why in pending:
        return f"{item.kind} {item.name}", why
    return None


def failed_message(revision: int, why: str, restores: int) -> str:
    """The RolledBack condition's words, and the Ready condition's while it holds."""
    return f"Revision {revision} failed: {why}; rolled back to revision {restores}"
