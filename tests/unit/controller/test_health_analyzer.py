"""The analyzer of a pass with health rules (docs/health.md#sources): layers, the library's
deference to status hints, failures recorded for the pass, and a profile's refusal."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile import health
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.model import read_definition
from oam_operator.oam.health.rules import HealthRule, read_rules
from oam_operator.reconciler.status import DefaultStatusAnalyzer, StatusAnalysisError

DOMAIN = "oam-operator.dev"


def certificate(ready: str | None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                            "metadata": {"name": "web", "namespace": "shop", "generation": 1,
                                         "annotations": annotations or {}}}
    if ready is not None:
        body["status"] = {"conditions": [{"type": "Ready", "status": ready, "reason": "DoesNotExist",
                                          "message": "no issuer", "observedGeneration": 1}]}
    return body


def analyzer(*layers: list[HealthRule]) -> health.ExpressionAnalyzer:
    return health.ExpressionAnalyzer(DefaultStatusAnalyzer(DOMAIN), health.pass_rules(*layers))


def test_the_librarys_failed_verdict_is_recorded_for_the_pass_and_cleared_when_it_recovers() -> None:
    judge = analyzer([], [], [])
    result = judge.compute(certificate("False"))
    assert result.status == "Failed"
    assert judge.failure("cert-manager.io", "Certificate", "shop", "web") == result.message
    assert result.message.endswith('; condition Ready=False (DoesNotExist): "no issuer"')
    assert judge.compute(certificate("True")).status == "Current"
    assert judge.failure("cert-manager.io", "Certificate", "shop", "web") is None


def test_the_library_yields_to_a_status_hint_and_keeps_kstatus_words_while_both_wait() -> None:
    hinted = certificate("False", {f"{DOMAIN}/status-hint": "has-ready-condition"})
    assert analyzer([], [], []).compute(hinted).status == "InProgress"
    flux = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "web", "generation": 1}}
    assert analyzer([], [], []).compute(flux).message == (
        "HelmRelease not reconciled yet: no Ready condition (is Flux's helm-controller running?)")


def test_an_explicit_rule_beats_the_library_and_the_status_hint() -> None:
    own = read_rules([{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "current": "true"}], "x",
                     'policy "h"')
    hinted = certificate("False", {f"{DOMAIN}/status-hint": "has-ready-condition"})
    assert analyzer(own, [], []).compute(hinted).message == 'health expression current (policy "h") is true: true'


def test_an_object_under_deletion_and_an_unjudged_kind_get_kstatus() -> None:
    deleting = certificate("False")
    deleting["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z"
    assert analyzer([], [], []).compute(deleting).status == "Terminating"
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert analyzer([], [], []).compute(config).status == "Current"


def test_an_evaluation_error_is_a_status_analysis_error() -> None:
    own = read_rules([{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "current": "'text'"}], "x", "p")
    with pytest.raises(StatusAnalysisError) as raised:
        analyzer(own, [], []).compute(certificate(None))
    assert str(raised.value) == "health expression current (p) of Certificate: returned string, not a boolean"


def test_a_profiles_rules_and_its_refusal_name_it() -> None:
    rules = health.profile_rules("prod", {"spec": {"health": [
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "current": "true"}]}})
    assert [r.source for r in rules] == ['ClusterProfile "prod"']
    with pytest.raises(health.ProfileHealthError) as raised:
        health.profile_rules("prod", {"spec": {"health": [{"apiVersion": "a.b/v1", "kind": "K", "current": "1 +"}]}})
    assert str(raised.value) == 'ClusterProfile "prod": spec.health[0].current: 1:4: Syntax error: mismatched input ' \
        "'<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, " \
        "STRING, BYTES, IDENTIFIER}"
    assert health.profile_rules("prod", None) == []


def test_the_definitions_an_application_uses_bring_their_rules() -> None:
    catalog = DefinitionCatalog()
    catalog.put(read_definition({
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "ComponentDefinition", "metadata": {"name": "widget.v1"},
        "spec": {"type": "widget", "version": "v1",
                 "objects": [{"apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": "w"}}],
                 "health": [{"apiVersion": "example.dev/v1", "kind": "Widget", "current": "status.ready"}]}}))
    spec = {"components": [{"name": "w", "type": "widget"}]}
    assert [(r.kind, r.source) for r in health.definition_rules(catalog, spec)] == [
        ("Widget", 'ComponentDefinition "widget.v1"')]
    assert health.definition_rules(catalog, {"components": [{"name": "c", "type": "webservice"}]}) == []
    assert health.definition_rules(None, spec) == []
