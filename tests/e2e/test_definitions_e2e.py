"""Platform teams' definitions on the real control plane (docs/definitions.md): hot-loaded,
versioned, changed, deleted, confined by tenancy, and refused at admission.

ComponentDefinitions and TraitDefinitions are cluster-scoped, so each test names its types
after its namespace and deletes its definitions at the end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import GROUP, VERSION, Kube, condition, configmap_component
from kubernetes import client
from kubernetes.client.rest import ApiException
from test_admission_e2e import Chart, _ca_bundle, _kubectl
from test_diff_e2e import diff

from tools.devcluster.pytest_plugin import default_wait, wait_until
from tools.operatorprocess import free_port

DEFINITIONS_WEBHOOK = "validate.definitions.oam-operator.dev"


class Definitions:
    """Creates the test's definitions and deletes them afterwards."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.created: list[tuple[str, str]] = []

    def create(self, body: dict[str, Any]) -> None:
        plural = f"{body['kind'].lower()}s"
        self.kube.custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
        self.created.append((plural, body["metadata"]["name"]))

    def replace(self, body: dict[str, Any]) -> None:
        plural = f"{body['kind'].lower()}s"
        current = self.kube.custom.get_cluster_custom_object(GROUP, VERSION, plural, body["metadata"]["name"])
        body = {**body, "metadata": {**body["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        self.kube.custom.replace_cluster_custom_object(GROUP, VERSION, plural, body["metadata"]["name"], body)

    def delete(self, kind: str, name: str) -> None:
        self.kube.custom.delete_cluster_custom_object(GROUP, VERSION, f"{kind.lower()}s", name)

    def ready(self, kind: str, name: str) -> dict[str, Any] | None:
        body = self.kube.custom.get_cluster_custom_object(GROUP, VERSION, f"{kind.lower()}s", name)
        return condition(body, "Ready")

    def cleanup(self) -> None:
        for plural, name in self.created:
            try:
                self.kube.custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
            except ApiException as error:
                if error.status != 404:
                    raise


@pytest.fixture
def definitions(kube: Kube) -> Iterator[Definitions]:
    made = Definitions(kube)
    yield made
    made.cleanup()


def settings_definition(type_name: str, version: str, greeting: str) -> dict[str, Any]:
    """A ComponentDefinition rendering one ConfigMap whose ``greeting`` says which version made it."""
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ComponentDefinition",
        "metadata": {"name": f"{type_name}.{version}"},
        "spec": {
            "type": type_name, "version": version,
            "parameters": {"team": {"type": "string", "required": True, "description": "Who owns it."}},
            "objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "${context.componentName}"},
                         "data": {"greeting": f"{greeting} ${{parameters.team.upperAscii()}}"}}],
            "tests": [{"name": "team", "parameters": {"team": "a"},
                       "expect": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "test"},
                                   "data": {"greeting": f"{greeting} A"}}]}],
        },
    }


def greeting(kube: Kube, name: str) -> str | None:
    try:
        data = kube.core.read_namespaced_config_map(name, kube.namespace).data or {}
    except ApiException as error:
        if error.status == 404:
            return None
        raise
    return data.get("greeting")


