"""The name rules of ``oam/object_names.py`` are the API server's: at the limit accepted, past it refused;
a trailing newline refused in names, label keys and label values alike (Go's ``$`` is the end of the text)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client, utils
from kubernetes.client.exceptions import ApiException

from oam_operator.oam.engine.object_names import check_object_names, name_rule
from oam_operator.oam.errors import GenerationError


def manifest(api_version: str, kind: str, name: str, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}
    pod = {"containers": [{"name": "main", "image": "registry.invalid/app:1"}], "restartPolicy": "Never"}
    if kind == "Service":
        obj["spec"] = {"ports": [{"port": 80}]}
    elif kind == "Job":
        obj["spec"] = {"template": {"spec": pod}}
    elif kind == "CronJob":
        obj["spec"] = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": pod}}}}
    elif kind == "RoleBinding":
        obj["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    if kind != "Namespace":
        obj["metadata"]["namespace"] = namespace
    return obj


def accepted(api: Any, obj: dict[str, Any]) -> bool:
    try:
        utils.create_from_dict(api, obj, dry_run="All")
    except utils.FailToCreateError as failure:
        errors = failure.api_exceptions
        assert all(isinstance(e, ApiException) and e.status == 422 for e in errors), errors
        return False
    return True


CASES = [
    ("v1", "Service", "a" * 63, "a" * 64),
    ("v1", "Service", "web-v2", "web.v2"),
    ("v1", "Service", "1st", "-1st"),
    ("v1", "Service", "web", "web\n"),
    ("v1", "Namespace", "a" * 63, "a.b"),
    ("v1", "ConfigMap", "a" * 253, "a" * 254),
    ("v1", "ConfigMap", "web.v2", "web.v2\n"),
    ("batch/v1", "CronJob", "a" * 52, "a" * 53),
    ("batch/v1", "Job", "a" * 63, "a" * 64),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "system:viewer", "a/b"),
]


@pytest.mark.parametrize(("api_version", "kind", "allowed", "refused"), CASES)
def test_the_rule_matches_the_api_server(kube_api: Any, namespace: str, api_version: str, kind: str,
                                         allowed: str, refused: str) -> None:
    rule = name_rule(api_version, kind)
    assert rule.allows(allowed) and not rule.allows(refused)
    assert accepted(kube_api, manifest(api_version, kind, allowed, namespace))
    assert not accepted(kube_api, manifest(api_version, kind, refused, namespace))


def test_a_label_value_of_64_characters_is_refused(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "c", "labels": {"app": "a" * 64}}},
                                          dry_run="All")
    assert info.value.status == 422


def transform_allows(obj: dict[str, Any]) -> bool:
    try:
        check_object_names("c", "c", [obj])
    except GenerationError:
        return False
    return True


LABEL_CASES = [
    ({"app": ""}, True),
    ({"app": "a" * 63}, True),
    ({"app": "web\n"}, False),
    ({"app": "web\nx"}, False),
    ({"example.com/app": "web"}, True),
    ({"app\n": "web"}, False),
    ({"example.com/app\n": "web"}, False),
    ({"example.com\n/app": "web"}, False),
]


@pytest.mark.parametrize(("labels", "allowed"), LABEL_CASES)
def test_the_label_rules_match_the_api_server(kube_api: Any, namespace: str, labels: dict[str, str],
                                              allowed: bool) -> None:
    obj = manifest("v1", "ConfigMap", "c", namespace)
    obj["metadata"]["labels"] = labels
    assert transform_allows(obj) is allowed
    assert accepted(kube_api, obj) is allowed
