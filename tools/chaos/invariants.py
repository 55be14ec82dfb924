"""What must hold after a run, checked from the audit log and the cluster (docs/chaos.md#invariants).

Each check returns ``Violation``s whose detail names the object, the write and its time, so a
failing run says what happened, not just that something did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.compact_inventory import read_status_inventory

from .audit import AuditEvent
from .fleet import DOMAIN, AppModel, Fleet

__all__ = ["INVARIANTS", "Violation", "foreign_uid_writes", "leftovers", "orphans", "resurrections",
           "unbound_status_writes"]

INVARIANTS = ("orphan", "leftover", "resurrection", "foreign-uid-write", "unbound-status-write",
              "hand-edit-not-corrected", "not-converged")
DELETION_STATES = frozenset({"DeletionPending", "Deleting"})
DELETION_REASONS = frozenset({"DeletionRetrying", "DeletionProcessing", "DeletionBlocked"})


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.detail}"


def inventory_names(status: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(kind, name) of the inventory a status (or a status patch) records."""
    try:
        items = read_status_inventory(status)
    except Exception:  # a partial patch or an older form: no inventory to read
        return set()
    return {(str(item.get("kind", "")), str(item.get("name", ""))) for item in items if isinstance(item, Mapping)}


def orphans(fleet: Fleet) -> list[Violation]:
    """Objects carrying the operator's owner label that no Application's inventory records: no one
    will ever delete them, and the label blocks anyone else's adoption."""
    recorded: set[tuple[str, str]] = set()
    for app in fleet.applications():
        recorded |= inventory_names(app.get("status") or {})
    return [Violation("orphan", f"{kind} {name} carries the owner label and is in no inventory")
            for kind, name in sorted(set(fleet.labelled()) - recorded)]


def leftovers(fleet: Fleet) -> list[Violation]:
    """Objects of a deleted Application, or of an earlier incarnation of a re-created one."""
    live = {app.prefix() for app in fleet.apps.values() if app.exists}
    return [Violation("leftover", f"{kind} {name} belongs to a deleted Application (incarnation "
                                  f"{name.split('-i')[1].split('-')[0]})")
            for kind, name in sorted(fleet.every_object()) if not name.startswith(tuple(live))]


def resurrections(apps: Mapping[str, AppModel], events: Iterable[AuditEvent]) -> list[Violation]:
    """An operator's create or patch of an object of an incarnation whose Application was already
    gone: a pass acting on a stale view (issue 36, point 1)."""
    gone_at: dict[str, datetime] = {}
    for app in apps.values():
        for incarnation, _uid, when in app.past:
            if when is not None:
                gone_at[app.prefix(incarnation)] = datetime.fromtimestamp(when, UTC)
    found = []
    for event in events:
        if (event.writer is None or not event.succeeded or event.verb not in ("create", "patch", "update")
                or event.resource not in ("configmaps", "deployments")):
            continue
        prefix = next((p for p in gone_at if event.name.startswith(p)), None)
        if prefix is not None and event.at > gone_at[prefix]:
            found.append(Violation("resurrection", f"{event.describe()}: written "
                                   f"{(event.at - gone_at[prefix]).total_seconds():.1f} s after its Application "
                                   f"({prefix.rstrip('-')}) was gone"))
    return found


def foreign_uid_writes(uids: Mapping[str, tuple[str, int]], events: Iterable[AuditEvent]) -> list[Violation]:
    """A write to an Application by a pass of another uid (issue 36, point 2). The audit log shows
    it by what the write carried against what it landed on: a uid other than the target's; a
    status of a later generation than the target's (a pass of an older namesake); a deletion state
    written into an Application that is not being deleted; an inventory naming objects of another
    incarnation; or kopf removing the finalizer of an Application that is not being deleted."""
    found = []
    for event in events:
        if (event.writer is None or not event.succeeded or event.resource != "applications"
                or event.verb not in ("patch", "update") or event.request is None or event.response is None):
            continue
        target = event.response.get("metadata") or {}
        sent_meta = event.sent.get("metadata") or {}
        sent_status = event.status_sent()
        reasons = []
        if sent_meta.get("uid") and sent_meta.get("uid") != target.get("uid"):
            reasons.append(f"sent uid {sent_meta.get('uid')} landed on {target.get('uid')}")
        observed = sent_status.get("observedGeneration")
        if isinstance(observed, int) and observed > int(target.get("generation") or 0):
            reasons.append(f"status of generation {observed} written into generation {target.get('generation')}")
        if not target.get("deletionTimestamp"):
            ready = next((c for c in sent_status.get("conditions") or []
                          if isinstance(c, Mapping) and c.get("type") == "Ready"), {})
            if sent_status.get("state") in DELETION_STATES or ready.get("reason") in DELETION_REASONS:
                reasons.append(f"deletion status {sent_status.get('state')}/{ready.get('reason')} written into "
                               "an Application not being deleted")
            removes = any(op.get("op") in ("remove", "replace") and str(op.get("path", "")).startswith(
                "/metadata/finalizers") for op in event.ops)
            if removes or ("finalizers" in sent_meta and DOMAIN not in (sent_meta.get("finalizers") or [])):
                reasons.append("the finalizer removed from an Application not being deleted")
        owner = uids.get(str(target.get("uid")))
        if owner is not None:
            name, incarnation = owner
            mine = f"{name}-i{incarnation}-"
            foreign = sorted(n for _, n in inventory_names(sent_status) if not n.startswith(mine))
            if foreign:
                reasons.append(f"inventory of another incarnation ({', '.join(foreign[:3])}) written into "
                               f"incarnation {incarnation}")
        if reasons:
            found.append(Violation("foreign-uid-write", f"{event.describe()}: {'; '.join(reasons)}"))
    return found


def unbound_status_writes(events: Iterable[AuditEvent]) -> list[Violation]:
    """Status writes that carry no ``metadata.uid`` precondition: nothing stops such a write of a
    pass of an old uid from landing on a namesake (the rule of docs/operator.md, issue 36)."""
    found = []
    for event in events:
        if (event.writer is not None and event.resource == "applications" and event.subresource == "status"
                and event.verb in ("patch", "update") and event.request is not None and not event.bound_to_uid()):
            found.append(Violation("unbound-status-write", f"{event.describe()}: no metadata.uid precondition"))
    return found
