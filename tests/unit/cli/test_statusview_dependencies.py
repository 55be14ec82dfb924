"""``oam-operator status`` shows what an Application waits for (status.dependencies, app-dependency)."""

from __future__ import annotations

from typing import Any

from oam_operator.cli.statusview import EXIT_NOT_READY, build_view, exit_code, render_text, to_json, wait_outcome


def waiting_app() -> dict[str, Any]:
    message = "Waiting for Applications to be Ready: db (Processing), infra/cache (Missing)"
    return {
        "metadata": {"name": "web", "namespace": "shop", "generation": 2},
        "status": {
            "observedGeneration": 2,
            "state": "Waiting",
            "conditions": [{"type": "Ready", "status": "Unknown", "reason": "DependenciesNotReady",
                            "message": message}],
            "revision": 1,
            "dependencies": [
                {"namespace": "shop", "name": "db", "state": "Processing", "ready": False},
                {"namespace": "infra", "name": "cache", "state": "Missing", "ready": False},
                {"namespace": "shop", "name": "queue", "state": "Ready", "ready": True},
            ],
        },
    }


def test_header_names_each_dependency_with_its_state() -> None:
    assert render_text(build_view(waiting_app())).splitlines() == [
        "Application shop/web  State: Waiting  Ready: Unknown  Revision: 1  Objects: 0/0 ready",
        "Message: Waiting for Applications to be Ready: db (Processing), infra/cache (Missing)",
        "Depends on: db (Processing), infra/cache (Missing), queue (Ready)",
    ]


def test_tree_lists_the_dependencies_first() -> None:
    lines = render_text(build_view(waiting_app()), tree=True).splitlines()
    assert lines[3:] == [
        "",
        "(depends on)",
        "├── " + "Application db".ljust(38) + "Processing",  # label column (38), docs/operator.md#the-command-line
        "├── " + "Application infra/cache".ljust(38) + "Missing",
        "└── " + "Application queue".ljust(38) + "Ready",
    ]


def test_json_carries_the_dependencies_and_waiting_is_not_ready() -> None:
    view = build_view(waiting_app())
    assert to_json(view)["dependencies"] == waiting_app()["status"]["dependencies"]
    assert "dependencies" not in to_json(build_view({"metadata": {"name": "x"}, "status": {}}))
    assert exit_code(view) == EXIT_NOT_READY
    assert wait_outcome(view) is None


def test_odd_dependency_entries_read_leniently() -> None:
    app = waiting_app()
    app["status"]["dependencies"] = [{"name": "db", "ready": "yes"}, "junk"]
    view = build_view(app)
    assert view.dependencies == ({"namespace": "", "name": "db", "state": "", "ready": False},)
    assert render_text(view).splitlines()[-1] == "Depends on: db ()"
