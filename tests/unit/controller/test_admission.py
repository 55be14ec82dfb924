"""The admission decision (controller/service/admission.py): the operator's refusal, word for word, or admission.

Parity is shown against the apply branch itself: the same body goes through ``apply_pass``
(with a client at a closed local port, so a pass that got as far as applying would end in a
connection error instead) and the Ready message it writes must be the webhook's refusal.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.composition import OperatorTransform
from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Environment, Memory
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.controller.service.admission import Validator, refusal
from oam_operator.reconciler.client import ClusterClient

PROFILE = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": "strict"},
           "spec": {"capabilities": {}}}


def _parts(profiles: dict[str, Any] | None = None, **settings: Any) -> tuple[Validator, Environment]:
    resolved = Settings.from_sources({"use_operator_identity": True, **settings}, {})
    transform = OperatorTransform.from_settings(resolved)
    config = Configuration()
    config.host = "http://127.0.0.1:9"
    clients = TenantClients(ClusterClient(ApiClient(configuration=config)),
                            default_service_account=resolved.default_service_account,
                            require_service_account=resolved.require_service_account,
                            use_operator_identity=resolved.use_operator_identity)
    known = profiles or {}
    validator = Validator(resolved, transform.without_network(), known.get, clients, lambda: "c")
    env = Environment(settings=resolved, transform=transform, clients=clients, cluster_id="c", profiles=known.get)
    return validator, env


def app(*components: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "shop", "namespace": "team", "uid": "u1", "generation": 1},
            "spec": {"components": list(components), **spec}, "status": {"observedGeneration": 1}}


def config_map(name: str, component: str = "cm") -> dict[str, Any]:
    return {"name": component, "type": "passthrough",
            "properties": {"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}}}


WEB = {"name": "web", "type": "webservice", "properties": {"image": "nginx"}}
URL = {"name": "remote", "type": "manifests", "properties": {"url": "https://127.0.0.1:1/objects.yaml"}}
TYPO = {"name": "web", "type": "webservise", "properties": {"image": "nginx:1.27"}}


def status_message(env: Environment, body: dict[str, Any]) -> tuple[str, str]:
    status = apply_pass(body, Memory(), env).status
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    return ready["reason"], ready["message"]


@pytest.mark.parametrize(("components", "expected"), [
    ([TYPO], 'component "web": unknown type "webservise" (valid: crd, cronjob, daemonset, helm, helmchart, '
             'manifests, oci, passthrough, postgresql, statefulset, webservice, worker); did you mean "webservice"?'),
    ([WEB], 'component "web": image "nginx" rejected: no tag or digest specified; use an explicit version tag or '
            "digest"),
])
def test_a_refusal_is_the_status_message_word_for_word(components: list[dict[str, Any]], expected: str) -> None:
    validator, env = _parts()
    body = app(*components)
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("TransformFailed", expected)


def test_a_bad_topology_is_refused_as_in_status_and_a_good_one_admitted() -> None:
    """docs/multicluster.md#topology: a profile that does not exist is no refusal; its words are the transform's."""
    validator, env = _parts()
    where = {"name": "fleet", "type": "topology", "properties": {"clusterSelector": {"matchLabels": {"env": "prod"}}}}
    body = app(config_map("settings"), profile="somewhere", policies=[where])
    expected = 'policy "fleet": a topology policy chooses the clusters, and spec.profile is set too; set one of them'
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("TransformFailed", expected)
    doubled = app(config_map("settings"), policies=[where, {**where, "name": "again"}])
    assert refusal(validator, "CREATE", doubled) == (
        'policy "again": only one topology policy is allowed; policy "fleet" already sets it')
    assert refusal(validator, "CREATE", app(config_map("settings"), policies=[where])) is None


@pytest.mark.parametrize(("properties", "expected"), [
    ({"windows": [{"kind": "deny", "schedule": "0 25 * * *", "duration": "2h"}]},
     'policy "freeze": windows[0].schedule "0 25 * * *" is not a cron schedule: its hour field "25" is not 0-23 (or *, '
     "a list, a range or a step of them)"),
    ({"windows": [{"kind": "deny", "schedule": "0 22 * * 5", "duration": "2h", "timeZone": "Europe/Paris_"}]},
     'policy "freeze": windows[0].timeZone "Europe/Paris_" is not a time zone: an IANA name such as UTC, '
     'Europe/Berlin or America/New_York; did you mean "Europe/Paris"?'),
    ({"windows": [{"kind": "later", "schedule": "0 22 * * 5", "duration": "2h"}]},
     'policy "freeze" (type "change-window"): properties.windows[0].kind: unknown kind "later" (valid: allow, deny)'),
    ({"windows": [{"kind": "deny", "schedule": "0 22 * * 5", "duration": "0s"}]},
     'policy "freeze": windows[0].duration must be longer than 0s, not "0s"'),
])
def test_a_bad_change_window_is_refused_as_in_status(properties: dict[str, Any], expected: str) -> None:
    """docs/operator.md#change-windows: refused before anything is applied, in the words status shows."""
    validator, env = _parts()
    body = app(config_map("settings"), policies=[{"name": "freeze", "type": "change-window",
                                                  "properties": properties}])
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("TransformFailed", expected)
    good = {"windows": [{"kind": "deny", "schedule": "0 22 * * 5", "duration": "2h", "timeZone": "Europe/Berlin"}]}
    assert refusal(validator, "CREATE", app(config_map("settings"), policies=[
        {"name": "freeze", "type": "change-window", "properties": good}])) is None


