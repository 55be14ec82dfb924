"""The stored form of an Application's revision: a ControllerRevision (docs/operator.md#revision-history).

One ControllerRevision (apps/v1) per revision the operator applied, owned by the Application
(deleting the Application deletes them): ``revision`` is the number in ``status.revision``,
``data`` what was applied (the spec, the resolved ClusterProfile's name, the component digest,
the generation, and ``restores``: the earlier revision that applied the same input, as after a
rollback). ``data`` is immutable in the API, so the outcome lives in annotations the operator
updates: ``<domain>/outcome`` (``Processing``, ``Ready``, ``Error``), ``<domain>/outcome-at``,
and for an error ``<domain>/outcome-reason`` and ``<domain>/outcome-message``. The
Application's ``kubernetes.io/change-cause`` is copied when the revision is recorded, as
Deployments copy it to their ReplicaSets.

A revision is recorded once it ends (``Ready`` or ``Error``), or as ``Processing`` when a newer one
supersedes it first; until then the Application's status is its only account (``with_unrecorded``).

This module is the format only (names, labels, building and reading); the operator writes it
(``controller/reconcile/history.py``), the CLI reads it (``cli/history.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .meta import API_VERSION

__all__ = [
    "CHANGE_CAUSE",
    "KEPT_ON_ROLLBACK",
    "MAX_OUTCOME_MESSAGE",
    "Outcome",
    "Revision",
    "application_label",
    "counted_revision",
    "manifest",
    "outcome_annotations",
    "read_revision",
    "recorded_digest",
    "restored_spec",
    "revision_name",
    "revision_path",
    "selector",
    "with_unrecorded",
]

CHANGE_CAUSE = "kubernetes.io/change-cause"
MAX_OUTCOME_MESSAGE = 1024  # an annotation, not the condition: the status has the whole message
_MAX_NAME = 253
#: What steers the operator rather than what is applied: a rollback keeps their live values.
KEPT_ON_ROLLBACK = ("suspend", "interval", "timeout", "revisionHistoryLimit", "drift")


@dataclass(frozen=True)
class Outcome:
    """How a revision ended so far: ``Processing``, ``Ready`` or ``Error`` (with reason and message)."""

    state: str
    at: str = ""
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class Revision:
    """One recorded revision as the CLI shows it."""

    number: int
    name: str
    created: str
    spec: dict[str, Any]
    profile: str
    digest: str
    generation: int
    restores: int | None
    change_cause: str
    outcome: Outcome


def application_label(domain: str) -> str:
    """The label that ties a revision to its Application: the Application's UID (a name may
    be longer than a label value, and a namesake created later is another Application)."""
    return f"{domain}/application-uid"


def selector(domain: str, uid: str) -> str:
    return f"{application_label(domain)}={uid}"


def revision_name(application: str, number: int) -> str:
    """``<application>-r<number>``; a name too long for that keeps a hash of the full name."""
    suffix = f"-r{number}"
    if len(application) + len(suffix) <= _MAX_NAME:
        return application + suffix
    hashed = hashlib.sha256(application.encode("utf-8")).hexdigest()[:10]
    return f"{application[:_MAX_NAME - len(suffix) - 11]}-{hashed}{suffix}"


def revision_path(namespace: str, name: str = "") -> str:
    """The API path of the ControllerRevisions of ``namespace``, or of the one named ``name``."""
    base = f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions"
    return f"{base}/{name}" if name else base


def outcome_annotations(domain: str, outcome: Outcome) -> dict[str, str | None]:
    """The annotations of ``outcome``, as a merge patch (``None`` removes a key)."""
    return {
        f"{domain}/outcome": outcome.state,
        f"{domain}/outcome-at": outcome.at or None,
        f"{domain}/outcome-reason": outcome.reason or None,
        f"{domain}/outcome-message": outcome.message[:MAX_OUTCOME_MESSAGE] or None,
    }


def manifest(domain: str, application: Mapping[str, Any], number: int, *, profile: str, digest: str,
             restores: int | None, outcome: Outcome) -> dict[str, Any]:
    """The ControllerRevision recording revision ``number`` of ``application`` (its body as the pass read it)."""
    meta = application.get("metadata") or {}
    annotations = {key: value for key, value in outcome_annotations(domain, outcome).items() if value is not None}
    cause = (meta.get("annotations") or {}).get(CHANGE_CAUSE)
    if cause:
        annotations[CHANGE_CAUSE] = str(cause)
    data: dict[str, Any] = {"spec": dict(application.get("spec") or {}), "profile": profile, "digest": digest,
                            "generation": int(meta.get("generation") or 0)}
    if restores is not None:
        data["restores"] = restores
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(str(meta.get("name") or ""), number),
            "namespace": meta.get("namespace"),
            "labels": {application_label(domain): str(meta.get("uid") or "")},
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": API_VERSION, "kind": "Application", "name": meta.get("name"),
                                 "uid": meta.get("uid"), "controller": True}],
        },
        "revision": number,
        "data": data,
    }


def read_revision(domain: str, obj: Mapping[str, Any]) -> Revision:
    """A ControllerRevision as written by ``manifest`` (fields it lacks read as empty)."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    data = obj.get("data") or {}
    restores = data.get("restores")
    outcome = Outcome(str(annotations.get(f"{domain}/outcome") or "Unknown"),
                      str(annotations.get(f"{domain}/outcome-at") or ""),
                      str(annotations.get(f"{domain}/outcome-reason") or ""),
                      str(annotations.get(f"{domain}/outcome-message") or ""))
    return Revision(number=int(obj.get("revision") or 0), name=str(meta.get("name") or ""),
                    created=str(meta.get("creationTimestamp") or ""), spec=dict(data.get("spec") or {}),
                    profile=str(data.get("profile") or ""), digest=str(data.get("digest") or ""),
                    generation=int(data.get("generation") or 0),
                    restores=int(restores) if isinstance(restores, int) else None,
                    change_cause=str(annotations.get(CHANGE_CAUSE) or ""), outcome=outcome)


