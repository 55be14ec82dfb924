"""The ``volsync`` trait (docs/transform.md#scaling-and-storage):
the ReplicationSource, its defaults, classes and messages."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.profiles import (
    NS,
    capabilities,
    component,
    document,
    error,
    evaluation_error,
    find,
    kinds,
    objects,
    run,
    trait,
)

from oam_operator.oam import new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema


def db(*traits: dict[str, Any]) -> dict[str, Any]:
    vct = [{"name": "data", "size": "10Gi", "mountPath": "/var/lib/postgresql/data"}]
    return component("db", "statefulset", *traits, image="postgres:16.2", port=5432, volumeClaimTemplates=vct)


def source(bindings: dict[str, Any] | None = None, **props: Any) -> dict[str, Any]:
    props = {"sourcePVC": "data", "schedule": "0 2 * * *", **props}
    return find(objects(document(db(trait("volsync", **props))), bindings), "ReplicationSource")


def handler_error(**props: Any) -> str:
    return error(document(db(trait("volsync", **props))), validate=False)


def test_object_and_defaults() -> None:
    objs = objects(document(db(trait("volsync", sourcePVC="data", schedule="@daily"))))
    assert kinds(objs) == [
        ("StatefulSet", "db"),
        ("Service", "db"),
        ("ServiceAccount", "db"),
        ("ReplicationSource", "data-backup"),
    ]
    assert objs[-1] == {
        "apiVersion": "volsync.backube/v1alpha1",
        "kind": "ReplicationSource",
        "metadata": {"name": "data-backup", "namespace": NS},
        "spec": {
            "sourcePVC": "data",
            "trigger": {"schedule": "@daily"},
            "restic": {
                "repository": "db-volsync-secret",
                "copyMethod": "Snapshot",
                "pruneIntervalDays": 14,
                "retain": {"daily": 7, "weekly": 4, "monthly": 3},
                "customCA": {},
            },
        },
    }


def test_sub_application_name_and_no_capability_needed() -> None:
    result = run(document(db(trait("volsync", sourcePVC="data", schedule="@daily"))))
    assert [a.name for a in result.cluster.applications()] == ["db", "data-backup"]
    assert result.policy_result.consumed_capabilities is None


def test_authored_values() -> None:
    restic = source(
        repository="backups-s3",
        pruneIntervalDays=30,
        retain={"daily": 0, "monthly": 12.0},
        storageClassName="fast",
        volumeSnapshotClassName="csi-snap",
    )["spec"]["restic"]
    assert restic == {
        "repository": "backups-s3",
        "copyMethod": "Snapshot",
        "pruneIntervalDays": 30,
        "retain": {"daily": 0, "weekly": 4, "monthly": 12},
        "customCA": {},
        "storageClassName": "fast",
        "volumeSnapshotClassName": "csi-snap",
    }


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("Snapshot", {"storageClassName": "fast", "volumeSnapshotClassName": "snap"}),
        ("Clone", {"storageClassName": "fast"}),
        ("Direct", {}),
    ],
)
def test_classes_depend_on_the_copy_method(method: str, expected: dict[str, str]) -> None:
    restic = source(copyMethod=method, storageClassName="fast", volumeSnapshotClassName="snap")["spec"]["restic"]
    assert restic["copyMethod"] == method
    assert {k: restic[k] for k in ("storageClassName", "volumeSnapshotClassName") if k in restic} == expected


def test_rendering_supplies_classes_and_authored_wins() -> None:
    rendering = {"volsync": {"storageClassName": "platform", "volumeSnapshotClassName": "platform-snap"}}
    restic = source(rendering)["spec"]["restic"]
    assert (restic["storageClassName"], restic["volumeSnapshotClassName"]) == ("platform", "platform-snap")
    restic = source(rendering, storageClassName="mine")["spec"]["restic"]
    assert (restic["storageClassName"], restic["volumeSnapshotClassName"]) == ("mine", "platform-snap")
    assert capabilities({"volsync": {}})["volsync"].rendering == {}


def test_schedule_is_passed_through() -> None:
    assert source(schedule="*/15 * * * *")["spec"]["trigger"] == {"schedule": "*/15 * * * *"}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"schedule": "@daily"}, "required property 'sourcePVC' missing or not a string"),
        ({"sourcePVC": "", "schedule": "@daily"}, "required property 'sourcePVC' missing or not a string"),
        ({"sourcePVC": 1, "schedule": "@daily"}, "required property 'sourcePVC' missing or not a string"),
        ({"sourcePVC": "data"}, "required property 'schedule' missing or not a string"),
        ({"sourcePVC": "data", "schedule": 5}, "required property 'schedule' missing or not a string"),
        ({"copyMethod": "Rsync"}, 'unsupported copyMethod "Rsync"; supported: Snapshot, Direct, Clone'),
        ({"copyMethod": "snapshot"}, 'unsupported copyMethod "snapshot"; supported: Snapshot, Direct, Clone'),
        ({"pruneIntervalDays": 0}, "'pruneIntervalDays' must be a positive integer"),
        ({"pruneIntervalDays": -3}, "'pruneIntervalDays' must be a positive integer"),
        ({"pruneIntervalDays": 1.5}, "'pruneIntervalDays' must be a positive integer"),
        ({"pruneIntervalDays": "7"}, "'pruneIntervalDays' must be a positive integer"),
        ({"pruneIntervalDays": 2147483648}, "'pruneIntervalDays' must be a positive integer"),
        ({"retain": {"daily": -1}}, "'retain.daily' must be a non-negative integer"),
        ({"retain": {"weekly": 2.5}}, "'retain.weekly' must be a non-negative integer"),
        ({"retain": {"monthly": 2147483648}}, "'retain.monthly' must be a non-negative integer"),
        ({"retain": {"monthly": True}}, "'retain.monthly' must be a non-negative integer"),
        ({"retain": 7}, "'retain' must be a map"),
        ({"repository": 5}, "'repository' must be a string"),
        ({"storageClassName": 5}, "'storageClassName' must be a string"),
        ({"volumeSnapshotClassName": False}, "'volumeSnapshotClassName' must be a string"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    if "sourcePVC" not in props and "schedule" not in props:
        props = {"sourcePVC": "data", "schedule": "@daily", **props}
    assert handler_error(**props) == f'component "db" trait "volsync": {message}'


def test_limits_are_accepted() -> None:
    restic = source(pruneIntervalDays=2147483647, retain={"daily": 2147483647})["spec"]["restic"]
    assert (restic["pruneIntervalDays"], restic["retain"]["daily"]) == (2147483647, 2147483647)
    assert source(pruneIntervalDays=1)["spec"]["restic"]["pruneIntervalDays"] == 1


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        (
            {"schedule": "@daily"},
            'volsync rendering: unsupported field "schedule" (allowed: storageClassName, volumeSnapshotClassName)',
        ),
        ({"storageClassName": 1}, "volsync rendering: storageClassName must be a string"),
        ({"volumeSnapshotClassName": ["x"]}, "volsync rendering: volumeSnapshotClassName must be a string"),
    ],
)
def test_rendering_messages(rendering: dict[str, Any], message: str) -> None:
    assert evaluation_error({"volsync": rendering}) == f'capability "volsync": {message}'


def test_authored_schema_checks() -> None:
    text = document(db(trait("volsync", sourcePVC="data", schedule="@daily", copyMethod="Rsync")))
    assert error(text) == (
        'component "db": trait "volsync": properties.copyMethod: unknown copyMethod "Rsync" (valid: Snapshot, Direct, Clone)'
    )
    text = document(db(trait("volsync", sourcePVC="data", schedule="@daily", retain={"yearly": 1})))
    assert error(text) == (
        'component "db": trait "volsync": properties.retain: unsupported field "yearly" (allowed: daily, monthly, weekly)'
    )


def test_contract_schema_and_documented_defaults() -> None:
    t = new_builtin_transformer()
    contract = t.handler_contracts().traits["volsync"]
    assert (contract.family, contract.version, contract.required_capability_keys) == ("volsync", "v1alpha1", [])
    schema = t.handler_schemas().traits["volsync"]
    assert [p for p, node in walk_schema(schema) if not node.description] == []
    assert [k for k, v in schema.items() if v.required] == ["sourcePVC", "schedule"]
    assert (schema["copyMethod"].default, schema["pruneIntervalDays"].default) == ("Snapshot", 14)
    retain: Any = schema["retain"].properties
    assert {k: v.default for k, v in retain.items()} == {"daily": 7, "weekly": 4, "monthly": 3}
