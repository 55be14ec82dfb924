"""One Application's history and drift in the UI (docs/ui.md#history-rollback-and-drift): the rows
are ``history -o json``'s documents with the table's outcome and the current mark; drift is the
``Drifted`` condition and ``status.drift``."""

from __future__ import annotations

from typing import Any

from oam_operator.api.revisions import Outcome, Revision
from oam_operator.ui.history import drift_view, history_rows

V1 = {"components": [{"name": "web", "type": "webservice", "properties": {"image": "nginx:1.26"}}]}


def revision(number: int, outcome: Outcome, *, cause: str = "", restores: int | None = None) -> Revision:
    return Revision(number=number, name=f"shop-r{number}", created=f"2026-12-02T10:0{number}:00Z", spec=V1,
                    profile="", digest=f"d{number}", generation=number, restores=restores, change_cause=cause,
                    outcome=outcome)


def test_history_rows_are_the_cli_documents_oldest_first_with_outcome_and_current() -> None:
    revisions = [revision(3, Outcome("Processing"), cause="first", restores=1),
                 revision(1, Outcome("Ready", "2026-12-02T10:01:05Z"), cause="first"),
                 revision(2, Outcome("Error", "2026-12-02T10:02:05Z", "ApiError", "x" * 80))]
    rows = history_rows(revisions, current=3)
    assert [(r["revision"], r["current"], r.get("restores"), r.get("changeCause")) for r in rows] == [
        (1, False, None, "first"), (2, False, None, None), (3, True, 1, "first")]
    assert rows[0]["outcomeText"] == "Ready 2026-12-02T10:01:05Z"
    assert rows[1]["outcomeText"] == "Error 2026-12-02T10:02:05Z ApiError: " + "x" * 49 + "…"  # 60 characters, as the table
    assert rows[1]["outcome"] == {"state": "Error", "at": "2026-12-02T10:02:05Z", "reason": "ApiError",
                                  "message": "x" * 80}
    assert rows[2]["outcomeText"] == "Processing"
    assert history_rows([], current=None) == []


def app_with(status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "shop", "namespace": "shop", "generation": 1}, "spec": {}, "status": status}


def test_drift_names_the_condition_and_each_drifted_object() -> None:
    drifted = {"type": "Drifted", "status": "True", "reason": "DriftFlapping",
               "message": "Deployment web (spec.replicas) kept drifting right after each correction"}
    app = app_with({"conditions": [{"type": "Ready", "status": "True"}, drifted], "drift": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web",
         "fields": ["spec.replicas", "spec.template.spec.containers[name=web].image"],
         "heldUntil": "2026-12-02T10:10:00Z"},
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "conf", "deleted": True},
        "not a mapping"]})
    assert drift_view(app) == {
        "drifted": True, "reason": "DriftFlapping", "message": drifted["message"], "objects": [
            {"kind": "Deployment", "namespace": "shop", "name": "web",
             "what": "spec.replicas, spec.template.spec.containers[name=web].image",
             "heldUntil": "2026-12-02T10:10:00Z"},
            {"kind": "ConfigMap", "namespace": "shop", "name": "conf", "what": "deleted", "heldUntil": ""}]}


def test_no_drift_condition_or_a_false_one_is_no_drift() -> None:
    nothing = {"drifted": False, "reason": "", "message": "", "objects": []}
    assert drift_view(app_with({})) == nothing
    assert drift_view({"metadata": {}, "status": "odd"}) == nothing
    resolved = drift_view(app_with({"conditions": [{"type": "Drifted", "status": "False", "reason": "Corrected",
                                                   "message": "corrected"}]}))
    assert (resolved["drifted"], resolved["reason"], resolved["objects"]) == (False, "Corrected", [])


def test_roll_back_applies_to_every_revision_but_the_current_one_and_to_none_while_suspended() -> None:
    revisions = [revision(1, Outcome("Ready")), revision(2, Outcome("Ready"))]
    assert [r["rollbackBlocked"] for r in history_rows(revisions, current=2)] == [
        "", "revision 2 is the current revision"]
    assert [r["rollbackBlocked"] for r in history_rows(revisions, current=2, suspended=True)] == [
        "the Application is suspended: resume it first", "revision 2 is the current revision"]
