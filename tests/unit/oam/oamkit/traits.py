"""The trait tests' builders: documents with one component, profiles, running the transform."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from oam_operator.oam import (
    ClusterProfile,
    OamError,
    TransformContext,
    TransformResult,
    new_builtin_transformer,
)
from oam_operator.oam.document.document import CapabilityBinding
from oamkit import LAUNCHER, OURS, find, trait
from oamkit import run as transform

NS = "shop"



def webservice(name: str = "web", *traits: dict[str, Any], **props: Any) -> dict[str, Any]:
    properties = {"image": "nginx:1.25", **props}
    return {"name": name, "type": "webservice", "properties": properties, "traits": list(traits)}


def worker(name: str = "jobs", *traits: dict[str, Any], **props: Any) -> dict[str, Any]:
    properties = {"image": "busybox:1.36", **props}
    return {"name": name, "type": "worker", "properties": properties, "traits": list(traits)}


def deployment_object(name: str = "app", containers: int = 1) -> dict[str, Any]:
    """A bare Deployment as a passthrough/manifests author would write it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": f"c{i}", "image": "nginx:1.25"} for i in range(containers)]},
            },
        },
    }


def passthrough(name: str, obj: dict[str, Any], *traits: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "type": "passthrough", "properties": {"object": obj}, "traits": list(traits)}


def document(*components: dict[str, Any], name: str = "app", policies: list[dict[str, Any]] | None = None) -> str:
    spec: dict[str, Any] = {"components": list(components)}
    if policies:
        spec["policies"] = policies
    doc = {"apiVersion": OURS, "kind": "Application", "metadata": {"name": name, "namespace": NS}, "spec": spec}
    return yaml.safe_dump(doc, sort_keys=False)


def capabilities(**bindings: dict[str, Any]) -> dict[str, CapabilityBinding]:
    """Evaluated capabilities; keyword ``expose__gw`` stands for the key ``expose.gw``."""
    raw = {key.replace("__", "."): CapabilityBinding(copy.deepcopy(r)) for key, r in bindings.items()}
    profile = ClusterProfile(OURS, "ClusterProfile", "test", capabilities=raw)
    return new_builtin_transformer().evaluate_profile(profile).capabilities


def run(
    text: str,
    caps: dict[str, CapabilityBinding] | None = None,
    *,
    validate: bool = True,
    label: bool = False,
) -> TransformResult:
    return transform(text, ctx=TransformContext(capabilities=caps or {}, component_label=label), validate=validate)


def objects(text: str, caps: dict[str, CapabilityBinding] | None = None, **kw: Any) -> list[dict[str, Any]]:
    return run(text, caps, **kw).objects()


def kinds(text: str, caps: dict[str, CapabilityBinding] | None = None) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects(text, caps)]



def error(text: str, caps: dict[str, CapabilityBinding] | None = None, *, validate: bool = False) -> str:
    """The transform's message (authored-property validation off unless asked: handler messages)."""
    with pytest.raises(OamError) as info:
        run(text, caps, validate=validate)
    return str(info.value)


def trait_error(component: dict[str, Any], caps: dict[str, CapabilityBinding] | None = None) -> str:
    return error(document(component), caps)


__all__ = ["LAUNCHER", "NS", "OURS", "capabilities", "deployment_object", "document", "error", "find", "kinds", "objects", "passthrough", "run", "trait", "trait_error", "webservice", "worker"]
