"""One Application as the UI shows it (docs/ui.md#one-application): ``status``'s view model
(``cli/statusview.py``) with, per bundle, what a wave that is not Ready waits for, each
condition's tone, the actions that apply, and the Application's Events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from oam_operator.cli.explain import explain_lines, last_entry
from oam_operator.cli.statusview import BundleView, StatusView, build_view, to_json
from oam_operator.ui.availability import action_blocks
from oam_operator.ui.conditions import condition_tone, drift_condition

__all__ = ["application_detail", "bundle_waits", "cluster_rows", "event_rows", "explain_rows", "hook_rows"]

_READY_ITEM = frozenset({"Ready", "Completed"})


def bundle_waits(view: StatusView) -> dict[str, str]:
    """For each bundle not Ready, one sentence of what it waits for: the bundles it depends on that
    are not Ready yet, else its objects that are not Ready (with their phase and kstatus)."""
    states = {bundle.name: bundle.state for bundle in view.bundles}
    waits: dict[str, str] = {}
    for bundle in view.bundles:
        if bundle.state == "Ready":
            continue
        blocking = [name for name in bundle.depends_on if states.get(name) != "Ready"]
        if blocking:
            waits[bundle.name] = "waits for " + ", ".join(
                f"bundle {name} ({states.get(name) or 'unknown'})" for name in blocking)
            continue
        pending = _pending_items(bundle, view.namespace)
        waits[bundle.name] = ("waits for " + ", ".join(pending)) if pending else "waits for its first apply"
    return waits


def _pending_items(bundle: BundleView, namespace: str) -> list[str]:
    return [
        f"{item.label(namespace)} ({item.phase or 'no phase'}, {item.status or 'no status'})"
        for item in bundle.items if item.status not in _READY_ITEM
    ]


def cluster_rows(view: StatusView) -> list[dict[str, Any]]:
    """A fleet Application's clusters as the detail lists them (docs/ui.md#one-application): each
    line of ``status.clusters[]`` with the namespace its cluster Application is in (for the link)
    and every field present, so an odd line never breaks the page."""
    rows = []
    for line in view.clusters:
        rows.append({"name": str(line.get("name") or ""), "application": str(line.get("application") or ""),
                     "namespace": view.namespace, "state": str(line.get("state") or ""),
                     "message": str(line.get("message") or ""), "revision": _number(line, "revision"),
                     "fleetRevision": _number(line, "fleetRevision"), "objects": _number(line, "objects"),
                     "readyObjects": _number(line, "readyObjects")})
    return rows


def hook_rows(view: StatusView) -> list[dict[str, str]]:
    """The runs of lifecycle hooks (``status.hooks``, docs/operator.md#lifecycle-hooks) as the page
    lists them: every field a string, so an odd entry never breaks the page; ``failed`` marks a
    failed run as ``rolledBack`` marks a rolled-back revision."""
    rows = []
    for hook in view.hooks:
        row = {key: str(hook.get(key) or "") for key in
               ("phase", "kind", "namespace", "name", "run", "state", "deletePolicy", "timeout", "message",
                "startedAt")}
        rows.append(row | {"failed": "failed" if row["state"] == "Failed" else ""})
    return rows


def _number(line: Mapping[str, Any], key: str) -> int | None:
    value = line.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def event_rows(events: Iterable[Mapping[str, Any]], namespace: str, name: str) -> list[dict[str, Any]]:
    """The core/v1 Events about Application ``namespace/name``, newest first."""
    rows = []
    for event in events:
        involved = event.get("involvedObject") or {}
        if involved.get("kind") != "Application" or involved.get("name") != name:
            continue
        if (involved.get("namespace") or (event.get("metadata") or {}).get("namespace")) != namespace:
            continue
        when = event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get(
            "creationTimestamp") or ""
        rows.append({"type": event.get("type") or "", "reason": event.get("reason") or "",
                     "message": event.get("message") or "", "count": event.get("count") or 1, "time": str(when)})
    return sorted(rows, key=lambda row: row["time"], reverse=True)


def application_detail(app: Mapping[str, Any], domain: str) -> dict[str, Any]:
    """The JSON the detail page renders: ``status -o json``'s document plus the Ready message, the
    Ready count, the suspend and drift flags, each bundle's ``waits``, each condition's ``tone``
    and why each action is disabled (``blocked``, ``""`` when it applies)."""
    view = build_view(app, domain)
    document = to_json(view)
    waits = bundle_waits(view)
    for bundle in document["bundles"]:
        bundle["waits"] = waits.get(bundle["name"], "")
    for condition in document["conditions"]:
        condition["tone"] = condition_tone(str(condition.get("type") or ""), str(condition.get("status") or ""))
    spec = app.get("spec") if isinstance(app.get("spec"), Mapping) else {}
    suspended = isinstance(spec, Mapping) and spec.get("suspend") is True
    return document | {
        "state": view.state or "<none>", "ready": view.ready, "message": view.message,
        "objects": view.objects, "readyObjects": view.ready_objects, "current": view.current,
        "suspended": suspended, "drifted": drift_condition(app) is not None,
        "blocked": action_blocks(suspended),
        "dependencies": [dict(d) for d in view.dependencies],
        "clusters": cluster_rows(view),
        "hooks": hook_rows(view),
        "explain": explain_rows(app, view),
    }


def explain_rows(app: Mapping[str, Any], view: StatusView) -> list[str]:
    """What ``oam-operator explain`` prints of the last revision (docs/operator.md#explain), ``[]``
    without a timeline."""
    entry = last_entry(app)
    return [] if entry is None else explain_lines(view.namespace, view.name, entry, datetime.now(UTC))
