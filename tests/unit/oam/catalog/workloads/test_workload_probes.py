"""``probes``, ``lifecycle`` and ``securityContext`` of the main container
(docs/transform.md#shared-workload-properties)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import error, handler_error, main_container, objects, with_image

PROBE = "invalid probe configuration: "
LIFECYCLE = "invalid lifecycle configuration: "
NO_PORTS = (
    'named port "http" is not supported here: this component declares no container ports for the kubelet to '
    "resolve the name against — use a numeric port instead"
)


def container(type_name: str, **props: Any) -> dict[str, Any]:
    body = with_image(**props)
    if type_name == "cronjob":
        body["schedule"] = "0 2 * * *"
    return main_container(objects(type_name, body)[0])


def test_probes_as_written_without_defaults() -> None:
    probes = {
        "readiness": {"httpGet": {"path": "/ready", "port": "http", "httpHeaders": [{"name": "X", "value": "1"}]}},
        "liveness": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10, "periodSeconds": 0, "failureThreshold": 3},
        "startup": {"exec": {"command": ["cat", "/tmp/ok"]}, "terminationGracePeriodSeconds": 0},
    }
    c = container("webservice", port=8080, probes=probes)
    assert c["readinessProbe"] == {
        "httpGet": {"path": "/ready", "port": "http", "httpHeaders": [{"name": "X", "value": "1"}]}
    }
    assert c["livenessProbe"] == {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10, "failureThreshold": 3}
    assert c["startupProbe"] == {"exec": {"command": ["cat", "/tmp/ok"]}, "terminationGracePeriodSeconds": 0}
    grpc = container("worker", probes={"liveness": {"grpc": {"port": 9090, "service": "health"}}})
    assert grpc["livenessProbe"] == {"grpc": {"port": 9090, "service": "health"}}


def test_named_ports_resolve_only_against_the_types_own_port() -> None:
    assert container("webservice", probes={"readiness": {"tcpSocket": {"port": "http"}}})["readinessProbe"] == {
        "tcpSocket": {"port": "http"}
    }
    assert container("daemonset", port=9100, probes={"readiness": {"httpGet": {"port": "http"}}})["readinessProbe"]
    assert container("statefulset", port=5432, probes={"readiness": {"tcpSocket": {"port": "tcp"}}})["readinessProbe"]
    for type_name, props in [
        ("worker", {}),
        ("cronjob", {"schedule": "0 2 * * *"}),
        ("daemonset", {}),
        ("statefulset", {}),
    ]:
        body = with_image(probes={"readiness": {"httpGet": {"port": "http"}}}, **props)
        assert handler_error(type_name, body) == f"{PROBE}readiness probe: httpGet handler: {NO_PORTS}", type_name
    assert handler_error(
        "statefulset", with_image(port=5432, probes={"liveness": {"tcpSocket": {"port": "http"}}})
    ) == (
        f'{PROBE}liveness probe: tcpSocket handler: named port "http" does not match this component\'s declared container '
        'port "tcp": the kubelet resolves a named port only against a name the container itself declares'
    )


@pytest.mark.parametrize(
    ("probes", "message"),
    [
        (
            {"readiness": {"httpGet": {"port": 80}, "exec": {"command": ["x"]}}},
            "readiness probe: probe must specify exactly one handler, but multiple were provided",
        ),
        ({"liveness": {"httpGet": {"port": 80}, "timeout": 1}}, 'liveness probe: probe: unrecognized key "timeout"'),
        (
            {"startup": {"periodSeconds": 5}},
            "startup probe: probe must specify exactly one handler, but none was provided",
        ),
        ({"readiness": {"httpGet": {"port": 0}}}, "readiness probe: httpGet handler: port 0 out of valid range 1-65535"),
        ({"readiness": {"tcpSocket": {"port": 65536}}}, "readiness probe: tcpSocket handler: port 65536 out of valid range 1-65535"),
        ({"readiness": {"httpGet": {"path": "/"}}}, "readiness probe: httpGet: port is required"),
        ({"readiness": {"grpc": {"port": "grpc"}}}, "readiness probe: port: must be an integer, got string"),
    ],
)
def test_probe_messages(probes: Any, message: str) -> None:
    assert handler_error("worker", with_image(probes=probes)) == PROBE + message


def test_probe_schema_is_checked_before_the_handler() -> None:
    assert error("worker", with_image(probes={"ready": {}})) == (
        'component "c" (type "worker"): properties.probes: unsupported field "ready" (allowed: liveness, readiness, startup)'
    )
    # each probe is an open object: an unknown key reaches the handler's own message
    assert error("worker", with_image(probes={"liveness": {"exec": {"command": ["x"]}, "delay": 1}})) == (
        f'component "c": {PROBE}liveness probe: probe: unrecognized key "delay"'
    )


def test_lifecycle_hooks() -> None:
    lifecycle = {"postStart": {"exec": {"command": ["touch", "/ready"]}}, "preStop": {"sleep": {"seconds": 5}}}
    assert container("cronjob", lifecycle=lifecycle)["lifecycle"] == lifecycle
    hook = {"preStop": {"httpGet": {"port": "http", "path": "/drain"}}}
    assert container("webservice", lifecycle=hook)["lifecycle"] == {
        "preStop": {"httpGet": {"path": "/drain", "port": "http"}}
    }


@pytest.mark.parametrize(
    ("lifecycle", "message"),
    [
        (
            {"preStop": {"tcpSocket": {"port": 80}}},
            "lifecycle.preStop: tcpSocket is not supported as a lifecycle handler",
        ),
        ({"postStart": {}}, "lifecycle.postStart: must specify exactly one of httpGet, exec, or sleep"),
        (
            {"preStop": {"exec": {"command": ["x"]}, "sleep": {"seconds": 1}}},
            "lifecycle.preStop: must specify exactly one of httpGet, exec, or sleep",
        ),
        ({"preStop": {"httpGet": {"port": "http"}}}, f"lifecycle.preStop: httpGet handler: {NO_PORTS}"),
        ({"preStop": {"exec": {"command": ["x"]}, "wait": 1}}, 'lifecycle.preStop: unrecognized key "wait"'),
    ],
)
def test_lifecycle_messages(lifecycle: Any, message: str) -> None:
    assert handler_error("worker", with_image(lifecycle=lifecycle)) == LIFECYCLE + message


def test_lifecycle_tcp_socket_is_refused_through_validation_too() -> None:
    assert error("worker", with_image(lifecycle={"preStop": {"tcpSocket": {"port": 80}}})) == (
        f'component "c": {LIFECYCLE}lifecycle.preStop: tcpSocket is not supported as a lifecycle handler'
    )


def test_security_context_and_working_dir_as_written() -> None:
    security = {
        "runAsUser": 1000,
        "runAsGroup": 3000,
        "runAsNonRoot": True,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
        "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
        "seLinuxOptions": {"level": "s0:c123,c456"},
        "appArmorProfile": {"type": "RuntimeDefault"},
        "procMount": "Default",
    }
    c = container("statefulset", securityContext=security, workingDir="/srv")
    assert c["securityContext"] == security
    assert c["workingDir"] == "/srv"
    assert "securityContext" not in container("worker") and "workingDir" not in container("worker")


def test_security_context_messages() -> None:
    assert handler_error("worker", with_image(securityContext={"runAsUser": "root"})) == (
        "invalid securityContext configuration: securityContext.runAsUser: expected integer, got string (root)"
    )
    assert error("worker", with_image(securityContext={"seccompProfile": {"type": "Strict"}})) == (
        'component "c" (type "worker"): properties.securityContext.seccompProfile.type: unknown type "Strict" '
        "(valid: Localhost, RuntimeDefault, Unconfined)"
    )
