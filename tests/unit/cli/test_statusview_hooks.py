"""``oam-operator status`` shows the runs of lifecycle hooks (cli/statusview.py,
docs/operator.md#lifecycle-hooks): a header line each, a ``(hooks)`` section with ``--tree``, and
``"hooks"`` in JSON as the status has them."""

from __future__ import annotations

from typing import Any

from oam_operator.cli.statusview import build_view, render_text, to_json

HOOKS = [
    {"phase": "PreApply", "apiVersion": "batch/v1", "kind": "Job", "namespace": "shop", "name": "migrate",
     "run": "r2", "state": "Succeeded", "deletePolicy": "BeforeNextRun", "timeout": "5m",
     "startedAt": "2026-12-06T10:00:00Z"},
    {"phase": "PostReady", "apiVersion": "batch/v1", "kind": "Job", "namespace": "tests", "name": "smoke",
     "run": "r2", "state": "Failed", "deletePolicy": "Never", "timeout": "2m",
     "message": "Job tests/smoke failed: BackoffLimitExceeded"},
]


def hooked_app(hooks: Any = HOOKS) -> dict[str, Any]:
    return {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": "shop", "generation": 2},
        "status": {"observedGeneration": 2, "state": "Error", "revision": 2, "objects": 1, "readyObjects": 1,
                   "conditions": [{"type": "Ready", "status": "False", "reason": "HookFailed",
                                   "message": "PostReady hook Job smoke failed: BackoffLimitExceeded"}],
                   "hooks": hooks},
    }


def test_the_header_names_each_hook_run_and_its_state() -> None:
    assert render_text(build_view(hooked_app())).splitlines() == [
        "Application shop/web  State: Error  Ready: False  Revision: 2  Objects: 1/1 ready",
        "Message: PostReady hook Job smoke failed: BackoffLimitExceeded",
        "Hook: PreApply Job migrate (run r2): Succeeded",
        "Hook: PostReady Job tests/smoke (run r2): Failed: Job tests/smoke failed: BackoffLimitExceeded",
    ]


def test_the_tree_lists_the_hooks_objects_with_phase_and_state() -> None:
    assert render_text(build_view(hooked_app()), tree=True).splitlines()[4:] == [
        "",
        "(hooks)",
        "├── Job migrate                           PreApply   Succeeded",
        "└── Job tests/smoke                       PostReady  Failed",
    ]


def test_json_carries_the_hooks_as_the_status_has_them() -> None:
    assert to_json(build_view(hooked_app()))["hooks"] == HOOKS
    assert "hooks" not in to_json(build_view(hooked_app(None)))


def test_odd_hook_entries_read_leniently() -> None:
    view = build_view(hooked_app(["no", {"phase": "PreDelete", "kind": "Job", "name": "backup", "state": 3}]))
    assert render_text(view).splitlines()[2:] == ["Hook: PreDelete Job backup: unknown"]
