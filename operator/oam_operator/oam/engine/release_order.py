"""The order ``oam-operator build`` prints objects in: kurel's release order
(docs/architecture.md#output-order-of-oam-operator-build).

The bundle tree (``build --tree``, and the operator's apply waves) keeps its own order: a
component's objects followed by its traits' objects, a generated source first, and tiers only
where an annotation or a ``placement`` policy puts a component (no default tier). kurel's
released build prints the same objects in another order, and ``build``'s flat output is meant
to be byte-compatible with ``kurel build`` for the same document, so the flat output follows
kurel:

- generated sources shared by several components first;
- then the components grouped by tier in the order infra, services, apps — a component's tier
  is its ``<domain>/tier`` annotation, else kurel's default for its type (``daemonset`` infra,
  ``postgresql`` services, any other type apps);
- in each tier, every component's own objects in document order (a source used by that
  component alone right before them, where kurel's component emits it), then the objects of
  every trait of those components.

The default tiers here only order the printed documents; they create no bundle and no wave.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from oam_operator.oam.document.document import Component
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.engine.transformer import TransformResult
from oam_operator.oam.engine.tree import TreeApplication

DEFAULT_PRINT_TIERS = {"daemonset": "infra", "postgresql": "services"}
PRINT_TIERS = ("infra", "services", "apps")


def release_order(result: TransformResult, components: Sequence[Component], domain: str) -> list[Object]:
    """Every object of ``result`` in kurel's release order (module docstring); ``domain`` names the tier key.

    An Application ordered by a ``dependency`` policy into several groups (which kurel cannot
    build) keeps its group order, each group printed as kurel prints a bundle: components, then
    traits.
    """
    root = result.cluster.node.bundle
    sources = list(root.applications) if root.children else []
    groups = [bundle for bundle in root.walk() if not (bundle is root and sources)]
    shared: list[TreeApplication] = [s for s in sources if s.owner is None]
    own_sources: dict[str, list[TreeApplication]] = {}
    for source in sources:
        if source.owner is not None:
            own_sources.setdefault(source.owner, []).append(source)
    # A dependency policy orders groups <app>-00, <app>-01, …; one group alone orders nothing
    # (a generated source also makes a root and one group).
    numbered = sum(1 for bundle in groups if bundle is not root and NUMBERED_GROUP.search(bundle.name)) > 1
    position = {c.name: i for i, c in enumerate(components)}
    ordered = list(shared)
    if numbered:
        for bundle in groups:
            own, traits = _split(bundle.applications, own_sources, shared=ordered)
            names = sorted(own, key=lambda n: position.get(n, len(position)))
            ordered += [a for n in names for a in own[n]] + [a for n in names for a in traits.get(n, [])]
    else:
        tier_key = f"{domain}/tier"
        tiers = {c.name: c.annotations.get(tier_key) or DEFAULT_PRINT_TIERS.get(c.type, "apps") for c in components}
        own, traits = _split((a for bundle in groups for a in bundle.applications), own_sources, shared=ordered)
        for tier in PRINT_TIERS:
            members = (n for n in own if tiers.get(n, "apps") == tier)
            names = sorted(members, key=lambda n: position.get(n, len(position)))
            ordered += [a for n in names for a in own[n]] + [a for n in names for a in traits.get(n, [])]
        placed = {id(a) for a in ordered}
        leftovers = [a for group in (*own.values(), *traits.values()) for a in group]
        ordered += [a for a in leftovers if id(a) not in placed]  # defensive: nothing is ever dropped
    return [obj for tree_app in ordered for obj in tree_app.objects]


NUMBERED_GROUP = re.compile(r"-[0-9]+$")  # <app>-00, <app>-01, …: the groups of a dependency policy


def _split(
    applications: Iterable[TreeApplication],
    own_sources: dict[str, list[TreeApplication]],
    shared: list[TreeApplication],
) -> tuple[dict[str, list[TreeApplication]], dict[str, list[TreeApplication]]]:
    """Per owner: its own applications (a source used by it alone first) and its traits' applications."""
    own: dict[str, list[TreeApplication]] = {}
    traits: dict[str, list[TreeApplication]] = {}
    for tree_app in applications:
        owner = tree_app.owner
        if owner is None:
            shared.append(tree_app)
        elif tree_app.name == owner and owner not in traits:
            own.setdefault(owner, []).extend(own_sources.get(owner, []))
            own[owner].append(tree_app)
            traits[owner] = []
        else:
            traits.setdefault(owner, []).append(tree_app)
    return own, traits