def restored_spec(recorded: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded revision's spec as a rollback applies it: with the live values of ``KEPT_ON_ROLLBACK``
    (the ``rollback`` command and the operator's automatic rollback alike)."""
    spec = {key: value for key, value in recorded.items() if key not in KEPT_ON_ROLLBACK}
    for key in KEPT_ON_ROLLBACK:
        if key in live:
            spec[key] = live[key]
    return spec


def counted_revision(status: Mapping[str, Any]) -> int | None:
    """The revision ``status`` speaks of: ``status.revision`` while the input being processed is the
    one it counted (``processingDigest`` equals ``lastProcessingDigest``); ``None`` when there is none
    yet or a new input is not counted yet."""
    number = status.get("revision")
    if not isinstance(number, int) or number < 1:
        return None
    if status.get("processingDigest") != status.get("lastProcessingDigest"):
        return None
    return number


def recorded_digest(status: Mapping[str, Any]) -> str:
    """The digest a revision's record keeps: ``revisionDigest`` when the status has the compatible
    form (controller/reconcile/passes.py, ``compatible_digests``), else ``processingDigest``."""
    return str(status.get("revisionDigest") or status.get("processingDigest") or "")


def with_unrecorded(revisions: list[Revision], app: Mapping[str, Any]) -> list[Revision]:
    """``revisions`` (recorded) and, oldest first, the Application's current revision as its status
    shows it when that one is not recorded yet: the operator records a revision once it ends
    (controller/reconcile/history.py), so one still processing is ``Processing`` here, with the
    Application's spec, since ``processingSince``, restoring the newest recorded revision of its
    digest (a rollback's new generation) as its record will. A restore, a history limit of 0 or an ended
    revision without a record add nothing."""
    status = app.get("status") or {}
    spec = app.get("spec") or {}
    number = counted_revision(status)
    if (number is None or status.get("state") in ("Ready", "Error") or status.get("rolledBack")
            or spec.get("revisionHistoryLimit") == 0 or any(r.number == number for r in revisions)):
        return sorted(revisions, key=lambda r: r.number)
    meta = app.get("metadata") or {}
    digest = recorded_digest(status)
    same = [r.number for r in revisions if r.digest == digest and r.number != number]  # as the record will say
    current = Revision(number=number, name="", created=str(status.get("processingSince") or ""),
                       spec=dict(spec), profile=str(status.get("profile") or ""), digest=digest,
                       generation=int(meta.get("generation") or 0), restores=max(same) if same else None,
                       change_cause=str((meta.get("annotations") or {}).get(CHANGE_CAUSE) or ""),
                       outcome=Outcome("Processing"))
    return sorted([*revisions, current], key=lambda r: r.number)
