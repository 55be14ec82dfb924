"""Bundles become waves (docs/operator.md#bundles-become-waves).

The transform hands back a bundle tree; the reconciler knows only objects with apply, delete
and purge orders. This module flattens the tree into one object list and encodes the bundle
order into the reconciler's order annotations, overwriting authored values:

- bundles in apply order: the application bundle's own objects (generated sources), then the
  group bundles in tree order; the application bundle is listed only when it has objects;
- within a bundle, the distinct authored apply orders (default 0) are ranked densely and
  offset by the bundle's base; delete orders likewise over the reverse bundle order;
- an authored purge order stays inside its bundle.

Authored orders are honoured on every object; in practice only ``manifests`` and
``passthrough`` objects can carry them (the catalog types write no such annotation).
Authored values are validated with the reconciler's own parser first, so an invalid value
fails with the reconciler's exact text before anything is applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.treecopy import copy_tree
from oam_operator.oam.engine.tree import Bundle, Cluster
from oam_operator.reconciler.annotations import NO_PURGE_ORDER, parse_order
from oam_operator.reconciler.identity import object_key, split_api_version

Object = dict[str, Any]


@dataclass(frozen=True)
class BundlePlan:
    """One bundle in apply order, with the encoded apply-order range of its objects."""

    name: str
    depends_on: tuple[str, ...]
    first_wave: int
    last_wave: int
    object_keys: frozenset[Identity] = field(default_factory=frozenset)

    @property
    def objects(self) -> int:
        return len(self.object_keys)

    def holds_wave(self, wave: int) -> bool:
        return self.first_wave <= wave <= self.last_wave

    def holds(self, group: str, kind: str, namespace: str, name: str, default_namespace: str) -> bool:
        """Whether an inventory item is one of this bundle's desired objects.

        A desired object written without a namespace is recorded by the reconciler either in
        the Application's namespace (namespaced kinds) or with none (cluster-scoped kinds).
        """
        if (group, kind, namespace, name) in self.object_keys:
            return True
        return namespace == default_namespace and (group, kind, "", name) in self.object_keys


@dataclass(frozen=True)
class EncodedTree:
    objects: list[Object]
    bundles: list[BundlePlan]

    def bundle_of_wave(self, wave: int) -> BundlePlan | None:
        return next((b for b in self.bundles if b.holds_wave(wave)), None)


Identity = tuple[str, str, str, str]


def identity_of(obj: Mapping[str, Any]) -> Identity:
    """``(group, kind, namespace as written, name)`` of a desired object."""
    api_version = obj.get("apiVersion")
    group, _ = split_api_version(api_version) if isinstance(api_version, str) else ("", "")
    meta = obj.get("metadata") or {}
    return group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def _key(obj: Mapping[str, Any]) -> str:
    api_version = obj.get("apiVersion")
    group, version = split_api_version(api_version) if isinstance(api_version, str) else ("", "")
    meta = obj.get("metadata") or {}
    kind, namespace, name = str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))
    return object_key(group, version, kind, namespace, name)


def _bundles_in_apply_order(cluster: Cluster) -> list[tuple[Bundle, list[Object]]]:
    root = cluster.node.bundle
    ordered: list[tuple[Bundle, list[Object]]] = []
    own = [obj for app in root.applications for obj in app.objects]
    if own or not root.children:
        ordered.append((root, own))
    for child in root.children:
        for bundle in child.walk():
            ordered.append((bundle, [obj for app in bundle.applications for obj in app.objects]))
    return ordered


def _authored(obj: Mapping[str, Any], key: str) -> str | None:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(key)
    return None if value is None else str(value)


def encode(cluster: Cluster, domain: str) -> EncodedTree:
    """Flatten ``cluster`` into objects with encoded orders (see the module docstring).

    Raises the reconciler's ``ObjectValidationError`` for an invalid authored order.
    """
    apply_key, delete_key, purge_key = f"{domain}/apply-order", f"{domain}/delete-order", f"{domain}/purge-order"
    bundles = _bundles_in_apply_order(cluster)
    authored: list[list[tuple[Object, int, int, int]]] = []
    for _, objects in bundles:
        parsed = []
        for obj in objects:
            key = _key(obj)
            apply = parse_order(raw, key, apply_key) if (raw := _authored(obj, apply_key)) is not None else 0
            delete = parse_order(raw, key, delete_key) if (raw := _authored(obj, delete_key)) is not None else 0
            purge = (
                parse_order(raw, key, purge_key) if (raw := _authored(obj, purge_key)) is not None else NO_PURGE_ORDER
            )
            parsed.append((obj, apply, delete, purge))
        authored.append(parsed)

    apply_ranks = [sorted({apply for _, apply, _, _ in parsed}) for parsed in authored]
    delete_ranks = [sorted({delete for _, _, delete, _ in parsed}) for parsed in authored]
    apply_bases = _bases([len(ranks) for ranks in apply_ranks])
    delete_bases = list(reversed(_bases([len(ranks) for ranks in reversed(delete_ranks)])))

    encoded_objects: list[Object] = []
    plans: list[BundlePlan] = []
    previous: str | None = None
    for index, ((bundle, _), parsed) in enumerate(zip(bundles, authored, strict=True)):
        base, ranks = apply_bases[index], apply_ranks[index]
        last_wave = base + max(len(ranks) - 1, 0)
        keys = set()
        for obj, apply, delete, purge in parsed:
            out = copy_tree(obj)
            annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[apply_key] = str(base + ranks.index(apply))
            annotations[delete_key] = str(delete_bases[index] + delete_ranks[index].index(delete))
            if purge == NO_PURGE_ORDER:
                annotations.pop(purge_key, None)
            else:
                below = [rank for rank, order in enumerate(ranks) if order <= purge]
                annotations[purge_key] = str(min(base + below[-1], last_wave) if below else base - 1)
            encoded_objects.append(out)
            keys.add(identity_of(out))
        depends_on = (previous,) if previous is not None else ()
        plans.append(BundlePlan(bundle.name, depends_on, base, last_wave, frozenset(keys)))
        previous = bundle.name
    return EncodedTree(encoded_objects, plans)


def _bases(sizes: Sequence[int]) -> list[int]:
    bases, next_base = [], 0
    for size in sizes:
        bases.append(next_base)
        next_base += size
    return bases