def test_a_definition_is_hot_loaded_versioned_changed_and_deleted(start_operator: Any, kube: Kube,
                                                                   definitions: Definitions) -> None:
    start_operator(kube.namespace)
    kind = f"settings-{kube.namespace[-6:]}"
    # An Application naming a type nobody defined yet: Error, naming it.
    kube.apply_app("latest", {"components": [{"name": "latest", "type": kind, "properties": {"team": "web"}}]})
    app = kube.wait_state("latest", "Error", "TransformFailed")
    assert condition(app, "Ready")["message"] == f'component "latest": no definition for component type "{kind}"'

    # Defined: the operator loads it without a restart and the waiting Application is woken.
    created = time.monotonic()
    definitions.create(settings_definition(kind, "v1", "hello"))
    kube.wait_ready("latest")
    print(f"hot-load: Ready {time.monotonic() - created:.1f} s after the definition was created")
    assert greeting(kube, "latest") == "hello WEB"
    assert definitions.ready("ComponentDefinition", f"{kind}.v1") == {
        "type": "Ready", "status": "True", "reason": "Loaded", "message": f"Loaded as {kind}@v1",
        "lastTransitionTime": definitions.ready("ComponentDefinition", f"{kind}.v1")["lastTransitionTime"]}

    # v2 beside v1: the unpinned Application moves to v2, the pinned one stays on v1.
    kube.apply_app("pinned", {"components": [{"name": "pinned", "type": f"{kind}@v1",
                                              "properties": {"team": "ops"}}]})
    kube.wait_ready("pinned")
    revision = kube.app("pinned")["status"]["revision"]
    definitions.create(settings_definition(kind, "v2", "bonjour"))
    wait_until(lambda: greeting(kube, "latest") == "bonjour WEB", default_wait(kube.cluster), "latest on v2")
    assert greeting(kube, "pinned") == "hello OPS"
    previewed = diff(kube, "latest")  # diff loads the cluster's definitions as the operator does
    assert (previewed.returncode, previewed.stdout, previewed.stderr) == (0, "no changes\n", "")

    # Changing v1 re-renders the Application pinned to it: a new digest, a new revision.
    definitions.replace(settings_definition(kind, "v1", "hallo"))
    wait_until(lambda: greeting(kube, "pinned") == "hallo OPS", default_wait(kube.cluster), "pinned re-rendered")
    assert wait_until(lambda: kube.ready("pinned"), default_wait(kube.cluster), "pinned Ready")["status"][
        "revision"] == revision + 1
    assert greeting(kube, "latest") == "bonjour WEB"

    # Deleting v1 leaves the Application pinned to it Error, naming it; its ConfigMap stays as it was.
    definitions.delete("ComponentDefinition", f"{kind}.v1")
    app = kube.wait_state("pinned", "Error", "TransformFailed")
    assert condition(app, "Ready")["message"] == f'component "pinned": no definition for component type "{kind}@v1"'
    assert greeting(kube, "pinned") == "hallo OPS"
    assert kube.ready("latest") is not None


def cluster_role_trait(type_name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "TraitDefinition", "metadata": {"name": f"{type_name}.v1"},
        "spec": {"type": type_name, "version": "v1",
                 "objects": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                              "metadata": {"name": "${context.namespace + '-' + context.componentName}"},
                              "rules": []}]},
    }


def test_a_trait_definition_cannot_escape_tenancy(start_operator: Any, kube: Kube,
                                                  definitions: Definitions) -> None:
    start_operator(kube.namespace)
    trait = f"wide-{kube.namespace[-6:]}"
    definitions.create(cluster_role_trait(trait))
    wait_until(lambda: definitions.ready("TraitDefinition", f"{trait}.v1"), default_wait(kube.cluster),
               "the trait to be loaded")
    component = configmap_component("cfg")
    component["traits"] = [{"type": trait}]
    kube.apply_app("escape", {"components": [component]})
    app = kube.wait_state("escape", "Error", "InvalidObjects")
    role = f"{kube.namespace}-cfg"
    assert condition(app, "Ready")["message"] == (
        f"Object rbac.authorization.k8s.io/v1, Kind=ClusterRole {role} is cluster-scoped; "
        "cluster-scoped objects are not allowed")
    assert role not in {r.metadata.name for r in client.RbacAuthorizationV1Api(kube.api).list_cluster_role().items}
    assert kube.owned() == []


@pytest.fixture
def chart(kube: Kube, tmp_path: Path) -> Iterator[Chart]:
    rendered = Chart(kube.namespace, free_port(), tmp_path / "helm")
    yield rendered
    try:
        client.AdmissionregistrationV1Api(kube.api).delete_validating_webhook_configuration(rendered.name)
    except ApiException as error:
        if error.status != 404:
            raise


def _refused(kube: Kube, body: dict[str, Any]) -> str | None:
    """The definitions webhook's denial of a server-side dry-run create, ``None`` while admitted."""
    try:
        kube.custom.create_cluster_custom_object(GROUP, VERSION, f"{body['kind'].lower()}s", body, dry_run="All")
    except ApiException as error:
        if error.status == 422 and DEFINITIONS_WEBHOOK in (error.body or ""):
            return str(json.loads(error.body)["message"])
        if error.status != 500:  # 500: the API server's view of the configuration still lacks the CA
            raise
    return None


