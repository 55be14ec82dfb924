"""Recording each applied revision as a ControllerRevision (docs/operator.md#revision-history).

After a pass of the apply branch, ``RevisionRecorder.record`` compares what the pass's status
says of the current revision (its number, its outcome) and the history limit with what was
last recorded, and writes only the difference. A revision is recorded once it ends (``Ready``
or ``Error``), with that outcome, in one POST: a first apply to Ready costs one request, not a
POST and then a PATCH of its outcome. Until then the pass remembers what it applied
(``Pending``: its spec and the facts of its first pass), which is recorded as ``Processing`` if
a newer revision supersedes it first. A recorded revision's later new outcome is one PATCH; a
new revision also costs one LIST (for the ``restores`` link and pruning; not before revision 1)
and a DELETE per revision beyond the limit; a pass that changes nothing sends nothing.

Decisions:

- The outcome belongs to ``status.revision`` only while the input being processed is the one
  that revision counted (``processingDigest == lastProcessingDigest``): a new input that a
  check refuses before anything is applied (a transform error) applied nothing, gets no
  revision, and its error is not pinned on the revision before it.
- Non-final states (``Processing``, ``Waiting``, ``Pending``) leave a recorded outcome as it
  is: a Ready revision that re-applies drift stays Ready.
- An outcome's time is when the revision first reached it: a later pass that ends the same way
  (a re-apply moves ``lastAppliedAt``, a drift correction, a reconcile request) writes nothing,
  so ``history``'s OUTCOME time does not move (``new_outcome``). Ready, then Error, then
  Ready again is a new outcome, with its own time.
- A rollback's restore is recorded by its first pass, as before: its record is the restored
  spec the passes after it read back (``passes.restore``).
- Written with the operator's own identity, like the status: bookkeeping of the Application,
  not one of its objects, so a tenant's ServiceAccount needs no rights on ControllerRevisions.
- A failed write is logged and tried again by the next pass (what was recorded stays as it was).
- After a restart the persisted status is taken as recorded: no request per Application at
  start-up. A revision still processing then is recorded when it ends, as pending ones are (a
  record an earlier process already wrote is taken over: GET and PATCH); one that a new spec
  supersedes before the operator's first pass after the restart keeps no record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from oam_operator.api.application import DEFAULT_REVISION_HISTORY_LIMIT, MAX_REVISION_HISTORY_LIMIT
from oam_operator.api.conditions import ready_condition
from oam_operator.api.revisions import (
    CHANGE_CAUSE,
    Outcome,
    application_label,
    counted_revision,
    manifest,
    outcome_annotations,
    read_revision,
    recorded_digest,
    revision_name,
    revision_path,
    selector,
)
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.jsoncodec import dumps, loads

from .application import Application

__all__ = ["Pending", "Recorded", "RevisionRecorder", "attributed", "history_limit", "limit_refusal",
           "listed_revisions", "new_outcome", "restarted", "to_prune"]

log = logging.getLogger("oam_operator.controller")
FINAL_STATES = ("Ready", "Error")


@dataclass(frozen=True)
class Pending:
    """A revision counted and applied but not recorded yet (it has not ended): what its first pass
    applied, as the record needs it — the Application's identity, generation, change cause and
    spec (``encoded``: compact JSON, since every Application of a fleet being created holds one
    until its first Ready), and the status's profile and digests."""

    number: int
    encoded: bytes
    status: dict[str, Any]

    @property
    def body(self) -> dict[str, Any]:
        return dict(loads(self.encoded))

    @property
    def spec(self) -> Mapping[str, Any]:
        return dict(self.body["spec"])

    @classmethod
    def of(cls, number: int, app: Application, status: Mapping[str, Any]) -> Pending:
        meta = app.meta
        cause = (meta.get("annotations") or {}).get(CHANGE_CAUSE)
        kept = {"name": meta.get("name"), "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                "generation": meta.get("generation"), "annotations": {CHANGE_CAUSE: cause} if cause else {}}
        facts = {key: status.get(key) for key in ("profile", "revisionDigest", "processingDigest")}
        return cls(number, dumps({"metadata": kept, "spec": app.raw_spec}), facts)


@dataclass(frozen=True)
class Recorded:
    """What the history holds of an Application as far as the operator knows, and the revision
    waiting to be recorded (``pending``)."""

    number: int | None
    outcome: Outcome | None
    limit: int
    pending: Pending | None = None


def history_limit(spec: Mapping[str, Any]) -> int:
    """``spec.revisionHistoryLimit``, the default when absent; a value that bypassed the CRD's
    bounds is held within them."""
    value = spec.get("revisionHistoryLimit")
    if not isinstance(value, int) or isinstance(value, bool):
        return DEFAULT_REVISION_HISTORY_LIMIT
    return min(max(value, 0), MAX_REVISION_HISTORY_LIMIT)


def limit_refusal(spec: Mapping[str, Any]) -> str | None:
    """Admission's refusal of a ``revisionHistoryLimit`` outside its bounds (the CRD schema
    refuses it first; this covers a CRD installed without them)."""
    value = spec.get("revisionHistoryLimit")
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REVISION_HISTORY_LIMIT:
        return None
    return f"spec.revisionHistoryLimit must be an integer from 0 to {MAX_REVISION_HISTORY_LIMIT}, not {value!r}"


def attributed(status: Mapping[str, Any]) -> tuple[int, Outcome] | None:
    """The current revision's number and outcome as ``status`` tells them; ``None`` when no
    revision is being processed (none yet, or a new input not counted yet)."""
    number = counted_revision(status)
    if number is None:
        return None
    state = str(status.get("state") or "")
    if state not in FINAL_STATES:
        return number, Outcome("Processing")
    ready = ready_condition(status) or {}
    at = str(ready.get("lastTransitionTime") or "")
    if state == "Ready":  # when this revision's apply became Ready (a Ready Application's condition may be older)
        return number, Outcome("Ready", str(status.get("lastAppliedAt") or at))
    return number, Outcome("Error", at, str(ready.get("reason") or ""), str(ready.get("message") or ""))


def new_outcome(outcome: Outcome, recorded: Outcome | None) -> bool:
    """Whether ``outcome`` (final) is news against ``recorded``: another state, reason or message;
    its time alone is not (the time recorded is when the revision first got there)."""
    if recorded is None:
        return True
    return (outcome.state, outcome.reason, outcome.message) != (recorded.state, recorded.reason, recorded.message)


def to_prune(numbers: list[int], limit: int) -> list[int]:
    """The revisions beyond the newest ``limit``, oldest first."""
    ordered = sorted(numbers)
    return ordered[:max(len(ordered) - limit, 0)]


def restarted(app: Application, before: Mapping[str, Any], status: Mapping[str, Any], limit: int) -> Recorded:
    """What is taken as recorded at an Application's first pass after a start: the persisted
    status's revision and outcome. A revision that had not ended may not be recorded yet: while
    this pass still speaks of it (same revision, not a restore), it is pending again, from this
    pass's body (the same input: its digest is counted)."""
    was = attributed(before)
    if was is None:
        return Recorded(None, None, limit)
    number, outcome = was
    now = attributed(status)
    if (outcome.state not in FINAL_STATES and now is not None and now[0] == number
            and not before.get("rolledBack")):
        return Recorded(None, None, limit, Pending.of(number, app, status))
    return Recorded(number, outcome, limit)


class RevisionRecorder:
    """Writes the ControllerRevisions of Applications with ``client`` (the operator's identity)."""

    def __init__(self, client: ClusterClient, domain: str) -> None:
        self.client, self.domain = client, domain

    def record(self, body: Application | Mapping[str, Any], before: Mapping[str, Any], status: Mapping[str, Any],
               recorded: Recorded | None) -> Recorded:
        """Bring the history of the Application up to ``status`` (the pass's result; ``before`` the
        status it started from). Returns what is recorded now, for the next pass."""
        app = Application.of(body)
        limit = history_limit(app.raw_spec)
        now = attributed(status)
        if recorded is None:
            recorded = restarted(app, before, status, limit)
        try:
            return self._advance(app, status, now, recorded, limit)
        except ApiError as error:
            log.warning("recording the revision failed: %s", error,
                        extra={"fields": {"namespace": app.namespace, "name": app.name}})
        return recorded

    def _advance(self, app: Application, status: Mapping[str, Any], now: tuple[int, Outcome] | None,
                 recorded: Recorded, limit: int) -> Recorded:
        pending = recorded.pending
        if now is None:  # a new input not counted (yet): the history stays as it is
            return self._limit(app, recorded, limit)
        number, outcome = now
        if pending is not None and pending.number != number:  # superseded before it ended
            self._create(Application.of(pending.body), pending.status, pending.number, Outcome("Processing"), limit)
            recorded, pending = Recorded(pending.number, Outcome("Processing"), limit), None
        final = outcome.state in FINAL_STATES
        if pending is not None:
            if not final:
                return self._limit(app, recorded, limit)
            self._create(Application.of(pending.body), pending.status, number, outcome, limit)
            return Recorded(number, outcome, limit)
        if number != recorded.number:  # counted by this pass
            if final or status.get("rolledBack"):
                self._create(app, status, number, outcome, limit)
                return Recorded(number, outcome, limit)
            return replace(recorded, pending=Pending.of(number, app, status))
        if final and new_outcome(outcome, recorded.outcome):
            self._patch(app, number, outcome)
            return Recorded(number, outcome, limit)
        return self._limit(app, recorded, limit)

    def _limit(self, app: Application, recorded: Recorded, limit: int) -> Recorded:
        """A changed ``revisionHistoryLimit`` prunes what it no longer keeps."""
        if limit == recorded.limit:
            return recorded
        self._prune(app, self._list(app), limit)
        return replace(recorded, limit=limit)

    # -- requests --------------------------------------------------------------------------------

    def _list(self, app: Application) -> list[dict[str, Any]]:
        return listed_revisions(self.client, self.domain, app.namespace, app.uid)

    def _create(self, app: Application, status: Mapping[str, Any], number: int, outcome: Outcome,
                limit: int) -> None:
        existing = self._list(app) if number > 1 else []  # before the first, there is none to see
        digest = recorded_digest(status)
        same = [int(r.get("revision") or 0) for r in existing
                if (r.get("data") or {}).get("digest") == digest and int(r.get("revision") or 0) != number]
        body = app.body
        if same and status.get("rolledBack"):  # a restore applied that revision's spec, not the Application's
            spec = next((r.get("data") or {}).get("spec") for r in existing if int(r.get("revision") or 0) == max(same))
            body = {**body, "spec": spec or body.get("spec") or {}}
        if limit > 0:
            document = manifest(self.domain, body, number, profile=str(status.get("profile") or ""), digest=digest,
                                restores=max(same) if same else None, outcome=outcome)
            namespace = str(document["metadata"]["namespace"])
            try:
                self._post(namespace, document)
                existing.append(document)
            except ApiError as error:
                if error.status != 409:
                    raise
                self._take_over(document, outcome)
        self._prune(app, existing, limit)

    def _post(self, namespace: str, document: dict[str, Any]) -> None:
        """Create a ControllerRevision, sent as YAML so that the API server stores ``data`` in
        its own canonical JSON: ``data`` is immutable and compared byte for byte, and a later
        merge patch of the annotations re-encodes it that way; stored as the client's
        ``json.dumps`` wrote it (spaces after ``:``), every patch was refused as a change of it."""
        self.client.request("create", "POST", revision_path(namespace), body=json.dumps(document),
                            content_type="application/yaml")

    def _take_over(self, document: dict[str, Any], outcome: Outcome) -> None:
        """A revision of that name exists: ours (an earlier attempt whose answer was lost, or an
        earlier process's record of a revision pending again after a restart) gets the outcome
        when it is news (its time stays, ``new_outcome``); a leftover of a deleted namesake is
        replaced; another's is left alone."""
        meta, label = document["metadata"], application_label(self.domain)
        path = revision_path(str(meta["namespace"]), str(meta["name"]))
        found = self.client.request("read", "GET", path)
        labels = (found.get("metadata") or {}).get("labels") or {}
        if labels.get(label) == meta["labels"][label]:
            if new_outcome(outcome, read_revision(self.domain, found).outcome):
                self.client.request("patch", "PATCH", path,
                                    body={"metadata": {"annotations": outcome_annotations(self.domain, outcome)}},
                                    content_type="application/merge-patch+json")
        elif label in labels:
            self.client.request("delete", "DELETE", path)
            self._post(str(meta["namespace"]), document)
        else:
            log.warning("ControllerRevision %s/%s belongs to another owner; revision not recorded",
                        meta["namespace"], meta["name"])

    def _patch(self, app: Application, number: int, outcome: Outcome) -> None:
        path = revision_path(app.namespace, revision_name(app.name, number))
        try:
            self.client.request("patch", "PATCH", path,
                                body={"metadata": {"annotations": outcome_annotations(self.domain, outcome)}},
                                content_type="application/merge-patch+json")
        except ApiError as error:
            if error.status != 404:  # pruned already (a limit of 0): nothing to say it on
                raise

    def _prune(self, app: Application, existing: list[dict[str, Any]], limit: int) -> None:
        namespace = app.namespace
        by_number = {int(r.get("revision") or 0): str((r.get("metadata") or {}).get("name")) for r in existing}
        for number in to_prune(list(by_number), limit):
            try:
                self.client.request("delete", "DELETE", revision_path(namespace, by_number[number]))
            except ApiError as error:
                if error.status != 404:
                    raise


def listed_revisions(client: ClusterClient, domain: str, namespace: str, uid: str) -> list[dict[str, Any]]:
    """The ControllerRevisions recorded for the Application of ``uid``: one LIST by its label
    (the history's pruning and restores, and an automatic rollback's search, rollback.py)."""
    found = client.request("list", "GET", revision_path(namespace), query=[("labelSelector", selector(domain, uid))])
    return list(found.get("items") or [])
