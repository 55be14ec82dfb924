"""Each condition type's polarity (docs/ui.md#conditions-and-drift)."""

from __future__ import annotations

from oam_operator.ui.conditions import condition_tone, drift_condition


def test_ready_is_normal_true_and_reconciling_stalled_drifted_are_abnormal_true() -> None:
    assert [condition_tone("Ready", s) for s in ("True", "False", "Unknown")] == ["ok", "bad", "progress"]
    assert [condition_tone(t, "True") for t in ("Reconciling", "Stalled", "Drifted")] == ["progress", "bad", "warn"]
    assert [condition_tone(t, "False") for t in ("Reconciling", "Stalled", "Drifted")] == ["ok", "ok", "ok"]
    assert condition_tone("Degraded", "True") == "neutral"  # unknown polarity: neither green nor red


def test_the_drift_condition_is_the_drifted_one_when_true() -> None:
    drifted = {"type": "Drifted", "status": "True", "message": "m"}
    assert drift_condition({"status": {"conditions": [{"type": "Ready", "status": "True"}, drifted]}}) == drifted
    assert drift_condition({"status": {"conditions": [{**drifted, "status": "False"}]}}) is None
    assert drift_condition({"status": "odd"}) is None
