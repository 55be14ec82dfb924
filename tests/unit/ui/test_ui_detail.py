"""One Application's view in the UI: what a wave waits for, Events (docs/ui.md#one-application)."""

from __future__ import annotations

from typing import Any

from oam_operator.ui.detail import application_detail, event_rows


def item(kind: str, name: str, order: int, phase: str, status: str) -> dict[str, Any]:
    return {"group": "apps" if kind == "Deployment" else "", "version": "v1", "kind": kind, "namespace": "shop",
            "name": name, "phase": phase, "status": status, "applyOrder": order, "digest": "d"}


def shop(bundle_states: tuple[str, str, str]) -> dict[str, Any]:
    names = ("infra", "services", "apps")
    return {
        "metadata": {"name": "shop", "namespace": "shop", "generation": 2},
        "spec": {"suspend": True},
        "status": {
            "state": "Processing", "revision": 2, "observedGeneration": 2, "objects": 3, "readyObjects": 1,
            "conditions": [{"type": "Ready", "status": "False", "message": "Applying wave 2"}],
            "bundles": [{"name": n, "state": s, "objects": 1, "ready": int(s == "Ready"),
                         "waves": {"first": k, "last": k}, "dependsOn": list(names[:k])}
                        for k, (n, s) in enumerate(zip(names, bundle_states, strict=True))],
            "inventory": [item("StatefulSet", "db", 0, "Ready", "Current"),
                          item("Deployment", "api", 1, "Processing", "InProgress"),
                          item("Deployment", "web", 2, "", "")],
        },
    }


def test_each_bundle_not_ready_says_what_it_waits_for() -> None:
    detail = application_detail(shop(("Ready", "Processing", "Pending")), "oam-operator.dev")
    assert [(b["name"], b["waits"]) for b in detail["bundles"]] == [
        ("infra", ""),
        ("services", "waits for Deployment api (Processing, InProgress)"),
        ("apps", "waits for bundle services (Processing)"),
    ]
    assert (detail["state"], detail["message"], detail["suspended"], detail["current"]) == (
        "Processing", "Applying wave 2", True, True)
    assert [i["name"] for i in detail["bundles"][1]["items"]] == ["api"]


def test_a_bundle_with_nothing_applied_yet_waits_for_its_first_apply() -> None:
    app = shop(("Ready", "Ready", "Pending"))
    app["status"]["inventory"] = app["status"]["inventory"][:2]
    detail = application_detail(app, "oam-operator.dev")
    assert detail["bundles"][2]["waits"] == "waits for its first apply"


def test_events_are_the_applications_own_newest_first() -> None:
    def event(name: str, reason: str, when: str, kind: str = "Application", namespace: str = "shop") -> dict[str, Any]:
        return {"metadata": {"namespace": namespace}, "involvedObject": {"kind": kind, "name": name,
                "namespace": namespace}, "type": "Normal", "reason": reason, "message": reason.lower(),
                "lastTimestamp": when}

    events = [event("shop", "Applied", "2026-03-01T10:00:00Z"), event("shop", "Ready", "2026-03-01T10:01:00Z"),
              event("shop", "Other", "2026-03-01T10:02:00Z", kind="Deployment"),
              event("shop", "Elsewhere", "2026-03-01T10:03:00Z", namespace="other"),
              event("web", "NotThis", "2026-03-01T10:04:00Z")]
    assert [(e["reason"], e["count"]) for e in event_rows(events, "shop", "shop")] == [("Ready", 1), ("Applied", 1)]


def test_each_condition_has_its_types_tone_and_abnormal_true_conditions_are_not_ok() -> None:
    app = shop(("Ready", "Ready", "Ready"))
    app["status"]["conditions"] = [{"type": t, "status": s} for t, s in (
        ("Ready", "True"), ("Drifted", "True"), ("Stalled", "True"), ("Reconciling", "True"), ("Ready", "Unknown"),
        ("Drifted", "False"), ("Ready", "False"), ("SomethingNew", "True"))]
    tones = [(c["type"], c["status"], c["tone"]) for c in application_detail(app, "oam-operator.dev")["conditions"]]
    assert tones == [("Ready", "True", "ok"), ("Drifted", "True", "warn"), ("Stalled", "True", "bad"),
                     ("Reconciling", "True", "progress"), ("Ready", "Unknown", "progress"),
                     ("Drifted", "False", "ok"), ("Ready", "False", "bad"), ("SomethingNew", "True", "neutral")]


def test_only_the_actions_that_apply_are_enabled_each_other_one_says_why() -> None:
    suspended = application_detail(shop(("Ready", "Ready", "Ready")), "oam-operator.dev")
    assert suspended["blocked"] == {"reconcile": "the Application is suspended: resume it first",
                                    "suspend": "the Application is already suspended", "resume": ""}
    running = shop(("Ready", "Ready", "Ready"))
    running["spec"]["suspend"] = False
    assert application_detail(running, "oam-operator.dev")["blocked"] == {
        "reconcile": "", "suspend": "", "resume": "the Application is not suspended"}


def test_a_drifted_application_says_so_in_its_detail() -> None:
    app = shop(("Ready", "Ready", "Ready"))
    assert application_detail(app, "oam-operator.dev")["drifted"] is False
    app["status"]["conditions"].append({"type": "Drifted", "status": "True", "message": "Deployment web drifted"})
    assert application_detail(app, "oam-operator.dev")["drifted"] is True


def test_a_fleet_applications_clusters_are_listed_with_their_applications_namespace() -> None:
    app = shop(("Ready", "Ready", "Ready"))
    app["status"]["clusterSummary"] = "1/2"
    app["status"]["clusters"] = [
        {"name": "eu", "application": "shop-eu", "state": "Ready", "message": "Applied revision 1: 1 objects ready",
         "revision": 1, "objects": 1, "readyObjects": 1, "fleetRevision": 2},
        {"name": "us", "application": "shop-us", "state": "Pending", "message": "not created yet", "objects": "odd"}]
    detail = application_detail(app, "oam-operator.dev")
    assert detail["clusters"] == [
        {"name": "eu", "application": "shop-eu", "namespace": "shop", "state": "Ready",
         "message": "Applied revision 1: 1 objects ready", "revision": 1, "fleetRevision": 2, "objects": 1,
         "readyObjects": 1},
        {"name": "us", "application": "shop-us", "namespace": "shop", "state": "Pending",
         "message": "not created yet", "revision": None, "fleetRevision": None, "objects": None,
         "readyObjects": None}]
    assert application_detail(shop(("Ready", "Ready", "Ready")), "oam-operator.dev")["clusters"] == []
