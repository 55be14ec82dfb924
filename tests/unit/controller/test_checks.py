"""The one list of checks (controller/reconcile/checks.py, docs/operator.md#the-checks) and the one
composition root (controller/reconcile/composition.py): the apply pass, admission and ``diff`` meet the
same refusal with the same words, and differ only where the list says so."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.api.conditions import Reason
from oam_operator.controller.reconcile.checks import CHECKS, ORDER, Handling, Step, Subject, first_refusal
from oam_operator.controller.reconcile.composition import OperatorTransform, is_placeholder
from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.reconcile.tenancy import IdentityRule
from tests.unit.unitkit import pass_environment

SETTINGS = Settings.from_sources({}, {})
TRANSFORM = OperatorTransform.from_settings(SETTINGS)
CONFIG = {"name": "cm", "type": "passthrough",
          "properties": {"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}}}
HELM = {"name": "web", "type": "helm",
        "properties": {"source": {"url": "https://charts.example.com"}, "chart": "web", "version": "1.0.0"}}
OPERATOR_POLICIES = [
    {"name": "after-db", "type": "app-dependency", "properties": {"applications": [{"name": "db"}]}},
    {"name": "sync", "type": "reconciliation", "properties": {"interval": "5m"}},
    {"name": "health", "type": "health-checks",
     "properties": {"checks": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm"}]}},
]


def app(*components: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "generation": 1},
            "spec": {"components": list(components), **spec}, "status": {"observedGeneration": 1}}


def subject(body: dict[str, Any], *, transform: OperatorTransform = TRANSFORM, served: bool | None = None,
            profiles: dict[str, Any] | None = None, rule: IdentityRule | None = None) -> Subject:
    known = profiles or {}
    return Subject(body, SETTINGS, transform, known.get, rule or IdentityRule(), "c",
                   served=None if served is None else (lambda api_version, kind: served))


def preview(check: Any) -> Handling:
    return check.preview  # type: ignore[no-any-return]


def admission(check: Any) -> Handling:
    return check.admission  # type: ignore[no-any-return]


def test_the_checks_in_the_order_every_user_runs_them() -> None:
    assert [(c.name, c.needs_cluster, c.admission.value, c.preview.value) for c in CHECKS] == [
        ("suspended", False, "admit", "skip"),
        ("depth", False, "refuse", "refuse"),
        ("profile", True, "admit", "refuse"),
        ("tenancy", False, "refuse", "refuse"),
        ("transform", False, "refuse", "refuse"),
        ("overrides", False, "refuse", "refuse"),
        ("self-reference", False, "refuse", "refuse"),
        ("hooks", False, "refuse", "refuse"),
        ("flux-apis", True, "skip", "refuse"),
        ("size", False, "refuse", "refuse"),
    ]


def test_the_pass_reads_one_table_of_the_checks_and_its_own_steps() -> None:
    """The pass's steps are rows of the checks' table; only the operator runs them."""
    assert [(row.name, isinstance(row, Step), row.admission.value, row.preview.value) for row in ORDER] == [
        ("suspended", False, "admit", "skip"),
        ("rollback", True, "skip", "skip"),
        ("depth", False, "refuse", "refuse"),
        ("profile", False, "admit", "refuse"),
        ("restart-on-change", True, "skip", "skip"),
        ("deliver", True, "skip", "skip"),
        ("tenancy", False, "refuse", "refuse"),
        ("reconciler", True, "skip", "skip"),
        ("transform", False, "refuse", "refuse"),
        ("overrides", False, "refuse", "refuse"),
        ("gate", True, "skip", "skip"),
        ("self-reference", False, "refuse", "refuse"),
        ("hooks", False, "refuse", "refuse"),
        ("flux-apis", False, "skip", "refuse"),
        ("inventory", True, "skip", "skip"),
        ("change-window", True, "skip", "skip"),
        ("fleet", True, "skip", "skip"),
        ("size", False, "refuse", "refuse"),
    ]
    assert tuple(row for row in ORDER if not isinstance(row, Step)) == CHECKS


def test_the_operator_policies_are_part_of_the_one_transform() -> None:
    """The divergence this fixed: diff built its own pipeline and refused every ``app-dependency``
    with ``no handler for policy type "app-dependency"``."""
    body = app(CONFIG, policies=OPERATOR_POLICIES)
    checked = subject(body)
    assert first_refusal(checked, preview) is None
    assert [dep.name for dep in checked.policies.depends_on] == ["db"]
    assert checked.policies.reconciliation is not None and checked.policies.reconciliation.interval == "5m"
    assert [check.name for check in checked.policies.health_checks] == ["cm"]
    assert first_refusal(subject(body, transform=TRANSFORM.without_network()), admission) is None


@pytest.mark.parametrize(("body", "check", "reason", "message"), [
    (app({"name": "web", "type": "webservise", "properties": {"image": "nginx:1"}}), "transform",
     Reason.TRANSFORM_FAILED, 'component "web": unknown type "webservise" (valid: crd, cronjob, daemonset, helm, '
     'helmchart, manifests, oci, passthrough, postgresql, statefulset, webservice, worker); did you mean "webservice"?'),
    (app(CONFIG, profile="strict"), "profile", Reason.PROFILE_NOT_FOUND, "ClusterProfile strict not found"),
])
def test_a_refusal_is_the_same_for_the_pass_and_diff(body: dict[str, Any], check: str, reason: Reason,
                                                     message: str) -> None:
    refused = first_refusal(subject(body), preview)
    assert refused is not None and (refused.check, refused.reason, refused.message) == (check, reason, message)
    status = apply_pass(body, Memory(), pass_environment()).status
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["reason"], ready["message"]) == (reason.value, message)


def test_a_missing_profile_is_admitted_and_refused_by_diff() -> None:
    body = app(CONFIG, profile="strict")
    assert first_refusal(subject(body), admission) is None
    refused = first_refusal(subject(body), preview)
    assert refused is not None and refused.message == "ClusterProfile strict not found"


def test_a_suspended_application_is_admitted_and_previewed() -> None:
    body = app({"name": "web", "type": "webservise"}, suspend=True)
    assert first_refusal(subject(body), admission) is None
    refused = first_refusal(subject(body), preview)  # diff goes on to the transform
    assert refused is not None and refused.check == "transform"


def test_flux_apis_are_refused_by_diff_and_not_asked_by_admission() -> None:
    body = app(HELM)
    assert first_refusal(subject(body, transform=TRANSFORM.without_network(), served=False), admission) is None
    refused = first_refusal(subject(body, served=False), preview)
    assert refused is not None and (refused.check, refused.reason) == ("flux-apis", Reason.MISSING_API)
    assert refused.message == (
        'component "web": HelmRepository web needs Flux\'s source-controller (source.toolkit.fluxcd.io); install Flux '
        'or use delivery: template; component "web": HelmRelease web needs Flux\'s helm-controller '
        "(helm.toolkit.fluxcd.io); install Flux or use delivery: template")
    assert first_refusal(subject(body, served=True), preview) is None


def test_the_service_account_rule_is_one_rule() -> None:
    body = app(CONFIG)
    refused = first_refusal(subject(body, rule=IdentityRule(require_service_account=True)), preview)
    assert refused is not None and (refused.check, refused.message) == (
        "tenancy", "spec.serviceAccountName is required (the operator runs with --require-service-account)")
    assert first_refusal(subject(app(CONFIG, serviceAccountName="deployer"),
                                 rule=IdentityRule(require_service_account=True)), preview) is None


def test_placeholders_of_a_network_free_transform_are_left_out() -> None:
    remote = {"name": "remote", "type": "manifests", "properties": {"url": "https://127.0.0.1:1/objects.yaml"}}
    checked = subject(app(CONFIG, remote), transform=TRANSFORM.without_network())
    assert first_refusal(checked, admission) is None
    assert checked.encoded is not None
    assert [is_placeholder(obj) for obj in checked.encoded.objects].count(True) == 1
    assert [obj["kind"] for obj in checked.objects()] == ["ConfigMap"]


def test_the_overrides_verdict_is_kept_while_its_input_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A no-op pass of a fleet Application transforms once, as any Application's does: the
    overrides check's verdict is kept by the digest of what it depends on (verdicts.py)."""
    env = pass_environment()
    calls: list[str] = []
    transform = env.transform.transform

    def counted(body: Any, **kwargs: Any) -> Any:
        calls.append(str(body["spec"]["components"][0]["properties"]))
        return transform(body, **kwargs)

    monkeypatch.setattr(env.transform, "transform", counted)

    def fleet(patch: dict[str, Any]) -> dict[str, Any]:
        web = {"name": "web", "type": "webservice", "properties": {"image": "nginx:1.27"}}
        override = {"name": "eu-only", "type": "override", "properties": {"clusters": ["eu"], "components": [
            {"name": "web", "properties": patch}]}}
        return app(web, policies=[{"name": "where", "type": "topology", "properties": {"clusters": ["eu"]}},
                                  override])

    def check(body: dict[str, Any]) -> Any:
        return first_refusal(subject(body, transform=env.transform), preview)

    body = fleet({"replicas": 2})
    assert check(body) is None
    assert calls == ["{'image': 'nginx:1.27'}", "{'image': 'nginx:1.27', 'replicas': 2}"]  # its own, the override's
    calls.clear()
    assert check(body) is None
    assert calls == ["{'image': 'nginx:1.27'}"]  # the same input: the kept verdict
    refused = fleet({"replica": 2})
    said = check(refused)
    assert said is not None and (said.check, said.reason) == ("overrides", Reason.TRANSFORM_FAILED)
    assert said.message.startswith('policy "eu-only": component "web" (type "webservice"): properties: '
                                   'unsupported field "replica"')
    calls.clear()
    assert check(refused) == said and len(calls) == 1  # a refusal is kept too
    env.transform.forget("shop", "web")  # deleted: nothing kept
    calls.clear()
    assert check(refused) == said and len(calls) == 2
    assert TRANSFORM.without_network().override_verdicts is None  # admission keeps none


