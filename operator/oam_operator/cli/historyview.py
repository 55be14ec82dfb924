"""What ``history`` prints and what ``rollback`` decides, without a cluster (docs/operator.md#history-and-rollback).

Pure functions of the Application (its JSON) and its recorded revisions (``api/revisions.py``):
the history table, one revision's detail, the spec a rollback writes and the exact refusals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.api.revisions import KEPT_ON_ROLLBACK, Revision, restored_spec

__all__ = [
    "RollbackRefused",
    "render_documents",
    "render_history",
    "render_revision",
    "rollback_spec",
    "rollback_target",
    "table_outcome",
]

NONE = "<none>"
MAX_TABLE_MESSAGE = 60
#: Spec fields a rollback leaves as they are: they steer the operator, they are not what it
#: applies (the component digest leaves them out, controller/reconcile/digest.py).
class RollbackRefused(Exception):
    """A rollback that is not done; ``str()`` is the one line after ``Error:``."""


def rollback_mark(revision: Revision) -> str:
    """What a rollback policy made of ``revision`` (docs/operator.md#automatic-rollback): ``RolledBack``
    (it failed and was rolled back), ``Restored`` (it is the restore, with ``restores``), or ``""``."""
    if revision.outcome.state != "Error" or revision.outcome.reason != "RolledBack":
        return ""
    return "Restored" if revision.restores is not None else "RolledBack"


def table_outcome(revision: Revision) -> str:
    """``Ready <time>``, ``Error <time> <reason>: <message>`` (shortened), ``Processing``; a rollback
    policy's ``RolledBack <time>: <message>`` and ``Restored <time>`` (``rollback_mark``)."""
    outcome = revision.outcome
    mark = rollback_mark(revision)
    if mark == "Restored":
        return " ".join(part for part in (mark, outcome.at) if part)
    text = " ".join(part for part in (mark or outcome.state, outcome.at) if part)
    if outcome.state == "Error":
        detail = f"{outcome.reason}: {outcome.message}" if outcome.reason and not mark else outcome.message
        detail = detail.replace("\n", " ")
        if len(detail) > MAX_TABLE_MESSAGE:
            detail = detail[:MAX_TABLE_MESSAGE - 1] + "…"
        text = f"{text} {detail}" if detail else text
    return text


def render_history(revisions: Sequence[Revision], current: int | None) -> str:
    """The table of ``history APP``: oldest first, the current revision marked with ``*``."""
    if not revisions:
        return "No revisions recorded.\n"
    rows = [("REVISION", "CREATED", "OUTCOME", "RESTORES", "CHANGE-CAUSE")]
    for revision in sorted(revisions, key=lambda r: r.number):
        marker = "*" if revision.number == current else ""
        rows.append((f"{revision.number}{marker}", revision.created or NONE, table_outcome(revision),
                     str(revision.restores) if revision.restores is not None else "-",
                     revision.change_cause or NONE))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    lines = ["   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "   " + row[-1]
             for row in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def revision_document(revision: Revision) -> dict[str, Any]:
    """One revision as ``-o yaml|json`` prints it in a list."""
    outcome = revision.outcome
    document: dict[str, Any] = {"revision": revision.number, "created": revision.created,
                                "generation": revision.generation, "profile": revision.profile,
                                "digest": revision.digest, "outcome": {"state": outcome.state}}
    for key, value in (("at", outcome.at), ("reason", outcome.reason), ("message", outcome.message)):
        if value:
            document["outcome"][key] = value
    if revision.restores is not None:
        document["restores"] = revision.restores
    if revision.change_cause:
        document["changeCause"] = revision.change_cause
    return document


def render_documents(revisions: Sequence[Revision], output: str) -> str:
    """``history APP -o yaml|json``: every revision, oldest first."""
    documents = [revision_document(r) for r in sorted(revisions, key=lambda r: r.number)]
    return _dump(documents, output)


def render_revision(revision: Revision, output: str) -> str:
    """``history APP --revision N``: the spec (``-o yaml|json``), or (text) the revision's
    facts, the outcome's whole message included, followed by its spec as YAML."""
    if output in ("yaml", "json"):
        return _dump(revision.spec, output)
    outcome = revision.outcome
    detail = " ".join(part for part in (outcome.state, outcome.at) if part)
    if outcome.state == "Error":
        detail += f" {outcome.reason}: {outcome.message}" if outcome.reason else f" {outcome.message}"
    facts = [("created", revision.created or NONE), ("generation", str(revision.generation)),
             ("profile", revision.profile or NONE), ("digest", revision.digest or NONE), ("outcome", detail)]
    if revision.restores is not None:
        facts.append(("restores", str(revision.restores)))
    facts.append(("change-cause", revision.change_cause or NONE))
    lines = [f"Revision {revision.number}:"]
    lines += [f"  {key + ':':<14}{value}" for key, value in facts]
    lines.append("spec:")
    lines += ["  " + line for line in _dump(revision.spec, "yaml").rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def _dump(value: Any, output: str) -> str:
    if output == "json":
        return json.dumps(value, indent=2) + "\n"
    from oam_operator.oam.formatting.serialize import dump_document

    return dump_document(value)


def _applied(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in spec.items() if key not in KEPT_ON_ROLLBACK}


def rollback_target(app: Mapping[str, Any], revisions: Sequence[Revision], wanted: int | None) -> Revision:
    """The revision ``rollback`` writes back: ``wanted``, else the newest before the current
    one that applies something else. Raises ``RollbackRefused`` with the exact refusal."""
    meta = app.get("metadata") or {}
    where = f"Application {meta.get('namespace')}/{meta.get('name')}"
    spec = app.get("spec") or {}
    if spec.get("suspend") is True:
        raise RollbackRefused(f"{where} is suspended; resume it first (oam-operator resume {meta.get('name')} "
                              f"-n {meta.get('namespace')})")
    by_number = {r.number: r for r in revisions}
    if wanted is not None:
        if wanted not in by_number:
            known = ", ".join(str(n) for n in sorted(by_number)) or "none recorded"
            raise RollbackRefused(f"{where} has no revision {wanted} (revisions: {known})")
        if _applied(by_number[wanted].spec) == _applied(spec):
            raise RollbackRefused(f"{where} already applies revision {wanted}; nothing to roll back")
        return by_number[wanted]
    current = (app.get("status") or {}).get("revision")
    below = [r for r in by_number.values()
             if (not isinstance(current, int) or r.number < current) and _applied(r.spec) != _applied(spec)]
    if not below:
        raise RollbackRefused(f"{where} has no earlier revision to roll back to")
    return max(below, key=lambda r: r.number)


def rollback_spec(live: Mapping[str, Any], revision: Revision) -> dict[str, Any]:
    """The spec a rollback writes: the revision's, with the live values of ``KEPT_ON_ROLLBACK``."""
    return restored_spec(revision.spec, live)
