"""``oam-operator explain``'s text and JSON, and ``status``'s trace line (cli/explain.py, cli/statusview.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from oam_operator.cli.explain import explain_json, explain_text, last_entry
from oam_operator.cli.statusview import build_view, render_text, to_json

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def app(*entries: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": "app", "namespace": "shop", "generation": 2},
            "status": {"state": "Ready", "revision": 2, "observedGeneration": 2, "timeline": list(entries)}}


READY = {"revision": 2, "key": "k2", "started": "2026-12-06T12:00:00.000Z", "endedMs": 10100, "outcome": "Ready",
         "traceId": TRACE, "waves": [{"wave": 0, "readyMs": 8100, "gates": ["StatefulSet/db"]},
                                     {"wave": 1, "readyMs": 10100, "gates": ["Deployment/web"]}]}
OPEN = {"revision": 3, "key": "k3", "started": "2026-12-06T12:01:00.000Z",
        "waves": [{"wave": 0, "readyMs": 400}], "waiting": ["Deployment/web", "Job/migrate"]}


def test_the_last_revision_s_critical_path_is_printed_with_how_it_ended_and_its_trace() -> None:
    entry = last_entry(app({"key": "k1", "started": "2026-12-06T11:00:00.000Z"}, READY))
    assert entry is not None
    assert explain_text("shop", "app", entry, datetime.now(UTC)) == (
        "Revision 2 of shop/app: Ready after 10.1 s\n"
        "db StatefulSet 8.1 s → web Deployment 2.0 s\n"
        f"Trace: {TRACE}\n")


def test_an_open_revision_says_how_long_and_what_it_waits_for() -> None:
    entry = last_entry(app(READY, OPEN))
    assert entry is not None
    assert explain_text("shop", "app", entry, datetime(2026, 12, 6, 12, 1, 5, 500000, tzinfo=UTC)) == (
        "Revision 3 of shop/app: in progress for 5.5 s, waiting for Deployment/web, Job/migrate\n"
        "wave 0 0.4 s\n")


def test_json_is_the_entry_with_its_path() -> None:
    entry = last_entry(app(READY))
    assert entry is not None
    document = json.loads(explain_json(entry))
    assert document == READY | {"path": [{"label": "db StatefulSet", "seconds": 8.1},
                                         {"label": "web Deployment", "seconds": 2.0}]}


def test_no_timeline_is_none() -> None:
    assert last_entry({"status": {}}) is None


def test_status_shows_the_last_revision_s_trace_id() -> None:
    view = build_view(app(READY))
    assert render_text(view).splitlines()[1] == f"Trace: {TRACE}"
    assert to_json(view)["traceId"] == TRACE
    untraced = build_view(app(OPEN))
    assert "Trace:" not in render_text(untraced) and "traceId" not in to_json(untraced)


def test_the_ui_shows_explain_s_lines_and_nothing_without_a_timeline() -> None:
    from oam_operator.ui.detail import application_detail

    assert application_detail(app(READY), "oam-operator.dev")["explain"] == [
        "Revision 2 of shop/app: Ready after 10.1 s", "db StatefulSet 8.1 s → web Deployment 2.0 s", f"Trace: {TRACE}"]
    assert application_detail(app(), "oam-operator.dev")["explain"] == []
