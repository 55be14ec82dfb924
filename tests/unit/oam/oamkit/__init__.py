"""Helpers shared by the transform's unit tests: build documents, run the transform, summarise trees."""

from __future__ import annotations

from typing import Any

import yaml

from oam_operator.oam import (
    Application,
    Bundle,
    TransformContext,
    Transformer,
    TransformResult,
    new_builtin_transformer,
    parse_application,
)

OURS = "oam-operator.dev/v1alpha1"
LAUNCHER = "launcher.gokure.dev/v1alpha1"


def cm(name: str, **extra: Any) -> dict[str, Any]:
    """A passthrough component emitting one ConfigMap."""
    comp: dict[str, Any] = {
        "name": name,
        "type": "passthrough",
        "properties": {"object": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}},
    }
    comp.update(extra)
    return comp


def tiered(name: str, tier: str, domain: str = "oam-operator.dev") -> dict[str, Any]:
    return cm(name, annotations={f"{domain}/tier": tier})


def dep(name: str, *rules: tuple[str, list[str]]) -> dict[str, Any]:
    return {
        "name": name,
        "type": "dependency",
        "properties": {"rules": [{"component": c, "dependsOn": list(d)} for c, d in rules]},
    }


def place(name: str, component: str, tier: str) -> dict[str, Any]:
    return {"name": name, "type": "placement", "properties": {"component": component, "tier": tier}}


def document(
    components: list[dict[str, Any]],
    policies: list[dict[str, Any]] | None = None,
    name: str = "app",
    api_version: str = OURS,
    namespace: str | None = None,
) -> str:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    spec: dict[str, Any] = {"components": components}
    if policies is not None:
        spec["policies"] = policies
    return yaml.safe_dump({"apiVersion": api_version, "kind": "Application", "metadata": meta, "spec": spec})


def parse(text: str, transformer: Transformer | None = None) -> Application:
    t = transformer or new_builtin_transformer()
    return parse_application(text, component_types=t.component_types(), trait_types=t.trait_types())


def run(
    text: str, transformer: Transformer | None = None, ctx: TransformContext | None = None, validate: bool = True
) -> TransformResult:
    t = transformer or new_builtin_transformer()
    app = parse(text, t)
    if validate:
        t.validate_authored_properties(app)
    return t.transform(app, ctx or TransformContext())


def summary(bundle: Bundle) -> list[tuple[str, list[str], list[str]]]:
    """``(bundle name, dependsOn, application names)`` for the bundle and its children, in order."""
    return [(b.name, list(b.depends_on), [a.name for a in b.applications]) for b in bundle.walk()]
