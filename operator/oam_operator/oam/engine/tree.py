"""The bundle tree the transform hands back (docs/transform.md#the-bundle-tree, docs/transform.md#printing-the-tree,
docs/transform.md#order-of-objects).

One application bundle, flat or with ordered child groups; no bundle per component and no
delivery settings. Consumers honour: a bundle's own applications before its children, a child
only after the bundles it depends on are ready, deletion in reverse.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.engine.handlers import ComponentConfig, Object


@dataclass
class TreeApplication:
    """A unit of objects: a component's own, a trait's sub-application, or a generated source.

    ``owner`` is the owning component (``None``: the document, e.g. a shared source);
    ``objects`` is filled when the transform generates objects; ``trait`` is the type of the
    trait that added it (set by the transform, for its messages).
    """

    name: str
    namespace: str
    config: ComponentConfig
    owner: str | None = None
    objects: list[Object] = field(default_factory=list)
    trait: str | None = None


@dataclass
class Bundle:
    name: str
    applications: list[TreeApplication] = field(default_factory=list)
    children: list[Bundle] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)

    def walk(self) -> Iterator[Bundle]:
        """This bundle, then its children recursively, in apply order."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class Node:
    name: str
    bundle: Bundle


@dataclass
class Cluster:
    name: str
    node: Node

    def applications(self) -> Iterator[TreeApplication]:
        """Every application in tree order (docs/transform.md#order-of-objects)."""
        for bundle in self.node.bundle.walk():
            yield from bundle.applications

    def objects(self) -> list[Object]:
        return [obj for app in self.applications() for obj in app.objects]


def object_ref(obj: Object) -> str:
    """``<apiVersion> <kind> <namespace>/<name>``, or without namespace for cluster-scoped objects."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    ns = meta.get("namespace")
    where = f"{ns}/{name}" if ns else name
    return f"{obj.get('apiVersion', '')} {obj.get('kind', '')} {where}"


def bundle_document(bundle: Bundle) -> dict[str, Any]:
    return {
        "name": bundle.name,
        "dependsOn": list(bundle.depends_on),
        "applications": [
            {"name": app.name, "owner": app.owner or "", "objects": [object_ref(o) for o in app.objects]}
            for app in bundle.applications
        ],
        "children": [bundle_document(child) for child in bundle.children],
    }


def tree_document(cluster: Cluster) -> dict[str, Any]:
    """The document ``oam-operator build --tree`` prints (docs/transform.md#printing-the-tree)."""
    return {"cluster": cluster.name, "node": cluster.node.name, "bundle": bundle_document(cluster.node.bundle)}
