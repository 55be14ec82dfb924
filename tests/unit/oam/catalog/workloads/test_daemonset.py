"""The ``daemonset`` component (docs/transform.md#workload-components)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import (
    IMAGE,
    NS,
    RESOURCES,
    config,
    error,
    handler_error,
    kinds,
    main_container,
    objects,
    pod_spec,
    with_image,
)

from oam_operator.oam.engine.handlers import service_port


def test_minimal_objects_have_no_service() -> None:
    assert objects("daemonset", {"image": IMAGE}, name="agent") == [
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"labels": {"app": "agent"}, "name": "agent", "namespace": NS},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "metadata": {"labels": {"app": "agent"}},
                    "spec": {
                        "containers": [
                            {"name": "agent", "image": IMAGE, "imagePullPolicy": "IfNotPresent", "resources": RESOURCES}
                        ],
                        "serviceAccountName": "agent",
                    },
                },
                "updateStrategy": {},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"app": "agent"}, "name": "agent", "namespace": NS},
            "automountServiceAccountToken": False,
        },
    ]
    assert service_port(config("daemonset", with_image())) == 0


def test_port_adds_the_http_service() -> None:
    out = objects("daemonset", with_image(port=9100), name="exporter")
    assert kinds(out) == [("DaemonSet", "exporter"), ("Service", "exporter"), ("ServiceAccount", "exporter")]
    assert main_container(out[0])["ports"] == [{"name": "http", "containerPort": 9100, "protocol": "TCP"}]
    assert out[1]["spec"] == {
        "type": "ClusterIP",
        "selector": {"app": "exporter"},
        "ports": [{"name": "http", "port": 9100, "targetPort": 9100, "protocol": "TCP"}],
    }
    assert service_port(config("daemonset", with_image(port=9100))) == 9100


def test_tolerations_in_order_with_operator_defaults() -> None:
    tolerations = [
        {},
        {"key": "dedicated", "value": "infra", "effect": "NoSchedule"},
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": ""},
        {"operator": "Exists", "effect": "NoExecute"},
    ]
    assert pod_spec(objects("daemonset", with_image(tolerations=tolerations))[0])["tolerations"] == [
        {"operator": "Exists"},
        {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"},
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
        {"operator": "Exists", "effect": "NoExecute"},
    ]
    assert "tolerations" not in pod_spec(objects("daemonset", with_image(tolerations=[]))[0])


@pytest.mark.parametrize(
    ("tolerations", "message"),
    [
        (["x"], "toleration[0]: must be a mapping"),
        ([{}, {"operator": "In"}], "toleration[1].operator: invalid value \"In\", must be 'Exists' or 'Equal'"),
        ([{"effect": "NoRun"}], 'toleration[0].effect: invalid value "NoRun"'),
        ([{"key": 5}], "toleration[0].key: must be a string, got int"),
    ],
)
def test_toleration_messages(tolerations: Any, message: str) -> None:
    assert handler_error("daemonset", with_image(tolerations=tolerations)) == message


def test_what_a_daemonset_does_not_accept() -> None:
    for key in ("replicas", "affinity", "sidecars", "topologySpread"):
        assert error("daemonset", with_image(**{key: None})).startswith(
            f'component "c" (type "daemonset"): properties: unsupported field "{key}"'
        )
    assert error("daemonset", with_image(tolerations=[{"operator": "In"}])) == (
        'component "c" (type "daemonset"): properties.tolerations[0].operator: unknown operator "In" (valid: Exists, Equal)'
    )
