"""Names the API server would refuse are refused by the transform, naming component and limit."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit import document, run

from oam_operator.oam.engine.object_names import check_object_names, name_rule
from oam_operator.oam.errors import GenerationError, OamError

LONG = "a" * 64
DNS1123 = ("a DNS-1123 label (at most 63 characters: lower-case letters, digits and '-', starting and ending "
           "with a letter or digit)")


def web(name: str) -> dict[str, Any]:
    return {"name": name, "type": "webservice", "properties": {"image": "nginx:1", "port": 80}}


def refusal(components: list[dict[str, Any]]) -> str:
    with pytest.raises(OamError) as info:
        run(document(components, namespace="shop"))
    return str(info.value)


def test_a_64_character_component_name_is_refused_at_its_label() -> None:
    assert refusal([web(LONG)]) == (
        f'component "{LONG}": Deployment "{LONG}": metadata.labels[app] "{LONG}": must be no more than 63 characters'
    )


def test_a_dotted_component_name_is_refused_at_its_container() -> None:
    assert refusal([web("web.v2")]) == (
        'component "web.v2": Deployment "web.v2": spec.template.spec.containers[0].name "web.v2" is not ' + DNS1123
    )


def test_a_dotted_service_name_is_refused() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a.b"},
               "spec": {"ports": [{"port": 80}]}}
    component = {"name": "svc", "type": "passthrough", "properties": {"object": service}}
    assert refusal([component]) == f'component "svc": Service "a.b": metadata.name "a.b" is not {DNS1123}'


def test_valid_names_pass_and_rbac_names_may_hold_colons() -> None:
    objects = run(document([web("a" * 63)], namespace="shop")).objects()
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Deployment", "a" * 63), ("Service", "a" * 63), ("ServiceAccount", "a" * 63)
    ]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "system:viewer"}}
    check_object_names("c", "c", [role])


@pytest.mark.parametrize(
    ("api_version", "kind", "name", "allowed"),
    [
        ("v1", "Service", "a" * 63, True),
        ("v1", "Service", "a" * 64, False),
        ("v1", "Service", "web.v2", False),
        ("v1", "Service", "1st", True),
        ("v1", "Namespace", "a.b", False),
        ("v1", "ConfigMap", "a.b", True),
        ("v1", "ConfigMap", "a" * 253, True),
        ("v1", "ConfigMap", "a" * 254, False),
        ("batch/v1", "CronJob", "a" * 52, True),
        ("batch/v1", "CronJob", "a" * 53, False),
        ("batch/v1", "Job", "a" * 63, True),
        ("batch/v1", "Job", "a" * 64, False),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "system:x", True),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "a/b", False),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "..", False),
        ("example.com/v1", "Widget", "Upper", False),
    ],
)
def test_name_rules_per_kind(api_version: str, kind: str, name: str, allowed: bool) -> None:
    assert name_rule(api_version, kind).allows(name) is allowed


def test_label_keys_and_selectors_are_checked() -> None:
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"x": "-bad"}},
                 "template": {"metadata": {"labels": {"x": "ok"}}, "spec": {"containers": [{"name": "c"}]}}},
    }
    with pytest.raises(GenerationError) as info:
        check_object_names("d", "d", [deployment])
    assert str(info.value).startswith('component "d": Deployment "d": spec.selector.matchLabels[x] "-bad": '
                                      "a valid label must be an empty string")
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a/b/c": "v"}}}
    with pytest.raises(GenerationError) as info:
        check_object_names(None, "shared", [cm])
    assert str(info.value).startswith('application unit "shared": ConfigMap "c": metadata.labels key "a/b/c": '
                                      "a qualified name must consist of")


#: Kubernetes' texts (IsValidLabelValue, IsQualifiedName, IsDNS1123Subdomain), as the API server words them.
LABEL_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART_TEXT = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
PREFIX_TEXT = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("labels", "problem"),
    [
        ({"app": "web\n"}, r'metadata.labels[app] "web\n": ' + LABEL_VALUE_TEXT),
        ({"app\n": "web"}, r'metadata.labels key "app\n": ' + NAME_PART_TEXT),
        ({"example.com/app\n": "web"}, r'metadata.labels key "example.com/app\n": ' + NAME_PART_TEXT),
        ({"example.com\n/app": "web"}, r'metadata.labels key "example.com\n/app": ' + PREFIX_TEXT),
    ],
)
def test_a_trailing_newline_is_refused_in_label_values_and_keys(labels: dict[str, str], problem: str) -> None:
    # Go's "$" matches only at the very end, so the API server refuses these (test_name_limits.py asks it).
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": labels}}
    component = {"name": "c", "type": "passthrough", "properties": {"object": config_map}}
    assert refusal([component]) == f'component "c": ConfigMap "c": {problem}'


def test_the_same_labels_without_the_newline_pass() -> None:
    labels = {"app": "web", "example.com/app": "web"}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": labels}}
    objects = run(document([{"name": "c", "type": "passthrough", "properties": {"object": config_map}}],
                           namespace="shop")).objects()
    assert [o["metadata"]["labels"] for o in objects] == [
        {"app": "web", "example.com/app": "web", "oam-operator.dev/component": "c"}
    ]
