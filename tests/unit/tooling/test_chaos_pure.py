"""The chaos engine's pure parts (docs/chaos.md): the seeded plan, the audit log reader and the
invariants read from it, on made-up audit events."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tools.chaos.audit import AuditEvent, AuditLog
from tools.chaos.engine import Outcome, RunConfig, message_kind
from tools.chaos.fleet import AppModel
from tools.chaos.invariants import Violation, foreign_uid_writes, resurrections, unbound_status_writes
from tools.chaos.report import markdown
from tools.chaos.schedule import PROCESS_FAULTS, plan

T0 = datetime(2026, 12, 6, 5, 0, tzinfo=UTC)
B = "oam-operator/0.1.0 (b1)"


def event(verb: str = "patch", resource: str = "applications", subresource: str = "status", name: str = "x",
          code: int = 200, agent: str = B, at: datetime = T0, request: dict[str, Any] | None = None,
          response: dict[str, Any] | None = None) -> AuditEvent:
    return AuditEvent(verb, resource, subresource, name, code, agent, at, request, response)


def target(uid: str = "u2", generation: int = 1, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"uid": uid, "generation": generation}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-06T05:00:00Z"
    return {"metadata": meta}


UIDS = {"u1": ("x", 0), "u2": ("x", 1)}


def test_the_plan_is_the_seeds_and_sees_every_process_fault() -> None:
    assert plan(36, 120, 3, 14) == plan(36, 120, 3, 14)
    assert plan(36, 120, 3, 14) != plan(37, 120, 3, 14)
    faults = plan(36, 120, 3, 14)
    assert {f.kind for f in faults} >= set(PROCESS_FAULTS)
    assert max(f.at for f in faults) < 108  # nothing in the last tenth
    assert [f.at for f in faults] == sorted(f.at for f in faults)


def test_a_deletion_status_written_into_a_live_namesake_is_a_foreign_write() -> None:
    stale = event(request={"status": {"state": "DeletionPending", "conditions": [
        {"type": "Ready", "status": "False", "reason": "DeletionRetrying"}]}}, response=target())
    assert foreign_uid_writes(UIDS, [stale]) == [Violation(
        "foreign-uid-write", "2026-12-06T05:00:00.000+00:00 b1 patch applications/x/status 200: deletion status "
                             "DeletionPending/DeletionRetrying written into an Application not being deleted")]
    assert foreign_uid_writes(UIDS, [event(request=stale.request, response=target(deleting=True))]) == []
    as_json_patch = event(request=[{"op": "add", "path": "/status", "value": stale.request["status"]}],
                          response=target())
    assert [v.detail for v in foreign_uid_writes(UIDS, [as_json_patch])] == [
        v.detail for v in foreign_uid_writes(UIDS, [stale])]


def test_a_later_generation_an_old_inventory_or_a_removed_finalizer_is_a_foreign_write() -> None:
    old = event(request={"status": {"observedGeneration": 3, "inventory": [{"kind": "ConfigMap", "name": "x-i0-c0"}]}},
                response=target())
    finalizer = event(subresource="", request={"metadata": {"finalizers": []}}, response=target())
    kopf = event(subresource="", request=[{"op": "remove", "path": "/metadata/finalizers/0"}], response=target())
    found = [v.detail.split(": ", 1)[1] for v in foreign_uid_writes(UIDS, [old, finalizer, kopf])]
    assert found == ["status of generation 3 written into generation 1; inventory of another incarnation "
                     "(x-i0-c0) written into incarnation 1",
                     "the finalizer removed from an Application not being deleted",
                     "the finalizer removed from an Application not being deleted"]
    mine = event(request={"metadata": {"uid": "u2"}, "status": {
        "observedGeneration": 1, "inventory": [{"kind": "ConfigMap", "name": "x-i1-c0"}]}}, response=target())
    not_ours = event(agent="kubectl/v1.37", request=old.request, response=target())
    failed = event(code=409, request=old.request, response=target())
    assert foreign_uid_writes(UIDS, [mine, not_ours, failed]) == []


def test_a_status_write_without_a_uid_is_unbound() -> None:
    bound = event(request={"metadata": {"uid": "u2"}, "status": {}})
    tested = event(request=[{"op": "test", "path": "/metadata/uid", "value": "u2"},
                            {"op": "replace", "path": "/status/state", "value": "Ready"}])
    unbound = event(code=404, request={"status": {}})
    others = event(agent="kubectl/v1.37", request={"status": {}})
    assert (bound.uid_sent(), tested.uid_sent(), unbound.uid_sent()) == ("u2", "u2", None)
    assert unbound_status_writes([bound, tested, unbound, others]) == [
        Violation("unbound-status-write",
                  "2026-12-06T05:00:00.000+00:00 b1 patch applications/x/status 404: no metadata.uid precondition")]


def test_a_write_of_an_object_after_its_application_was_gone_is_a_resurrection() -> None:
    app = AppModel("x", configmaps=3, deployment=False, incarnation=1, past=[[0, "u1", T0.timestamp()]])
    late = event(verb="patch", resource="configmaps", subresource="", name="x-i0-c1", code=201,
                 at=T0 + timedelta(seconds=3))
    early = event(verb="patch", resource="configmaps", subresource="", name="x-i0-c0", at=T0 - timedelta(seconds=1))
    other = event(verb="patch", resource="configmaps", subresource="", name="x-i1-c0", at=T0 + timedelta(seconds=3))
    assert resurrections({"x": app}, [late, early, other]) == [Violation(
        "resurrection", "2026-12-06T05:00:03.000+00:00 b1 patch configmaps/x-i0-c1 201: written 3.0 s after "
                        "its Application (x-i0) was gone")]


def test_the_audit_log_is_read_as_it_grows_and_only_for_its_namespace(tmp_path: Path) -> None:
    def line(namespace: str, name: str) -> str:
        return json.dumps({"stage": "ResponseComplete", "verb": "create", "userAgent": B,
                           "objectRef": {"namespace": namespace, "resource": "configmaps", "name": name},
                           "responseStatus": {"code": 201}, "stageTimestamp": "2026-12-06T05:00:00.5Z"})

    path = tmp_path / "audit.log"
    path.write_text(line("chaos", "a") + "\n" + line("other", "b") + "\n" + line("chaos", "c")[:30])
    log = AuditLog(path, "chaos")
    assert [e.name for e in log.writes("configmaps")] == ["a"]
    with path.open("a") as f:
        f.write(line("chaos", "c")[30:] + "\n")
    assert [(e.name, e.writer) for e in log.writes()] == [("a", "b1"), ("c", "b1")]


def test_the_report_says_every_invariant_and_the_drift_quantiles(tmp_path: Path) -> None:
    outcome = Outcome(RunConfig(seed=1, duration=60, apps=4, log_dir=tmp_path), faults=Counter({"cut": 2}),
                      convergence=12.5, drift=[1.0, 2.0, 3.0, 4.0, 10.0],
                      rss={"a1": [(0.0, 100 * 2**20), (70.0, 120 * 2**20)], "b1": [(10.0, 90 * 2**20)],
                           "b2": [(80.0, 95 * 2**20)]})
    text = markdown(outcome, "abc1234", "minimal")
    assert "| cut | 2 | 0 |" in text and "| orphan | 0 |" in text and "| not-converged | 0 |" in text
    assert "- Convergence after the last fault (all Ready, every object as its spec says): 12.5 s." in text
    assert "p50 3.0 s, p90 10.0 s over 5 corrected hand edits" in text
    assert "| a1 | 2 | 100 | 120 | 120 |" in text
    assert "| minute | a MiB | b MiB |\n|---:|---:|---:|\n| 0 | 100 | 90 |\n| 1 | 120 | 95 |" in text


def test_error_lines_are_counted_by_kind_not_by_address_or_object() -> None:
    assert message_kind("Request attempt #1/9 failed; will retry: GET https://127.0.0.1:45607/apis/x/v1/namespaces/"
                        "chaos/applications?watch=true&allowWatchBookmarks=true -> ClientConnectorError") == (
        "Request attempt #1/9 failed; will retry: GET /apis/x/v1/namespaces/chaos/applications -> ClientConnectorError")
    assert message_kind("waiting for ConfigMap app-03-i1-c2 (Deleting) of app-03") == (
        "waiting for ConfigMap app-… (Deleting) of app-…")
