"""The Application list's rows (docs/ui.md#the-application-list)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from oam_operator.ui.rows import age_text, filter_rows, row_of

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def app(name: str, namespace: str = "shop", state: str | None = "Ready", message: str = "all ready",
        suspend: bool = False, created: str = "2026-03-01T11:58:00Z") -> dict[str, Any]:
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
                            "spec": {"suspend": suspend}}
    if state is not None:
        body["status"] = {"state": state, "revision": 4, "objects": 3, "readyObjects": 2,
                          "conditions": [{"type": "Ready", "status": "True" if state == "Ready" else "False",
                                          "message": message + "\nsecond line"}]}
    return body


def test_a_row_has_state_first_message_line_revision_counts_and_age() -> None:
    row = row_of(app("web"))
    assert row.to_json(NOW) == {
        "namespace": "shop", "name": "web", "state": "Ready", "ready": "True", "message": "all ready",
        "revision": 4, "readyObjects": 2, "objects": 3, "suspended": False, "age": "2m",
        "created": "2026-03-01T11:58:00Z", "drifted": False, "detail": "all ready", "clusters": "",
    }


def test_a_fleet_applications_row_has_kubectls_clusters_column() -> None:
    body = app("fleet")
    body["status"]["clusterSummary"] = "1/2"
    assert row_of(body).to_json(NOW)["clusters"] == "1/2"


def test_an_application_without_status_reads_as_none_with_the_status_commands_message() -> None:
    row = row_of(app("new", state=None))
    assert (row.state, row.ready, row.revision) == ("<none>", "Unknown", 0)
    assert row.message == "No status yet: the operator has not processed this Application (is it running?)"


def test_odd_fields_never_break_a_row() -> None:
    row = row_of({"metadata": {"name": "x", "namespace": "y", "creationTimestamp": 5}, "spec": [],
                  "status": {"state": 3, "revision": "7"}})
    assert (row.state, row.revision, row.suspended, row.to_json(NOW)["age"]) == ("<none>", 0, False, "?")


def test_age_is_kubectls_largest_unit() -> None:
    assert [age_text(t, NOW) for t in ("2026-03-01T11:59:15Z", "2026-03-01T09:00:00Z", "2026-02-26T12:00:00Z",
                                        "2026-03-01T12:00:09Z", "not a time")] == ["45s", "3h", "3d", "0s", "?"]


def test_filter_searches_name_namespace_and_message_case_insensitively_and_by_state() -> None:
    rows = [row_of(app("web")), row_of(app("db", namespace="data", state="Error", message="Quota Exceeded")),
            row_of(app("api", state="Processing"))]
    assert [r.key for r in filter_rows(rows)] == ["data/db", "shop/api", "shop/web"]
    assert [r.key for r in filter_rows(rows, "SHOP/")] == ["shop/api", "shop/web"]
    assert [r.key for r in filter_rows(rows, "quota")] == ["data/db"]
    assert [r.key for r in filter_rows(rows, state="Processing")] == ["shop/api"]
    assert filter_rows(rows, "web", state="Error") == []


DRIFT = ("Deployment web (spec.template.spec.containers[name=web].image) changed by another field manager; "
         "left as it is (spec.drift: Report)")


def drifted(name: str) -> dict[str, Any]:
    body = app(name, message="Applied revision 4")
    body["status"]["conditions"].append({"type": "Drifted", "status": "True", "reason": "DriftDetected",
                                         "message": DRIFT})
    body["status"]["summary"] = f"Drifted: {DRIFT}"
    return body


def test_a_drifted_application_reads_as_kubectl_get_oapp_shows_it_not_as_ready_applied_revision_4() -> None:
    row = row_of(drifted("web")).to_json(NOW)
    assert (row["state"], row["drifted"], row["message"]) == ("Ready", True, f"Drifted: {DRIFT}")
    # kubectl's column is shortened by the operator; the list's tooltip has the whole message.
    shortened = drifted("api")
    shortened["status"]["summary"] = f"Drifted: {DRIFT}"[:60] + "…"
    assert row_of(shortened).to_json(NOW)["detail"] == f"Drifted: {DRIFT}"
    # A Drifted condition that is False, or none, is no drift; without a summary the Ready message's first line.
    quiet = app("db")
    quiet["status"]["conditions"].append({"type": "Drifted", "status": "False", "message": "no drift"})
    assert (row_of(quiet).drifted, row_of(quiet).message) == (False, "all ready")


def test_the_state_filter_drifted_keeps_the_drifted_applications() -> None:
    rows = [row_of(drifted("web")), row_of(app("db"))]
    assert [r.key for r in filter_rows(rows, state="Drifted")] == ["shop/web"]
    assert [r.key for r in filter_rows(rows, state="Ready")] == ["shop/db", "shop/web"]
