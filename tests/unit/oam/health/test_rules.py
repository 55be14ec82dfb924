"""Health rules by expression (docs/health.md#the-format): reading, refusals and evaluation order."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.oam.health.rules import HealthExpressionError, HealthRule, HealthRuleError, HealthRules, read_rules

READY = "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
BROKEN = "status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')"


def rule(**extra: str) -> dict[str, Any]:
    return {"apiVersion": "example.dev/v1", "kind": "Widget", "current": READY, **extra}


def widget(status: dict[str, Any] | None = None, generation: int = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "example.dev/v1beta1", "kind": "Widget",
                            "metadata": {"name": "w", "generation": generation}}
    if status is not None:
        body["status"] = status
    return body


def ready(status: str, reason: str = "", message: str = "") -> dict[str, Any]:
    condition = {"type": "Ready", "status": status}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return {"conditions": [condition]}


def judge(body: dict[str, Any], **extra: str) -> tuple[str, str]:
    verdict = HealthRules(read_rules([rule(**extra)], "spec.health", 'policy "h"')).evaluate(body)
    assert verdict is not None
    return verdict.status, verdict.message


def test_a_missing_field_reads_as_in_progress_naming_the_key() -> None:
    assert judge(widget()) == (
        "InProgress", f'health expression current (policy "h") is not true yet: {READY}; no such key: conditions')


def test_failed_quotes_the_ready_condition() -> None:
    assert judge(widget(ready("False", "Broken", 'disk "a" full')), failed=BROKEN) == (
        "Failed", f'health expression failed (policy "h") is true: {BROKEN}; '
                  'condition Ready=False (Broken): "disk \\"a\\" full"')


def test_in_progress_is_evaluated_first_then_failed_then_current() -> None:
    always = "true"
    assert judge(widget(ready("False")), inProgress=always, failed=always)[0] == "InProgress"
    assert judge(widget(ready("True")), failed=always)[0] == "Failed"
    assert judge(widget(ready("True"))) == ("Current", f'health expression current (policy "h") is true: {READY}')
    assert judge(widget(ready("False")))[0] == "InProgress"


def test_a_generation_not_observed_yet_is_in_progress_before_any_expression() -> None:
    assert judge(widget({**ready("True"), "observedGeneration": 1}, generation=2), failed="true") == (
        "InProgress", "waiting for the controller to observe generation 2 (observed 1)")


def test_a_rule_matches_group_and_kind_not_the_version() -> None:
    rules = HealthRules(read_rules([rule()], "x", "library"))
    assert rules.evaluate(widget(ready("True"))) is not None
    assert rules.evaluate({**widget(), "apiVersion": "other.dev/v1"}) is None


def test_an_earlier_layer_wins() -> None:
    own = HealthRule("example.dev/v1", "Widget", "true", source='policy "h"')
    library = HealthRule("example.dev/v1", "Widget", "false")
    verdict = HealthRules([own], [library]).evaluate(widget())
    assert verdict is not None and verdict.message == 'health expression current (policy "h") is true: true'


def test_a_value_that_is_not_a_boolean_is_an_error() -> None:
    with pytest.raises(HealthExpressionError) as raised:
        judge(widget({"phase": "Running"}), failed="status.phase")
    assert str(raised.value) == 'health expression failed (policy "h") of Widget: returned string, not a boolean'


@pytest.mark.parametrize(("entries", "message"), [
    ({"apiVersion": "example.dev/v1", "kind": "Widget"}, "spec.health[0].current: required, a string"),
    (rule(ready="x"), 'spec.health[0]: unknown field "ready" (allowed: apiVersion, kind, current, inProgress, failed)'),
    (rule(failed="status.x ="), "spec.health[0].failed: 1:10: Syntax error: token recognition error at: '='"),
    ({**rule(), "apiVersion": "Example/V1"}, 'spec.health[0].apiVersion: "Example/V1" is not an API version'),
    ({**rule(), "kind": "widget"}, 'spec.health[0].kind: "widget" is not a kind'),
    (rule(current="status.items.all(a, status.items.all(b, status.items.all(c, true)))"),
     "spec.health[0].current: expression cost 67067067000 exceeds the limit of 1000000"),
])
def test_bad_rules_are_refused_naming_the_field(entries: dict[str, Any], message: str) -> None:
    with pytest.raises(HealthRuleError) as raised:
        read_rules([entries], "spec.health", "x")
    assert str(raised.value) == message


def test_two_rules_for_one_kind_are_refused() -> None:
    with pytest.raises(HealthRuleError) as raised:
        read_rules([rule(), rule()], "spec.health", "x")
    assert str(raised.value) == ('spec.health[1]: a second rule for Widget of group "example.dev" '
                                 "(the first is spec.health[0])")
