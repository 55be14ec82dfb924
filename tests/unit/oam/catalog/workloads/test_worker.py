"""The ``worker`` component (docs/transform.md#workload-components)."""

from __future__ import annotations

from oamkit.workloads import IMAGE, NS, RESOURCES, config, error, handler_error, kinds, objects, with_image

from oam_operator.oam.engine.handlers import service_port


def test_minimal_objects() -> None:
    assert objects("worker", {"image": IMAGE}, name="backend") == [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"labels": {"app": "backend"}, "name": "backend", "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "backend"}},
                "strategy": {},
                "template": {
                    "metadata": {"labels": {"app": "backend"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "backend",
                                "image": IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "resources": RESOURCES,
                            }
                        ],
                        "serviceAccountName": "backend",
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"app": "backend"}, "name": "backend", "namespace": NS},
            "automountServiceAccountToken": False,
        },
    ]


def test_no_service_no_port() -> None:
    props = with_image(
        replicas=3,
        volumes=[{"name": "d", "mountPath": "/d", "type": "pvc", "size": "1Gi", "accessModes": ["ReadWriteMany"]}],
    )
    assert kinds(objects("worker", props, name="q")) == [
        ("Deployment", "q"),
        ("ServiceAccount", "q"),
        ("PersistentVolumeClaim", "q-d"),
    ]
    assert service_port(config("worker", with_image())) == 0
    assert error("worker", with_image(port=80)).startswith(
        'component "c" (type "worker"): properties: unsupported field "port"'
    )


def test_named_probe_ports_are_refused() -> None:
    assert handler_error("worker", with_image(probes={"liveness": {"httpGet": {"port": "metrics"}}})) == (
        'invalid probe configuration: liveness probe: httpGet handler: named port "metrics" is not supported here: this component '
        "declares no container ports for the kubelet to resolve the name against — use a numeric port instead"
    )
