"""The Application page lists the runs of lifecycle hooks (ui/detail.py, docs/ui.md#one-application)."""

from __future__ import annotations

from typing import Any

from oam_operator.ui.detail import application_detail


def app_with(hooks: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "shop", "generation": 2},
            "status": {"state": "Error", "revision": 2, "observedGeneration": 2,
                       "conditions": [{"type": "Ready", "status": "False", "reason": "HookFailed",
                                       "message": "PostReady hook Job smoke failed: BackoffLimitExceeded"}],
                       "hooks": hooks}}


def test_each_hook_run_is_a_row_and_a_failed_one_is_marked() -> None:
    detail = application_detail(app_with([
        {"phase": "PreApply", "apiVersion": "batch/v1", "kind": "Job", "namespace": "shop", "name": "migrate",
         "run": "r2", "state": "Succeeded", "deletePolicy": "BeforeNextRun", "timeout": "5m",
         "startedAt": "2026-12-06T10:00:00Z"},
        {"phase": "PostReady", "apiVersion": "batch/v1", "kind": "Job", "name": "smoke", "run": "r2",
         "state": "Failed", "deletePolicy": "Never", "timeout": "2m", "message": "BackoffLimitExceeded"},
    ]), "oam-operator.dev")
    assert detail["hooks"] == [
        {"phase": "PreApply", "kind": "Job", "namespace": "shop", "name": "migrate", "run": "r2",
         "state": "Succeeded", "deletePolicy": "BeforeNextRun", "timeout": "5m", "message": "",
         "startedAt": "2026-12-06T10:00:00Z", "failed": ""},
        {"phase": "PostReady", "kind": "Job", "namespace": "", "name": "smoke", "run": "r2", "state": "Failed",
         "deletePolicy": "Never", "timeout": "2m", "message": "BackoffLimitExceeded", "startedAt": "",
         "failed": "failed"},
    ]


def test_no_hooks_and_odd_entries_never_break_the_page() -> None:
    assert application_detail(app_with(None), "oam-operator.dev")["hooks"] == []
    rows = application_detail(app_with(["no", {"phase": "PreDelete", "name": 3}]), "oam-operator.dev")["hooks"]
    assert rows == [{"phase": "PreDelete", "kind": "", "namespace": "", "name": "3", "run": "", "state": "",
                     "deletePolicy": "", "timeout": "", "message": "", "startedAt": "", "failed": ""}]
