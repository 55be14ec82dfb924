"""The ``pvc`` trait (docs/transform.md#scaling-and-storage):
the claim, sizes, access modes, the storage-class rendering."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import NS, capabilities, document, find, kinds, objects, trait, trait_error, webservice

from oam_operator.oam import CapabilityError


def claim(caps: Any = None, **props: Any) -> dict[str, Any]:
    return find(objects(document(webservice("my-app", trait("pvc", **props))), caps), "PersistentVolumeClaim")


def test_claim_object_name_and_position() -> None:
    text = document(webservice("my-app", trait("pvc", name="shared-data", size="5Gi")))
    assert kinds(text)[-1] == ("PersistentVolumeClaim", "shared-data")
    assert find(objects(text), "PersistentVolumeClaim") == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "shared-data", "namespace": NS, "labels": {"app": "my-app"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}},
    }


def test_size_is_canonical_and_modes_and_class_are_kept() -> None:
    spec = claim(name="d", size="2048Mi", accessModes=["ReadWriteMany", "ReadOnlyMany"], storageClassName="fast")[
        "spec"
    ]
    assert spec == {
        "accessModes": ["ReadWriteMany", "ReadOnlyMany"],
        "resources": {"requests": {"storage": "2Gi"}},
        "storageClassName": "fast",
    }
    assert claim(name="d", size=1000)["spec"]["resources"]["requests"]["storage"] == "1k"
    assert "storageClassName" not in claim(name="d", size="1Gi", storageClassName="")["spec"]


def test_rendering_supplies_the_storage_class_and_authored_wins() -> None:
    caps = capabilities(pvc={"storageClassName": "platform"})
    assert claim(caps, name="d", size="1Gi")["spec"]["storageClassName"] == "platform"
    assert claim(caps, name="d", size="1Gi", storageClassName="mine")["spec"]["storageClassName"] == "mine"
    with pytest.raises(CapabilityError) as info:
        capabilities(pvc={"size": "1Gi"})
    assert str(info.value) == 'capability "pvc": pvc rendering: unsupported field "size" (allowed: storageClassName)'
    with pytest.raises(CapabilityError) as info:
        capabilities(pvc={"storageClassName": 5})
    assert str(info.value) == 'capability "pvc": pvc rendering: storageClassName must be a string'


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"size": "1Gi"}, "required property 'name' missing or not a string"),
        ({"name": 7, "size": "1Gi"}, "required property 'name' missing or not a string"),
        (
            {"name": "d", "size": "lots"},
            'invalid PVC size "lots": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ({"name": "d", "size": "1Gi", "accessModes": []}, "accessModes must not be empty when specified"),
        (
            {"name": "d", "size": "1Gi", "accessModes": ["ReadWriteOnce", "RWX"]},
            'accessModes: unknown accessMode "RWX" (valid: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod)',
        ),
        ({"name": "d", "size": "1Gi", "storageClassName": 1}, "storageClassName must be a string"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert trait_error(webservice("my-app", trait("pvc", **props))) == f'component "my-app" trait "pvc": {message}'


def test_missing_size_is_an_effective_value_error() -> None:
    assert trait_error(webservice("my-app", trait("pvc", name="d"))) == (
        'component "my-app": PVC "d" size is required (set it on the trait or via an EnvironmentPolicy storage default)'
    )
