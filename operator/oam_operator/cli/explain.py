"""``oam-operator explain NAME``: the critical path of an Application's last revision, from
``status.timeline`` (docs/operator.md#explain).

Text: one line on the revision (how it ended and after how long, or how long it has been open and
what it waits for), the critical path (``db StatefulSet 8.1 s → web Deployment 2.0 s``) when a
wave is Ready, and the trace id when tracing recorded one. ``-o json``: the entry as the status
holds it, with ``path`` (each step's ``label`` and ``seconds``). Exit 0, or 1 on a failure or an
Application whose status has no timeline yet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import click

from oam_operator.api.timeline import TimelineEntry, critical_path, render_path

__all__ = ["NO_TIMELINE", "explain_json", "explain_lines", "explain_text", "last_entry", "run_explain"]

EXIT_FAILURE = 1
NO_TIMELINE = "Application {namespace}/{name} has no timeline yet: its first pass has not been written"


def last_entry(app: Mapping[str, Any]) -> TimelineEntry | None:
    """The last revision's entry of ``app``'s ``status.timeline``; ``None`` without one."""
    entries = (app.get("status") or {}).get("timeline") or []
    return TimelineEntry.model_validate(entries[-1]) if entries else None


def explain_text(namespace: str, name: str, entry: TimelineEntry, now: datetime) -> str:
    return "\n".join(explain_lines(namespace, name, entry, now)) + "\n"


def explain_lines(namespace: str, name: str, entry: TimelineEntry, now: datetime) -> list[str]:
    """The head line, the critical path and, when recorded, ``Trace: <id>`` (the UI shows them too)."""
    revision = f"Revision {entry.revision}" if entry.revision is not None else "The first revision"
    if entry.outcome is not None and entry.ended_ms is not None:
        head = f"{revision} of {namespace}/{name}: {entry.outcome} after {entry.ended_ms / 1000:.1f} s"
    else:
        started = datetime.fromisoformat(entry.started.replace("Z", "+00:00"))
        head = f"{revision} of {namespace}/{name}: in progress for {(now - started).total_seconds():.1f} s"
        if entry.waiting:
            head += f", waiting for {', '.join(entry.waiting)}"
    lines = [head]
    steps = critical_path(entry)
    lines.append(render_path(steps) if steps else "No wave is Ready yet")
    if entry.trace_id:
        lines.append(f"Trace: {entry.trace_id}")
    return lines


def explain_json(entry: TimelineEntry) -> str:
    document = entry.to_json() | {"path": [{"label": s.label, "seconds": s.seconds} for s in critical_path(entry)]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def run_explain(name: str, namespace: str | None, output: str, kubeconfig: str | None, context: str | None) -> int:
    """Print the last revision's critical path; 0, or 1 on a failure."""
    from oam_operator.cli.kubeclient import ApiFailure, connect, get_application

    try:
        conn = connect(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    try:
        app = get_application(conn, ns, name)
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()
    entry = last_entry(app)
    if entry is None:
        return _error(NO_TIMELINE.format(namespace=ns, name=name))
    text = explain_json(entry) if output == "json" else explain_text(ns, name, entry, datetime.now(UTC))
    click.echo(text, nl=False)
    return 0


def _error(message: str) -> int:
    click.echo(f"Error: {message}", err=True)
    return EXIT_FAILURE
