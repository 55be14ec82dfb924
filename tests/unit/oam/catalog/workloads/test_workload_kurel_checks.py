"""Checks the kurel oracle corpus showed missing (docs/transform.md#shared-workload-properties,
docs/transform.md#raw-objects-passthrough-crd-and-manifests; tests/unit/oam/kurel/test_kurel_oracle.py).

A property written with a null value is present: where kurel's handler checks presence before
type, ours refuses the null with kurel's message rather than treating it as absent.
"""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import handler_error, main_container, objects, with_image


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"envFrom": None}, "envFrom: must be an array, got <nil>"),
        ({"volumes": None}, "volumes: must be an array, got <nil>"),
        ({"workingDir": None}, "workingDir: must be a string, got <nil>"),
        (
            {"securityContext": None},
            "invalid securityContext configuration: securityContext: must be an object, got <nil>",
        ),
        (
            {"securityContext": {"runAsUser": 0, "runAsNonRoot": True}},
            "invalid securityContext configuration: securityContext: runAsUser must not be 0 when runAsNonRoot is true",
        ),
        ({"volumes": [{"name": "v", "mountPath": "/v"}]}, 'volume "v": unrecognized type ""'),
        ({"probes": None}, "invalid probe configuration: probes: must be an object, got <nil>"),
        ({"probes": {"startup": None}}, "invalid probe configuration: probes.startup: must be an object, got <nil>"),
        ({"lifecycle": None}, "invalid lifecycle configuration: lifecycle: must be an object, got <nil>"),
        (
            {"lifecycle": {"preStop": None}},
            "invalid lifecycle configuration: lifecycle.preStop: must be an object, got <nil>",
        ),
        # probes are checked readiness, liveness, startup, as kurel checks them
        (
            {"probes": {"liveness": {"exec": {}, "grpc": {"port": 1}}, "readiness": {"periodSeconds": 1}}},
            "invalid probe configuration: readiness probe: probe must specify exactly one handler, but none was provided",
        ),
    ],
)
@pytest.mark.parametrize("type_name", ["webservice", "worker", "cronjob"])
def test_workload_refusals(type_name: str, props: dict[str, Any], message: str) -> None:
    body = with_image(**props)
    if type_name == "cronjob":
        body["schedule"] = "0 2 * * *"
    assert handler_error(type_name, body) == message


SC = "invalid securityContext configuration: securityContext"


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"runAsUser": None}, f"{SC}.runAsUser: must be an integer, got <nil>"),
        ({"runAsNonRoot": None, "privileged": None}, f"{SC}.runAsNonRoot: must be a boolean, got <nil>"),
        ({"privileged": None}, f"{SC}.privileged: must be a boolean, got <nil>"),
        ({"capabilities": None}, f"{SC}.capabilities: must be an object, got <nil>"),
        ({"capabilities": {"drop": None}}, f"{SC}.capabilities.drop: must be an array, got <nil>"),
        ({"seLinuxOptions": {"level": None}}, f"{SC}.seLinuxOptions.level: must be a string, got <nil>"),
        ({"procMount": None}, f"{SC}.procMount: must be a string, got <nil>"),
        ({"runAsUser": -1}, f"{SC}.runAsUser: must not be negative, got -1"),
        ({"runAsGroup": -5}, f"{SC}.runAsGroup: must not be negative, got -5"),
        (
            {"privileged": True, "allowPrivilegeEscalation": False},
            f"{SC}: allowPrivilegeEscalation must not be false when privileged is true",
        ),
        (
            {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_ADMIN", "CAP_SYS_ADMIN"]}},
            f"{SC}: allowPrivilegeEscalation must not be false when capabilities.add includes CAP_SYS_ADMIN",
        ),
        ({"seccompProfile": {}}, f"{SC}.seccompProfile: type is required when seccompProfile is set"),
        (
            {"seccompProfile": {"type": "Localhost"}},
            f'{SC}.seccompProfile: localhostProfile is required when type is "Localhost"',
        ),
        (
            {"appArmorProfile": {"type": "RuntimeDefault", "localhostProfile": "p"}},
            f'{SC}.appArmorProfile: localhostProfile is only valid when type is Localhost, got type "RuntimeDefault"',
        ),
        # kurel's order: the root check comes before the privilege checks
        (
            {"runAsUser": 0, "runAsNonRoot": True, "privileged": True, "allowPrivilegeEscalation": False},
            f"{SC}: runAsUser must not be 0 when runAsNonRoot is true",
        ),
    ],
)
def test_security_context_rules(context: dict[str, Any], message: str) -> None:
    assert handler_error("worker", with_image(securityContext=context)) == message


def test_root_user_is_accepted_without_run_as_non_root_and_an_empty_working_dir_is_unset() -> None:
    for context in (
        {"runAsUser": 0},
        {"runAsUser": 0, "runAsNonRoot": False},
        {"runAsUser": 1, "runAsNonRoot": True},
        {"privileged": True, "allowPrivilegeEscalation": True},
        {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_ADMIN"]}},
        {"seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/app.json"}},
    ):
        container = main_container(objects("worker", with_image(securityContext=context))[0])
        assert container["securityContext"] == context
    assert "workingDir" not in main_container(objects("worker", with_image(workingDir=""))[0])


def test_passthrough_object_null_is_not_a_map() -> None:
    assert handler_error("passthrough", {"object": None}) == "passthrough component \"c\": 'object' must be a map"
    assert handler_error("passthrough", {}) == "passthrough component \"c\": required property 'object' missing"


def test_manifests_null_inline_is_not_a_string() -> None:
    assert handler_error("manifests", {"inline": None}) == (
        'manifests component "c": manifest source: property "inline" must be a YAML string'
    )
    assert handler_error("manifests", {}) == (
        'manifests component "c": manifest source: exactly one of inline/url is required (got 0)'
    )


def test_manifests_null_scope_overrides_are_not_a_list() -> None:
    assert handler_error("manifests", {"inline": "", "scopeOverrides": None}) == (
        'manifests component "c": scopeOverrides must be a list of {apiVersion, kind, scope} objects'
    )


def test_a_manifests_namespace_is_emitted_as_written() -> None:
    """Issue 37: no ``spec: {}`` is added (docs/transform.md#raw-objects-passthrough-crd-and-manifests),
    the one accepted difference from kurel's typed round trip."""
    inline = (
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\nspec:\n  finalizers: [kubernetes]\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    )
    out = objects("manifests", {"inline": inline})
    assert [o.get("spec") for o in out] == [None, {"finalizers": ["kubernetes"]}, None]
    assert "spec" not in out[0]
    # nor to a passthrough object
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}
    assert "spec" not in objects("passthrough", {"object": namespace, "clusterScoped": True})[0]
