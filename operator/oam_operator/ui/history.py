"""One Application's revision history, rollback and drift as the UI shows them
(docs/ui.md#history-rollback-and-drift): the rows are ``oam-operator history``'s, built from the
same functions (``cli/history.py``, ``cli/historyview.py``); a rollback is ``oam-operator rollback
--to-revision N`` with its refusals; drift is the ``Drifted`` condition and ``status.drift``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.api.revisions import Revision
from oam_operator.cli.historyview import revision_document, rollback_mark, table_outcome
from oam_operator.cli.kubeclient import ApiFailure, Connection
from oam_operator.ui.availability import rollback_block

__all__ = ["HistoryError", "drift_view", "history_rows", "read_history", "rollback"]


class HistoryError(Exception):
    """A history read or a rollback that failed or was refused; ``message`` is its one line."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.message, self.refused = message, refused


def history_rows(revisions: Sequence[Revision], current: int | None, suspended: bool = False) -> list[dict[str, Any]]:
    """``history -o json``'s documents, oldest first, each with the table's outcome line, whether
    it is the current revision (the table's ``*``), ``rolledBack`` (``historyview.rollback_mark``)
    and why it cannot be rolled back to
    (``rollbackBlocked``, ``""`` when it can)."""
    return [revision_document(revision) | {"outcomeText": table_outcome(revision),
                                           "rolledBack": rollback_mark(revision),
                                           "current": revision.number == current,
                                           "rollbackBlocked": rollback_block(revision.number, current, suspended)}
            for revision in sorted(revisions, key=lambda r: r.number)]


def drift_view(app: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Drifted`` condition (``drifted``, its reason and message) and the drifted objects of
    ``status.drift``, each with what another manager changed (or ``deleted``)."""
    found = app.get("status")
    status: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    condition = next((c for c in status.get("conditions") or []
                      if isinstance(c, Mapping) and c.get("type") == "Drifted"), None)
    objects = []
    for drift in status.get("drift") or []:
        if not isinstance(drift, Mapping):
            continue
        fields = [str(f) for f in drift.get("fields") or [] if isinstance(f, str)]
        objects.append({"kind": str(drift.get("kind") or ""), "namespace": str(drift.get("namespace") or ""),
                        "name": str(drift.get("name") or ""),
                        "what": "deleted" if drift.get("deleted") is True else ", ".join(fields),
                        "heldUntil": str(drift.get("heldUntil") or "")})
    return {"drifted": condition is not None and condition.get("status") == "True",
            "reason": str((condition or {}).get("reason") or ""),
            "message": str((condition or {}).get("message") or ""), "objects": objects}


def read_history(conn: Connection, namespace: str, name: str, domain: str) -> dict[str, Any]:
    """The revisions of the live Application ``namespace/name`` (a blocking call)."""
    from oam_operator.cli.history import list_revisions
    from oam_operator.cli.kubeclient import get_application

    try:
        app = get_application(conn, namespace, name)
        revisions = list_revisions(conn, app, domain)
    except ApiFailure as failure:
        raise HistoryError(failure.message) from None
    current = (app.get("status") or {}).get("revision")
    suspended = (app.get("spec") or {}).get("suspend") is True
    return {"current": current if isinstance(current, int) else None, "suspended": suspended,
            "revisions": history_rows(revisions, current if isinstance(current, int) else None, suspended)}


def rollback(conn: Connection, namespace: str, name: str, number: int, domain: str) -> dict[str, Any]:
    """``oam-operator rollback NAME --to-revision NUMBER``: the answer, or its exact refusal."""
    from oam_operator.cli.history import rollback_application
    from oam_operator.cli.historyview import RollbackRefused

    try:
        target, generation = rollback_application(conn, namespace, name, number, domain)
    except RollbackRefused as refused:
        raise HistoryError(str(refused), refused=True) from None
    except ApiFailure as failure:
        raise HistoryError(failure.message) from None
    return {"message": f"Application {namespace}/{name} rolled back to revision {target.number} "
                       f"(generation {generation})", "revision": target.number, "generation": generation}
