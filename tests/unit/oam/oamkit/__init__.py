"""The one helper kit of the transform's unit tests (tests/unit/oam).

This module holds what every oam test shares: the API versions, the repository and ``../shared``
paths, the parse + validate + transform run, and readers of generated objects (``find``,
``pod_spec``, ``main_container``, ``kinds_of``); plus the ConfigMap/policy document builders of
the engine tests. Its modules add the document builders of one concept each, with the
signatures their tests were written against: ``workloads`` (one-component workload documents),
``traits`` (components with traits), ``profiles`` (ClusterProfile capabilities, library and
CLI), ``packages`` (helm/oci/postgresql and package parameters) and ``kurel`` (the kurel
oracle corpus runner, also used by bench/oracle_agreement.py).
"""

from __future__ import annotations

from pathlib import Path
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
REPO_ROOT = Path(__file__).resolve().parents[4]
SHARED = (REPO_ROOT / ".." / "shared").resolve()  # kurel golden and oracle corpora, beside the worktree


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
    """Parse, validate the authored properties (unless ``validate=False``) and transform ``text``."""
    t = transformer or new_builtin_transformer()
    app = parse(text, t)
    if validate:
        t.validate_authored_properties(app)
    return t.transform(app, ctx or TransformContext())


def find(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    for obj in objs:
        if obj["kind"] == kind and (name is None or obj["metadata"]["name"] == name):
            return obj
    raise AssertionError(f"no {kind} {name or ''} in {[(o['kind'], o['metadata']['name']) for o in objs]}")


def kinds_of(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objs]


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "CronJob":
        spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    template_spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return template_spec


def main_container(obj: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = pod_spec(obj)["containers"][0]
    return container


def trait(trait_type: str, **props: Any) -> dict[str, Any]:
    return {"type": trait_type, "properties": props}


def summary(bundle: Bundle) -> list[tuple[str, list[str], list[str]]]:
    """``(bundle name, dependsOn, application names)`` for the bundle and its children, in order."""
    return [(b.name, list(b.depends_on), [a.name for a in b.applications]) for b in bundle.walk()]
