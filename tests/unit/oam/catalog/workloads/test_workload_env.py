"""``env`` and ``envFrom`` of the workload types (docs/transform.md#shared-workload-properties)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import error, handler_error, main_container, objects, with_image


def env_of(env: list[Any], validate: bool = True) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = main_container(objects("worker", with_image(env=env), validate=validate)[0])["env"]
    return result


def test_env_in_authored_order_with_every_selector() -> None:
    env = [
        {"name": "PLAIN", "value": "x"},
        {"name": "EMPTY", "value": ""},
        {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}}},
        {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "API", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}},
        {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "containerName": "c"}}},
        {"name": "FILE", "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "p.env", "key": "K"}}},
    ]
    assert env_of(env) == [
        {"name": "PLAIN", "value": "x"},
        {"name": "EMPTY"},
        {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}}},
        {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "API", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}},
        {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1"}}},
        {
            "name": "MEM",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "containerName": "c", "divisor": "0"}},
        },
        {"name": "FILE", "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "p.env", "key": "K"}}},
    ]


def test_no_env_means_no_env_key() -> None:
    assert "env" not in main_container(objects("worker", with_image())[0])
    assert "envFrom" not in main_container(objects("worker", with_image(env=[], envFrom=[]))[0])


def test_entries_without_a_name_are_skipped_for_library_callers() -> None:
    assert env_of([{"value": "x"}, {"name": "", "value": "y"}, {"name": "A", "value": "z"}], validate=False) == [
        {"name": "A", "value": "z"}
    ]
    assert error("worker", with_image(env=[{"value": "x"}])) == (
        'component "c" (type "worker"): properties.env[0]: "name" is required'
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "f"}}},
            'env "A": value and valueFrom are mutually exclusive (valueFrom cannot be used if value is not empty)',
        ),
        (
            {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "f"}, "secretKeyRef": {"name": "s", "key": "k"}}},
            'env "A": valueFrom: secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, and fileKeyRef are mutually exclusive',
        ),
        (
            {"name": "A", "valueFrom": {}},
            'env "A": invalid valueFrom: must contain a valid secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, or fileKeyRef',
        ),
        (
            {"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}},
            'env "A": invalid valueFrom: must contain a valid secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, or fileKeyRef',
        ),
        (
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k", "extra": 1}}},
            'env "A": configMapKeyRef: unrecognized key "extra"',
        ),
        (
            {"name": "A", "valueFrom": {"fileKeyRef": {"volumeName": "v", "path": "p", "key": "k", "x": 1}}},
            'env "A": fileKeyRef: unrecognized key "x"',
        ),
    ],
)
def test_env_messages(entry: dict[str, Any], message: str) -> None:
    assert handler_error("webservice", with_image(env=[entry])) == message


def test_value_and_empty_value_from_selector_through_validation() -> None:
    assert error("webservice", with_image(env=[{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s"}}}])) == (
        'component "c" (type "webservice"): properties.env[0].valueFrom.secretKeyRef: "key" is required'
    )
    # an empty value does not conflict with valueFrom
    assert env_of([{"name": "A", "value": "", "valueFrom": {"fieldRef": {"fieldPath": "f"}}}]) == [
        {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "f"}}}
    ]


def test_env_from() -> None:
    env_from = [
        {"configMapRef": {"name": "cfg"}},
        {"prefix": "DB_", "secretRef": {"name": "db", "optional": False}},
    ]
    assert main_container(objects("daemonset", with_image(envFrom=env_from))[0])["envFrom"] == [
        {"configMapRef": {"name": "cfg"}},
        {"prefix": "DB_", "secretRef": {"name": "db", "optional": False}},
    ]


@pytest.mark.parametrize(
    ("env_from", "message"),
    [
        ("cfg", "envFrom: must be an array, got string"),
        (["cfg"], "envFrom[0]: expected object, got string"),
        ([{"configMapRef": {"name": "a"}, "x": 1}], 'envFrom[0]: unrecognized key "x"'),
        (
            [{"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}}],
            "envFrom[0]: must specify exactly one of configMapRef or secretRef",
        ),
        ([{"prefix": "P"}], "envFrom[0]: must specify exactly one of configMapRef or secretRef"),
        (
            [{"prefix": "A=B", "configMapRef": {"name": "a"}}],
            "envFrom[0].prefix: must consist of printable ASCII characters other than '=', got \"A=B\"",
        ),
        (
            [{"prefix": "A\tB", "configMapRef": {"name": "a"}}],
            "envFrom[0].prefix: must consist of printable ASCII characters other than '=', got \"A\\tB\"",
        ),
        ([{"configMapRef": {}}], "envFrom[0].configMapRef: name is required"),
        (
            [{"configMapRef": {"name": "a"}}, {"secretRef": {"optional": True}}],
            "envFrom[1].secretRef: name is required",
        ),
        (
            [{"secretRef": {"name": "Bad_Name"}}],
            'envFrom[0].secretRef.name: invalid name "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower '
            "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ],
)
def test_env_from_messages(env_from: Any, message: str) -> None:
    assert handler_error("cronjob", with_image(schedule="* * * * *", envFrom=env_from)) == message


def test_env_from_schema_refuses_unknown_keys_first() -> None:
    assert error("worker", with_image(envFrom=[{"configMap": {"name": "a"}}])) == (
        'component "c" (type "worker"): properties.envFrom[0]: unsupported field "configMap" '
        '(allowed: configMapRef, prefix, secretRef); did you mean "configMapRef"?'
    )
