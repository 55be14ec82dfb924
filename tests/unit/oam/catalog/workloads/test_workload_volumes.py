"""``volumes``, their mounts and the PersistentVolumeClaims they generate
(docs/transform.md#shared-workload-properties, docs/transform.md#pvc-names)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import NS, error, handler_error, kinds, main_container, objects, pod_spec, with_image

from oam_operator.oam import GenerationError
from oam_operator.oam.catalog.workloads.volumes import claim_name, escape

LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def test_every_volume_type_and_its_mount() -> None:
    volumes = [
        {"name": "host", "mountPath": "/host", "type": "hostPath", "path": "/var/log", "readOnly": True},
        {"name": "scratch", "mountPath": "/scratch", "type": "emptyDir"},
        {"name": "cache", "mountPath": "/cache", "type": "emptyDir", "sizeLimit": "1024Mi"},
        {"name": "plain", "mountPath": "/plain", "type": "emptyDir", "sizeLimit": None},
        {
            "name": "data",
            "mountPath": "/data",
            "type": "pvc",
            "size": "10Gi",
            "readOnly": True,
            "accessModes": ["ReadWriteMany"],
            "storageClass": "fast",
        },
        {"name": "cfg", "mountPath": "/etc/cfg", "type": "configMap", "configMapName": "app-config"},
        {"name": "creds", "mountPath": "/etc/creds", "type": "secret", "secretName": "app-creds", "readOnly": False},
    ]
    out = objects("webservice", with_image(volumes=volumes), name="my-app")
    assert pod_spec(out[0])["volumes"] == [
        {"name": "host", "hostPath": {"path": "/var/log", "type": ""}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "plain", "emptyDir": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "my--app-data", "readOnly": True}},
        {"name": "cfg", "configMap": {"name": "app-config"}},
        {"name": "creds", "secret": {"secretName": "app-creds"}},
    ]
    assert main_container(out[0])["volumeMounts"] == [
        {"name": "host", "mountPath": "/host", "readOnly": True},
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "cache", "mountPath": "/cache"},
        {"name": "plain", "mountPath": "/plain"},
        {"name": "data", "mountPath": "/data", "readOnly": True},
        {"name": "cfg", "mountPath": "/etc/cfg"},
        {"name": "creds", "mountPath": "/etc/creds"},
    ]
    # a ReadWriteMany claim can be shared by a rolling update
    assert out[0]["spec"]["strategy"] == {}
    assert out[-1] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"labels": {"app": "my-app"}, "name": "my--app-data", "namespace": NS},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": "10Gi"}},
            "storageClassName": "fast",
        },
    }


def test_claim_names_double_every_dash() -> None:
    assert escape("my-app") == "my--app"
    assert claim_name("my-app", "data-vol") == "my--app-data--vol"
    assert claim_name("a-b", "c") != claim_name("a", "b-c")


@pytest.mark.parametrize("type_name", ["webservice", "worker", "statefulset", "daemonset", "cronjob"])
def test_pvc_volumes_generate_claims_after_the_service_account(type_name: str) -> None:
    props = with_image(
        volumes=[
            {"name": "a", "mountPath": "/a", "type": "pvc", "size": "1Gi", "storageClass": ""},
            {"name": "b-c", "mountPath": "/b", "type": "pvc", "size": 2.5e9, "accessModes": ["ReadOnlyMany"]},
        ]
    )
    if type_name == "cronjob":
        props["schedule"] = "0 2 * * *"
    out = objects(type_name, props, name="job")
    assert kinds(out)[-3:] == [
        ("ServiceAccount", "job"),
        ("PersistentVolumeClaim", "job-a"),
        ("PersistentVolumeClaim", "job-b--c"),
    ]
    assert out[-2]["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "",  # written when set, also when explicitly empty
    }
    assert out[-1]["spec"] == {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "2500M"}}}


@pytest.mark.parametrize("type_name", ["webservice", "worker"])
def test_single_node_claims_make_the_deployment_recreate(type_name: str) -> None:
    for modes in (None, ["ReadWriteOnce"], ["ReadWriteOncePod"], ["ReadOnlyMany", "ReadWriteOnce"]):
        volume: dict[str, Any] = {"name": "d", "mountPath": "/d", "type": "pvc", "size": "1Gi"}
        if modes is not None:
            volume["accessModes"] = modes
        deployment = objects(type_name, with_image(volumes=[volume]))[0]
        assert deployment["spec"]["strategy"] == {"type": "Recreate"}, modes
    with pytest.raises(GenerationError) as info:
        objects(
            type_name, with_image(replicas=2, volumes=[{"name": "d", "mountPath": "/d", "type": "pvc", "size": "1Gi"}])
        )
    assert str(info.value) == 'deployment "c": non-RWX PVC requires replicas=1, got 2'


def test_claim_name_must_be_a_subdomain_when_generated() -> None:
    component = "a" * 200
    with pytest.raises(GenerationError) as info:
        objects(
            "worker",
            with_image(volumes=[{"name": "v" * 60, "mountPath": "/d", "type": "pvc", "size": "1Gi"}]),
            name=component,
        )
    assert (
        str(info.value)
        == f'PVC name "{component}-{"v" * 60}" is not a valid DNS-1123 subdomain: must be no more than 253 characters'
    )


@pytest.mark.parametrize(
    ("volumes", "message"),
    [
        ([{"name": "Data", "mountPath": "/d"}], f'volume: invalid name "Data": {LABEL_ERROR}'),
        ([{"mountPath": "/d"}], f'volume: invalid name "": {LABEL_ERROR}'),
        (
            [{"name": "d", "mountPath": "/a", "type": "emptyDir"}, {"name": "d", "mountPath": "/b"}],
            'volume: duplicate name "d"',
        ),
        (
            [{"name": "a", "mountPath": "/d", "type": "emptyDir"}, {"name": "b", "mountPath": "/d"}],
            'volume "b": duplicate mountPath "/d"',
        ),
        # no default volume source: a volume without a type is refused, as kurel refuses it
        ([{"name": "a", "mountPath": "/a"}], 'volume "a": unrecognized type ""'),
        ([{"name": "a", "mountPath": "/a", "type": None}], 'volume "a": unrecognized type ""'),
        ([{"name": "a"}], 'volume "a": mountPath is required'),
        (
            [{"name": "a", "mountPath": "/a", "type": "hostPath", "path": "var/log"}],
            'volume "a": hostPath.path must be absolute, got "var/log"',
        ),
        ([{"name": "a", "mountPath": "/a", "type": "hostPath"}], 'volume "a": hostPath.path is required'),
        ([{"name": "a", "mountPath": "/a", "type": "nfs"}], 'volume "a": unrecognized type "nfs"'),
        (
            [{"name": "a", "mountPath": "/a", "type": "emptyDir", "size": "1Gi"}],
            'volume "a": emptyDir: unrecognized key "size"',
        ),
        (
            [{"name": "a", "mountPath": "/a", "type": "pvc", "size": "1Gi", "path": "/x"}],
            'volume "a": pvc: unrecognized key "path"',
        ),
        ([{"name": "a", "mountPath": "/a", "type": "pvc"}], 'volume "a": pvc.size is required'),
        (
            [{"name": "a", "mountPath": "/a", "type": "pvc", "size": "ten"}],
            'volume "a": invalid PVC size "ten": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            [{"name": "a", "mountPath": "/a", "type": "pvc", "size": "1Gi", "accessModes": ["RWO"]}],
            'volume "a": accessModes: unknown accessMode "RWO" (valid: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod)',
        ),
        (
            [
                {
                    "name": "a",
                    "mountPath": "/a",
                    "type": "pvc",
                    "size": "1Gi",
                    "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"],
                }
            ],
            'volume "a": accessMode ReadWriteOncePod cannot be combined with other access modes',
        ),
        ([{"name": "a", "mountPath": "/a", "type": "configMap"}], 'volume "a": configMap.configMapName is required'),
        ([{"name": "a", "mountPath": "/a", "type": "secret"}], 'volume "a": secret.secretName is required'),
        (
            [{"name": "a", "mountPath": "/a", "type": "emptyDir", "sizeLimit": "x"}],
            'volume "a": invalid sizeLimit "x": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
    ],
)
def test_volume_messages(volumes: Any, message: str) -> None:
    assert handler_error("webservice", with_image(volumes=volumes)) == message


def test_volume_schema_requires_name_and_mount_path() -> None:
    assert error("worker", with_image(volumes=[{"name": "a"}])) == (
        'component "c" (type "worker"): properties.volumes[0]: "mountPath" is required'
    )
    # items are open: a key of another type reaches the handler's message
    assert error("worker", with_image(volumes=[{"name": "a", "mountPath": "/a", "type": "emptyDir", "foo": 1}])) == (
        'component "c": volume "a": emptyDir: unrecognized key "foo"'
    )
