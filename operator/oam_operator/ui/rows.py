"""The Application list of the UI (docs/ui.md#the-application-list): one row per Application, read
leniently from the API's JSON like ``status`` does, so an odd status never breaks the page.

The message is ``status.summary``, the STATUS column of ``kubectl get oapp`` (it reads ``Drifted:
…`` on a Ready Application that drifted), else the first line of the Ready message; ``drifted``
is the ``Drifted`` condition, so the list never says only ``Ready`` where kubectl says drifted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from oam_operator.cli.statusview import build_view
from oam_operator.ui.conditions import drift_condition

__all__ = ["AppRow", "age_text", "filter_rows", "row_of"]


@dataclass(frozen=True)
class AppRow:
    """What the list shows of one Application."""

    namespace: str
    name: str
    state: str
    ready: str
    message: str
    revision: int
    ready_objects: int
    objects: int
    suspended: bool
    created: str
    drifted: bool = False
    detail: str = ""  # the whole text the (shortened) summary stands for: the list's tooltip
    clusters: str = ""  # a fleet Application's <ready>/<selected>: kubectl's CLUSTERS column

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def to_json(self, now: datetime) -> dict[str, Any]:
        return {
            "namespace": self.namespace, "name": self.name, "state": self.state, "ready": self.ready,
            "message": self.message, "revision": self.revision, "readyObjects": self.ready_objects,
            "objects": self.objects, "suspended": self.suspended, "age": age_text(self.created, now),
            "created": self.created, "drifted": self.drifted, "detail": self.detail, "clusters": self.clusters,
        }


def row_of(app: Mapping[str, Any]) -> AppRow:
    """The row of an Application object; the state is ``<none>`` before the operator's first pass."""
    view = build_view(app)
    metadata = app.get("metadata") if isinstance(app.get("metadata"), Mapping) else {}
    spec = app.get("spec") if isinstance(app.get("spec"), Mapping) else {}
    created = metadata.get("creationTimestamp") if isinstance(metadata, Mapping) else None
    status = app.get("status") if isinstance(app.get("status"), Mapping) else {}
    summary = status.get("summary") if isinstance(status, Mapping) else None
    clusters = status.get("clusterSummary") if isinstance(status, Mapping) else None
    first_line = view.message.splitlines()[0] if view.message else ""
    message = summary if isinstance(summary, str) and summary else first_line
    drift = drift_condition(app)
    detail = f"Drifted: {drift.get('message') or ''}" if drift is not None and view.state == "Ready" else first_line
    return AppRow(
        namespace=view.namespace, name=view.name, state=view.state or "<none>", ready=view.ready,
        message=message, revision=view.revision, drifted=drift is not None, detail=detail,
        ready_objects=view.ready_objects, objects=view.objects,
        suspended=isinstance(spec, Mapping) and spec.get("suspend") is True,
        created=created if isinstance(created, str) else "",
        clusters=clusters if isinstance(clusters, str) else "",
    )


def age_text(created: str, now: datetime) -> str:
    """kubectl's AGE column: ``45s``, ``12m``, ``5h``, ``3d``; ``?`` for a missing or odd timestamp."""
    try:
        moment = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return "?"
    seconds = max(int((now - moment).total_seconds()), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def filter_rows(rows: Iterable[AppRow], search: str = "", state: str = "") -> list[AppRow]:
    """Rows whose ``namespace/name`` or message contains ``search`` (case-insensitive) and whose state
    is ``state`` (any when empty; ``Drifted``: the drifted ones), sorted by namespace and name."""
    needle = search.strip().lower()
    chosen = [
        row for row in rows
        if (not state or row.state == state or (state == "Drifted" and row.drifted))
        and (not needle or needle in row.key.lower() or needle in row.message.lower())
    ]
    return sorted(chosen, key=lambda row: (row.namespace, row.name))
