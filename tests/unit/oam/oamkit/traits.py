"""Helpers for the trait tests: documents with one component, profiles, running the transform."""

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
    parse_application,
)
from oam_operator.oam.document.document import CapabilityBinding

NS = "shop"
LAUNCHER = "launcher.gokure.dev/v1alpha1"
OURS = "oam-operator.dev/v1alpha1"


def trait(trait_type: str, **props: Any) -> dict[str, Any]:
    return {"type": trait_type, "properties": props}


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
    t = new_builtin_transformer()
    app = parse_application(text, component_types=t.component_types(), trait_types=t.trait_types())
    if validate:
        t.validate_authored_properties(app)
    return t.transform(app, TransformContext(capabilities=caps or {}, component_label=label))


def objects(text: str, caps: dict[str, CapabilityBinding] | None = None, **kw: Any) -> list[dict[str, Any]]:
    return run(text, caps, **kw).objects()


def kinds(text: str, caps: dict[str, CapabilityBinding] | None = None) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects(text, caps)]


def find(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    for obj in objs:
        if obj["kind"] == kind and (name is None or obj["metadata"]["name"] == name):
            return obj
    raise AssertionError(f"no {kind} {name or ''} in {[(o['kind'], o['metadata']['name']) for o in objs]}")


def error(text: str, caps: dict[str, CapabilityBinding] | None = None, *, validate: bool = False) -> str:
    """The transform's message (authored-property validation off unless asked: handler messages)."""
    with pytest.raises(OamError) as info:
        run(text, caps, validate=validate)
    return str(info.value)


def trait_error(component: dict[str, Any], caps: dict[str, CapabilityBinding] | None = None) -> str:
    return error(document(component), caps)