def test_a_generated_object_the_api_server_would_refuse_is_refused_as_in_status() -> None:
    validator, env = _parts()
    body = app(config_map("Bad_Name"))
    message = refusal(validator, "CREATE", body)
    assert message is not None and "Bad_Name" in message
    assert status_message(env, body)[1] == message


def test_a_valid_application_is_admitted() -> None:
    validator, _ = _parts()
    assert refusal(validator, "CREATE", app(config_map("settings"))) is None


def test_remote_content_is_not_read_and_the_refusal_is_left_to_status() -> None:
    validator, env = _parts()
    body = app(URL)
    assert refusal(validator, "CREATE", body) is None
    reason, message = status_message(env, body)  # the operator reads it, and its address policy refuses
    assert reason == "TransformFailed"
    assert message.startswith('manifests component "remote": manifest source: ')
    assert "127.0.0.1" in message


CRD_URL = {"name": "crds", "type": "crd", "properties": {"url": "https://127.0.0.1:1/crds.yaml"}}
CHART = {"name": "chart", "type": "helm",
         "properties": {"delivery": "template", "source": {"url": "https://127.0.0.1:1/charts"}, "chart": "app",
                        "version": "1.0.0"}}


@pytest.mark.parametrize("remote", [URL, CRD_URL, CHART], ids=["manifests-url", "crd-url", "chart-template"])
def test_every_kind_of_remote_content_is_admitted_unread(remote: dict[str, Any]) -> None:
    validator, env = _parts()
    body = app(remote, config_map("settings"))
    assert refusal(validator, "CREATE", body) is None
    reason, message = status_message(env, body)  # the operator does read it: its address policy refuses
    assert reason == "TransformFailed" and "127.0.0.1" in message


def test_two_remote_sources_do_not_collide() -> None:
    validator, _ = _parts()
    second = {**URL, "name": "remote2"}
    assert refusal(validator, "CREATE", app(URL, second, CRD_URL)) is None


def test_the_document_around_remote_content_is_still_validated() -> None:
    validator, env = _parts()
    assert refusal(validator, "CREATE", app(URL, TYPO)) == refusal(validator, "CREATE", app(TYPO))
    assert refusal(validator, "CREATE", app(URL, WEB)) == refusal(validator, "CREATE", app(WEB))
    # objects of components generated after the remote one are still checked
    expected = status_message(env, app(config_map("Bad_Name")))[1]
    assert refusal(validator, "CREATE", app(URL, config_map("Bad_Name"))) == expected
    assert refusal(validator, "CREATE", app(CHART, config_map("Bad_Name"))) == expected


def test_an_update_with_the_same_spec_or_of_an_object_being_deleted_is_admitted() -> None:
    validator, _ = _parts()
    stored = app(TYPO)
    relabelled = copy.deepcopy(stored)
    relabelled["metadata"]["labels"] = {"team": "a"}
    relabelled["metadata"]["finalizers"] = []
    assert refusal(validator, "UPDATE", relabelled, stored) is None
    deleting = copy.deepcopy(stored)
    deleting["metadata"]["deletionTimestamp"] = "2026-12-01T12:00:00Z"
    assert refusal(validator, "UPDATE", deleting, app(config_map("x"))) is None
    changed = app(TYPO, config_map("x"))
    assert refusal(validator, "UPDATE", changed, stored) == refusal(validator, "CREATE", stored)


def test_delete_and_the_status_subresource_are_never_refused() -> None:
    validator, _ = _parts()
    assert refusal(validator, "DELETE", app(TYPO)) is None
    assert refusal(validator, "UPDATE", app(TYPO), app(config_map("x")), subresource="status") is None


def test_a_suspended_application_is_admitted_as_the_operator_does_not_transform_it() -> None:
    validator, env = _parts()
    body = app(TYPO, suspend=True)
    assert refusal(validator, "CREATE", body) is None
    assert status_message(env, body) == ("Suspended", "Reconciliation is suspended")


