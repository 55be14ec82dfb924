"""The ``webservice`` component (docs/transform.md#workload-components)."""

from __future__ import annotations

from oamkit.workloads import (
    IMAGE,
    LABEL,
    NS,
    RESOURCES,
    config,
    error,
    handler_error,
    kinds,
    objects,
    pod_spec,
    with_image,
)

from oam_operator.oam.engine.handlers import backend_service_name, service_port


def test_minimal_objects() -> None:
    assert objects("webservice", {"image": IMAGE}, name="web") == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                                "resources": RESOURCES,
                            }
                        ],
                        "serviceAccountName": "web",
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": NS},
            "spec": {
                "type": "ClusterIP",
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": 80, "protocol": "TCP"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": NS},
            "automountServiceAccountToken": False,
        },
    ]


def test_port_and_replicas() -> None:
    deployment, svc, _ = objects("webservice", with_image(port=8080, replicas=2))
    assert deployment["spec"]["replicas"] == 2
    assert pod_spec(deployment)["containers"][0]["ports"] == [
        {"name": "http", "containerPort": 8080, "protocol": "TCP"}
    ]
    assert svc["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": 8080, "protocol": "TCP"}]


def test_traits_see_the_port_and_the_service() -> None:
    assert service_port(config("webservice", with_image(port=8443), name="web")) == 8443
    assert service_port(config("webservice", with_image(), name="web")) == 80
    assert backend_service_name(config("webservice", with_image(), name="web")) == "web"


def test_object_order_with_claims() -> None:
    props = with_image(volumes=[{"name": "data", "mountPath": "/data", "type": "pvc", "size": "1Gi"}])
    assert kinds(objects("webservice", props, name="web")) == [
        ("Deployment", "web"),
        ("Service", "web"),
        ("ServiceAccount", "web"),
        ("PersistentVolumeClaim", "web-data"),
    ]


def test_component_label_on_every_object_and_the_pod_template() -> None:
    out = objects("webservice", with_image(), name="web", label=True)
    for obj in out:
        assert obj["metadata"]["labels"] == {"app": "web", LABEL: "web"}
    assert out[0]["spec"]["template"]["metadata"]["labels"] == {"app": "web", LABEL: "web"}
    assert out[0]["spec"]["selector"] == {"matchLabels": {"app": "web"}}


def test_messages() -> None:
    assert error("webservice", with_image(replicas="3")) == (
        'component "c" (type "webservice"): properties.replicas: expected integer, got string (3)'
    )
    assert error("webservice", with_image(ports=[80])).startswith(
        'component "c" (type "webservice"): properties: unsupported field "ports" (allowed: affinity, args, command,'
    )
    assert handler_error("webservice", with_image(replicas="3")) == "replicas: must be an integer, got string"
    assert handler_error("webservice", with_image(topologySpread="no")) == "topologySpread: must be a bool, got string"
