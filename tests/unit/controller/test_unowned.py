"""``unowned_paths`` (controller/service/unowned.py): the fields a desired object sets that the operator's
manager does not own, read from real ``fieldsV1`` shapes."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.unowned import unowned_paths

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "front"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                   "args": ["--port", "80"],
                                                   "ports": [{"containerPort": 80}], "resources": {}}]}}},
}


def owned(image: bool = True, label: bool = True) -> dict[str, Any]:
    """fieldsV1 of the operator's Apply entry, as the API server records it."""
    container: dict[str, Any] = {".": {}, "f:name": {}, "f:args": {},
                                 "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}
    if image:
        container["f:image"] = {}
    return {
        "f:metadata": {"f:labels": {"f:app": {}, "f:tier": {}} if label else {"f:tier": {}}},
        "f:spec": {"f:replicas": {}, "f:selector": {},
                   "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                                  "f:spec": {"f:containers": {'k:{"name":"web"}': container}}}},
    }


def test_a_deployment_applied_as_desired_has_nothing_unowned() -> None:
    assert unowned_paths(DEPLOYMENT, owned()) == []


def test_an_image_taken_by_kubectl_set_image_is_unowned() -> None:
    assert unowned_paths(DEPLOYMENT, owned(image=False)) == ["spec.template.spec.containers[name=web].image"]


def test_a_label_removed_by_hand_is_unowned() -> None:
    assert unowned_paths(DEPLOYMENT, owned(label=False)) == ["metadata.labels.app"]


def test_a_manager_that_owns_nothing_owns_none_of_it() -> None:
    assert unowned_paths(DEPLOYMENT, None) == ["metadata.labels", "spec"]


def test_a_config_maps_data_key_edited_by_hand_is_unowned() -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}}
    assert unowned_paths(desired, {"f:data": {"f:a": {}, "f:b": {}}}) == []
    assert unowned_paths(desired, {"f:data": {"f:a": {}}}) == ["data.b"]


def test_a_list_element_no_longer_owned_is_named() -> None:
    desired = {"spec": {"containers": [{"name": "web"}, {"name": "sidecar"}]}}
    assert unowned_paths(desired, {"f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:name": {}}}}}) \
        == ["spec.containers[name=sidecar]"]


def test_a_set_list_and_an_atomic_list_are_matched_by_value_or_as_a_whole() -> None:
    desired = {"metadata": {"finalizers": ["x"]}, "spec": {"hosts": ["a", "b"], "args": ["--x"]}}
    fields = {"f:spec": {"f:hosts": {'v:"a"': {}, 'v:"b"': {}}, "f:args": {}}}
    assert unowned_paths(desired, fields) == []
    assert unowned_paths(desired, {"f:spec": {"f:hosts": {'v:"a"': {}}, "f:args": {}}}) == ['spec.hosts["b"]']


def test_status_and_identity_are_not_compared() -> None:
    desired = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"},
               "status": {"loadBalancer": {}}}
    assert unowned_paths(desired, {}) == []
