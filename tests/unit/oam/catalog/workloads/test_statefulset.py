"""The ``statefulset`` component (docs/transform.md#workload-components)."""

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
    with_image,
)

from oam_operator.oam.engine.handlers import backend_service_name, service_port

DATA = {"name": "data", "size": "10Gi", "mountPath": "/var/lib/data"}


def test_objects_with_port_and_claim_template() -> None:
    assert objects("statefulset", with_image(port=5432, volumeClaimTemplates=[DATA]), name="db") == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"labels": {"app": "db"}, "name": "db", "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "db"}},
                "serviceName": "db",
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "db",
                                "image": IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "ports": [{"name": "tcp", "containerPort": 5432, "protocol": "TCP"}],
                                "resources": RESOURCES,
                                "volumeMounts": [{"name": "data", "mountPath": "/var/lib/data"}],
                            }
                        ],
                        "serviceAccountName": "db",
                    },
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
                        "status": {},
                    }
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"labels": {"app": "db"}, "name": "db", "namespace": NS},
            "spec": {
                "clusterIP": "None",
                "selector": {"app": "db"},
                "ports": [{"name": "tcp", "port": 5432, "targetPort": 5432, "protocol": "TCP"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"app": "db"}, "name": "db", "namespace": NS},
            "automountServiceAccountToken": False,
        },
    ]


def test_without_port_the_headless_service_has_no_ports() -> None:
    sts, svc, _ = objects("statefulset", with_image(), name="db")
    assert "ports" not in main_container(sts)
    assert "volumeClaimTemplates" not in sts["spec"]
    assert svc["spec"] == {"clusterIP": "None", "selector": {"app": "db"}}
    assert service_port(config("statefulset", with_image())) == 0


def test_service_name_names_the_service_and_the_backend() -> None:
    sts, svc, sa = objects("statefulset", with_image(port=6379, serviceName="cache-headless", replicas=3), name="cache")
    assert sts["spec"]["serviceName"] == "cache-headless"
    assert sts["spec"]["replicas"] == 3
    assert (svc["metadata"]["name"], sa["metadata"]["name"]) == ("cache-headless", "cache")
    cfg = config("statefulset", with_image(port=6379, serviceName="cache-headless"), name="cache")
    assert (service_port(cfg), backend_service_name(cfg)) == (6379, "cache-headless")
    assert backend_service_name(config("statefulset", with_image(), name="cache")) == "cache"


def test_claim_templates_mount_first_and_volumes_generate_claims() -> None:
    props = with_image(
        volumeClaimTemplates=[
            DATA,
            {
                "name": "wal",
                "size": 1.5e9,
                "mountPath": "/wal",
                "storageClass": "fast",
                "accessModes": ["ReadWriteOncePod"],
            },
        ],
        volumes=[{"name": "backup", "mountPath": "/backup", "type": "pvc", "size": "50Gi"}],
    )
    out = objects("statefulset", props, name="db")
    assert kinds(out) == [
        ("StatefulSet", "db"),
        ("Service", "db"),
        ("ServiceAccount", "db"),
        ("PersistentVolumeClaim", "db-backup"),
    ]
    assert main_container(out[0])["volumeMounts"] == [
        {"name": "data", "mountPath": "/var/lib/data"},
        {"name": "wal", "mountPath": "/wal"},
        {"name": "backup", "mountPath": "/backup"},
    ]
    assert out[0]["spec"]["volumeClaimTemplates"][1] == {
        "metadata": {"name": "wal"},
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "resources": {"requests": {"storage": "1500M"}},
            "storageClassName": "fast",
        },
        "status": {},
    }


@pytest.mark.parametrize(
    ("templates", "message"),
    [
        (["data"], "volumeClaimTemplates: each entry must be a mapping"),
        ([{"size": "1Gi", "mountPath": "/d"}], "volumeClaimTemplate entry missing required field 'name'"),
        ([{"name": "d", "mountPath": "/d"}], "volumeClaimTemplate \"d\" missing required field 'size'"),
        ([{"name": "d", "size": "1Gi"}], "volumeClaimTemplate \"d\" missing required field 'mountPath'"),
        (
            [{"name": "d", "size": "lots", "mountPath": "/d"}],
            'volumeClaimTemplate "d": invalid size "lots": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
)
def test_claim_template_messages(templates: Any, message: str) -> None:
    assert handler_error("statefulset", with_image(volumeClaimTemplates=templates)) == message


def test_claim_template_schema() -> None:
    assert error("statefulset", with_image(volumeClaimTemplates=[{"name": "d", "size": "1Gi"}])) == (
        'component "c" (type "statefulset"): properties.volumeClaimTemplates[0]: "mountPath" is required'
    )


def test_routing_traits_follow_the_service_name() -> None:
    ingress = {"type": "ingress", "properties": {"rules": [{"host": "db.example.com", "paths": [{"path": "/"}]}]}}
    out = objects("statefulset", with_image(port=5432, serviceName="db-hl"), name="db", traits=[ingress])
    backend = out[-1]["spec"]["rules"][0]["http"]["paths"][0]["backend"]
    assert backend == {"service": {"name": "db-hl", "port": {"number": 5432}}}