def test_a_missing_profile_is_left_to_status_a_present_one_is_used() -> None:
    validator, env = _parts()
    missing = app(config_map("x"), profile="strict")
    assert refusal(validator, "CREATE", missing) is None
    assert status_message(env, missing) == ("ProfileNotFound", "ClusterProfile strict not found")
    broken = copy.deepcopy(PROFILE)
    broken["spec"] = {"capabilities": {"db": {"component": "nosuchtype"}}}
    validator, env = _parts({"strict": broken})
    reason, expected = status_message(env, missing)
    assert reason == "TransformFailed" and expected.startswith('ClusterProfile "strict": ')
    assert refusal(validator, "CREATE", missing) == expected


def test_the_service_account_rule_refuses_with_its_message() -> None:
    validator, env = _parts(require_service_account=True)
    body = app(config_map("x"))
    expected = "spec.serviceAccountName is required (the operator runs with --require-service-account)"
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("NotPermitted", expected)
    body["spec"]["serviceAccountName"] = "deployer"
    assert refusal(validator, "CREATE", body) is None


def test_a_self_reference_is_refused_as_in_status() -> None:
    validator, env = _parts()
    itself = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": {"name": "shop"},
              "spec": {"components": []}}
    body = app({"name": "loop", "type": "passthrough", "properties": {"object": itself}})
    reason, expected = status_message(env, body)
    assert reason == "InvalidObjects"
    assert refusal(validator, "CREATE", body) == expected


def test_too_deep_a_spec_is_refused_as_in_status() -> None:
    validator, env = _parts()
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    body = app({"name": "deep", "type": "passthrough", "properties": {"object": deep}})
    reason, expected = status_message(env, body)
    assert reason == "TransformFailed"
    assert refusal(validator, "CREATE", body) == expected


def test_an_application_larger_than_etcd_stores_is_refused_naming_size_and_limit() -> None:
    validator, _ = _parts()
    small = app(config_map("settings"))
    big = copy.deepcopy(small)
    big["spec"]["components"][0]["properties"]["object"]["data"] = {"blob": "x" * 1_600_000}
    size = len(json.dumps({k: v for k, v in big.items() if k != "status"}, separators=(",", ":")).encode())
    assert refusal(validator, "CREATE", big) == (
        f"The Application is {size} bytes as JSON; the API server stores at most 1572864 bytes in one object "
        "(etcd's request limit, 1.5 MiB) and refuses it: split it into several Applications, or read its "
        "manifests from a URL source")
    assert refusal(validator, "CREATE", small) is None


def hook(**annotations: str) -> dict[str, Any]:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "migrate", "annotations": {f"oam-operator.dev/{k}": v for k, v in annotations.items()}}}
    return {"name": "migrate", "type": "passthrough", "properties": {"object": job}}


@pytest.mark.parametrize(("annotations", "expected"), [
    ({"hook": "PostApply"}, 'Hook Job migrate: annotation oam-operator.dev/hook: "PostApply" is not a hook phase '
                            "(allowed: PreApply, PostReady, OnFailure, PreDelete, PostDelete)"),
    ({"hook": "PreApply", "hook-timeout": "soon"},
     'Hook Job migrate: annotation oam-operator.dev/hook-timeout: "soon" is not a duration (a positive Go duration '
     "such as 90s, 5m or 1h)"),
    ({"hook": "PreApply", "hook-delete-policy": "OnFailure"},
     'Hook Job migrate: annotation oam-operator.dev/hook-delete-policy: "OnFailure" is not a delete policy '
     "(allowed: BeforeNextRun, OnSuccess, Never)"),
])
def test_a_bad_hook_is_refused_as_in_status(annotations: dict[str, str], expected: str) -> None:
    """docs/operator.md#lifecycle-hooks: refused before anything is applied, in the words status shows."""
    validator, env = _parts()
    body = app(config_map("settings"), hook(**annotations))
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("InvalidObjects", expected)
    assert refusal(validator, "CREATE", app(config_map("settings"), hook(hook="PreApply"))) is None


def test_a_hook_in_another_namespace_is_refused_without_cross_namespace_objects() -> None:
    validator, env = _parts()
    elsewhere = hook(hook="PreApply")
    elsewhere["properties"]["object"]["metadata"]["namespace"] = "other"
    body = app(config_map("settings"), elsewhere)
    expected = ("Hook Job migrate: namespace other is not the Application's (team); the operator runs without "
                "--allow-cross-namespace-objects")
    assert refusal(validator, "CREATE", body) == expected
    assert status_message(env, body) == ("InvalidObjects", expected)
