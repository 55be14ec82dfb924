"""The workload component tests' builders: one-component documents, their objects and errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from oam_operator.oam import (
    OamError,
    TransformContext,
    TransformResult,
)
from oam_operator.oam.engine.handlers import ComponentConfig
from oamkit import kinds_of as kinds
from oamkit import main_container, pod_spec
from oamkit import run as transform

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
    ctx = TransformContext(component_label=label)
    return transform(document(type_name, props, name, traits), ctx=ctx, validate=validate)


def objects(type_name: str, props: dict[str, Any], name: str = "c", **kw: Any) -> list[dict[str, Any]]:
    return run(type_name, props, name, **kw).objects()



def config(type_name: str, props: dict[str, Any], name: str = "c") -> ComponentConfig:
    """The built config of the component (what traits read service ports from)."""
    return next(run(type_name, props, name).cluster.applications()).config


def error(type_name: str, props: dict[str, Any], name: str = "c", validate: bool = True) -> str:
    """The message of the first error; ``validate=False`` is a library caller skipping
    docs/transform.md#validating-authored-properties."""
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


__all__ = ["IMAGE", "LABEL", "NS", "RESOURCES", "config", "document", "error", "handler_error", "kinds", "main_container", "objects", "pod_spec", "run", "with_image"]
