"""Helpers for the workload component tests: one-component documents, their objects and errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from oam_operator.oam import (
    OamError,
    TransformContext,
    TransformResult,
    new_builtin_transformer,
    parse_application,
)
from oam_operator.oam.engine.handlers import ComponentConfig

IMAGE = "ghcr.io/example/app:v1.0.0"
NS = "ns"
LABEL = "oam-operator.dev/component"
RESOURCES = {"limits": {"memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}}


def document(type_name: str, props: dict[str, Any], name: str = "c", traits: list[Any] | None = None) -> str:
    component: dict[str, Any] = {"name": name, "type": type_name, "properties": props}
    if traits:
        component["traits"] = traits
    return yaml.safe_dump(
        {
            "apiVersion": "oam-operator.dev/v1alpha1",
            "kind": "Application",
            "metadata": {"name": "app", "namespace": NS},
            "spec": {"components": [component]},
        }
    )


def run(
    type_name: str,
    props: dict[str, Any],
    name: str = "c",
    validate: bool = True,
    label: bool = False,
    traits: list[Any] | None = None,
) -> TransformResult:
    transformer = new_builtin_transformer()
    app = parse_application(
        document(type_name, props, name, traits),
        component_types=transformer.component_types(),
        trait_types=transformer.trait_types(),
    )
    if validate:
        transformer.validate_authored_properties(app)
    return transformer.transform(app, TransformContext(component_label=label))


def objects(type_name: str, props: dict[str, Any], name: str = "c", **kw: Any) -> list[dict[str, Any]]:
    return run(type_name, props, name, **kw).objects()


def kinds(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objs]


def config(type_name: str, props: dict[str, Any], name: str = "c") -> ComponentConfig:
    """The built config of the component (what traits read service ports from)."""
    return next(run(type_name, props, name).cluster.applications()).config


def error(type_name: str, props: dict[str, Any], name: str = "c", validate: bool = True) -> str:
    """The message of the first error; ``validate=False`` is a library caller skipping §4.3."""
    with pytest.raises(OamError) as info:
        run(type_name, props, name, validate=validate)
    return str(info.value)


def handler_error(type_name: str, props: dict[str, Any], name: str = "c") -> str:
    """The handler's own message (no schema check), without the ``component "<c>": `` wrapping."""
    message = error(type_name, props, name, validate=False)
    prefix = f'component "{name}": '
    assert message.startswith(prefix), message
    return message[len(prefix) :]


def with_image(**props: Any) -> dict[str, Any]:
    return {"image": IMAGE, **copy.deepcopy(props)}


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "CronJob":
        spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    template_spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return template_spec


def main_container(obj: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = pod_spec(obj)["containers"][0]
    return container
