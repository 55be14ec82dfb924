"""``oam-operator status`` shows what drifted (cli/statusview.py, docs/operator.md#drift)."""

from __future__ import annotations

from typing import Any

from oam_operator.cli.statusview import build_view, render_text, to_json

DRIFT = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web",
     "fields": ["spec.template.spec.containers[name=web].image", "metadata.labels.tier"]},
    {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other", "name": "settings", "deleted": True},
    {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "api", "fields": ["spec.paused"],
     "heldUntil": "2026-12-02T06:00:00Z"},
]


def drifted_app(drift: Any = DRIFT) -> dict[str, Any]:
    return {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "status": {"observedGeneration": 1, "state": "Ready", "revision": 1, "objects": 3, "readyObjects": 3,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                                   "message": "Applied revision 1: 3 objects ready"}],
                   "drift": drift},
    }


def test_the_header_names_each_drifted_object_and_its_fields() -> None:
    assert render_text(build_view(drifted_app())).splitlines() == [
        "Application shop/web  State: Ready  Ready: True  Revision: 1  Objects: 3/3 ready",
        "Message: Applied revision 1: 3 objects ready",
        "Drifted: Deployment web: spec.template.spec.containers[name=web].image, metadata.labels.tier",
        "Drifted: ConfigMap other/settings: deleted",
        "Drifted: Deployment api: spec.paused; held until 2026-12-02T06:00:00Z",
    ]


def test_json_carries_the_drift_as_the_status_has_it() -> None:
    assert to_json(build_view(drifted_app()))["drift"] == DRIFT
    assert "drift" not in to_json(build_view(drifted_app(None)))


def test_odd_drift_entries_read_leniently() -> None:
    lines = render_text(build_view(drifted_app(["no", {"kind": "Deployment", "name": "web", "fields": [1, "x"]}])))
    assert lines.splitlines()[2:] == ["Drifted: Deployment web: x"]
