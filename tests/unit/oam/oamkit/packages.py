"""The builders of the helm/oci/postgresql and package-parameter tests: documents, runs, errors."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from oam_operator.oam import (
    OamError,
    TransformContext,
    TransformResult,
)
from oamkit import LAUNCHER, OURS, place
from oamkit import run as transform

LABEL = "oam-operator.dev/component"


def comp(name: str, type_name: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "type": type_name, "properties": properties}


def cm(name: str, **extra: Any) -> dict[str, Any]:
    """A passthrough component emitting one ConfigMap."""
    out: dict[str, Any] = comp(name, "passthrough", object={"apiVersion": "v1", "kind": "ConfigMap"})
    out.update(extra)
    return out


def helm(name: str, url: str = "https://charts.example.com", chart: str = "app", **props: Any) -> dict[str, Any]:
    return comp(name, "helm", source={"url": url}, chart=chart, **props)


def oci(
    name: str, url: str = "oci://registry.example.com/org/platform", version: str = "1.4.0", **props: Any
) -> dict[str, Any]:
    return comp(name, "oci", source={"url": url}, version=version, **props)



def dep(name: str, component: str, depends_on: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "type": "dependency",
        "properties": {"rules": [{"component": component, "dependsOn": depends_on}]},
    }


def document(components: list[dict[str, Any]], policies: list[dict[str, Any]] | None = None, name: str = "app") -> str:
    spec: dict[str, Any] = {"components": components}
    if policies:
        spec["policies"] = policies
    return yaml.safe_dump({"apiVersion": OURS, "kind": "Application", "metadata": {"name": name}, "spec": spec})


def run(text: str, ctx: TransformContext | None = None, validate: bool = True) -> TransformResult:
    return transform(text, ctx=ctx or TransformContext(component_label=False), validate=validate)


def objects(*components: dict[str, Any], ctx: TransformContext | None = None) -> list[dict[str, Any]]:
    return run(document(list(components)), ctx).objects()


def error(text: str, ctx: TransformContext | None = None, validate: bool = True) -> str:
    with pytest.raises(OamError) as info:
        run(text, ctx, validate)
    return str(info.value)


def summary(result: TransformResult) -> list[tuple[str, list[str], list[tuple[str, str | None]]]]:
    """``(bundle, dependsOn, [(application, owner)])`` for every bundle in apply order."""
    return [
        (b.name, list(b.depends_on), [(a.name, a.owner) for a in b.applications])
        for b in result.cluster.node.bundle.walk()
    ]


def kinds(result: TransformResult) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in result.objects()]


__all__ = ["LABEL", "LAUNCHER", "OURS", "cm", "comp", "dep", "document", "error", "helm", "kinds", "objects", "oci", "place", "run", "summary"]