def test_a_failing_case_and_a_type_error_are_refused(start_operator: Any, kube: Kube, definitions: Definitions,
                                                     chart: Chart, tmp_path: Path) -> None:
    start_operator(kube.namespace, "--admission-address=127.0.0.1", *chart.flags)
    kind = f"case-{kube.namespace[-6:]}"
    failing = settings_definition(kind, "v1", "hello")
    failing["spec"]["tests"][0]["expect"][0]["data"]["greeting"] = "hello a"
    case_message = 'spec.tests[0] "team": expect[0].data.greeting: expected "hello a", got "hello A"'
    # Stored while no webhook is configured: the operator refuses to load it, in its status.
    definitions.create(failing)
    refused = wait_until(lambda: definitions.ready("ComponentDefinition", f"{kind}.v1"), default_wait(kube.cluster),
                         "the definition's Ready condition")
    assert (refused["status"], refused["reason"], refused["message"]) == ("False", "Refused", case_message)

    api = client.AdmissionregistrationV1Api(kube.api)
    api.create_validating_webhook_configuration(chart.configuration)
    secret = wait_until(lambda: kube.core.read_namespaced_secret(chart.secret, kube.namespace),
                        default_wait(kube.cluster), "the webhook's Secret")
    wait_until(lambda: _ca_bundle(kube, chart.name) == secret.data["ca.crt"], default_wait(kube.cluster),
               "the operator to put its CA into the webhook configuration")
    other = settings_definition(f"{kind}x", "v1", "hello")
    other["spec"]["tests"][0]["expect"][0]["data"]["greeting"] = "hello a"
    message = wait_until(lambda: _refused(kube, other), default_wait(kube.cluster), "the API server to call it")
    assert message == f'admission webhook "{DEFINITIONS_WEBHOOK}" denied the request: {case_message}'

    typed = settings_definition(f"{kind}y", "v1", "hello")
    typed["spec"]["objects"][0]["data"]["greeting"] = "${parameters.team + 1}"
    (tmp_path / "typed.yaml").write_text(yaml.safe_dump(typed))
    created = _kubectl(kube, "apply", "-f", "typed.yaml", cwd=tmp_path)
    assert (created.returncode, created.stdout) == (1, "")
    assert created.stderr == (
        f'Error from server: error when creating "typed.yaml": admission webhook "{DEFINITIONS_WEBHOOK}" denied the '
        "request: spec.objects[0].data.greeting: 1:17: found no matching overload for '_+_' applied to "
        "'(string, int)'\n")
    # A health rule that does not compile is refused with its field path and position (docs/health.md).
    unhealthy = settings_definition(f"{kind}h", "v1", "hello")
    unhealthy["spec"]["health"] = [{"apiVersion": "v1", "kind": "ConfigMap", "current": "true",
                                    "failed": "metadata.name = 'x'"}]
    (tmp_path / "unhealthy.yaml").write_text(yaml.safe_dump(unhealthy))
    created = _kubectl(kube, "apply", "-f", "unhealthy.yaml", cwd=tmp_path)
    assert (created.returncode, created.stdout) == (1, "")
    assert created.stderr == (
        f'Error from server: error when creating "unhealthy.yaml": admission webhook "{DEFINITIONS_WEBHOOK}" denied '
        "the request: spec.health[0].failed: 1:15: Syntax error: token recognition error at: '= '\n")
    # A valid definition is admitted; an Application naming a type not defined (yet) is admitted
    # and left to the status, as a missing ClusterProfile.
    valid = settings_definition(f"{kind}z", "v1", "hello")
    (tmp_path / "valid.yaml").write_text(yaml.safe_dump(valid))
    definitions.created.append(("componentdefinitions", f"{kind}z.v1"))
    applied = _kubectl(kube, "apply", "-f", "valid.yaml", cwd=tmp_path)
    assert (applied.returncode, applied.stderr) == (0, ""), applied.stderr
    kube.apply_app("early", {"components": [{"name": "early", "type": f"{kind}w", "properties": {"team": "x"}}]})
    app = kube.wait_state("early", "Error", "TransformFailed")
    assert condition(app, "Ready")["message"] == f'component "early": no definition for component type "{kind}w"'