def test_a_profiles_bad_change_windows_refuse_its_applications_at_admission_and_in_diff() -> None:
    """As a profile the transform cannot read (docs/operator.md#change-windows): the refusal names
    the profile and the field, word for word; a good profile's windows and the policy's are both kept."""
    bad = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": "prod"},
           "spec": {"changeWindows": {"windows": [{"kind": "deny", "schedule": "* * * *", "duration": "1h"}]}}}
    body = app(CONFIG, profile="prod")
    for handling in (admission, preview):
        refusal = first_refusal(subject(body, profiles={"prod": bad}, transform=TRANSFORM.without_network()),
                                handling)
        assert refusal is not None
        assert (refusal.check, refusal.reason.value, refusal.message) == (
            "transform", "TransformFailed",
            'ClusterProfile "prod": spec.changeWindows.windows[0].schedule "* * * *" is not a cron schedule: it has '
            "4 fields, not 5 (minute hour day-of-month month day-of-week)")
    good = {**bad, "spec": {"changeWindows": {"windows": [{"kind": "deny", "schedule": "0 0 * * *", "duration": "1h"}],
                                              "driftWhileClosed": "Report"}}}
    freeze = {"name": "freeze", "type": "change-window",
              "properties": {"windows": [{"kind": "allow", "schedule": "0 9 * * 1-5", "duration": "8h"}]}}
    checked = subject(app(CONFIG, profile="prod", policies=[freeze]), profiles={"prod": good})
    assert first_refusal(checked, preview) is None
    assert checked.windows is not None
    assert [owner.owner for owner in checked.windows.owners] == ['ClusterProfile "prod"', 'policy "freeze"']
    assert not checked.windows.corrects_drift_while_closed
