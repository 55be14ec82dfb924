"""What policies produce: the ``PolicyResult`` (docs/transform.md#policy-handlers) and the tier order
(docs/transform.md#tiers)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Tiers, deployed in this order.
TIER_ORDER: tuple[str, ...] = ("infra", "services", "apps")


@dataclass
class PolicyResult:
    """Accumulated by the policy handlers of one transform; a policy builds no objects.

    ``app_depends_on`` and ``extensions`` are never read by the transform: they belong to
    consumers that register their own handlers (a delivery layer, a multi-application
    orchestrator) and read them back from ``TransformResult.policy_result``.
    """

    tier_overrides: dict[str, str] = field(default_factory=dict)
    dependencies: dict[str, list[str]] = field(default_factory=dict)
    app_depends_on: list[str] = field(default_factory=list)
    extensions: dict[str, Any] = field(default_factory=dict)
    consumed_capabilities: list[str] | None = None

    def record_capabilities(self, keys: Iterable[str]) -> None:
        """Add capability keys actually resolved (sorted, de-duplicated; ``None`` when none)."""
        merged = set(self.consumed_capabilities or ()) | set(keys)
        self.consumed_capabilities = sorted(merged) if merged else None


class ComponentNames(list[str]):
    """The component names handed to policy handlers: a list (document order) with O(1) ``in``.

    Handlers must not mutate it; the transform builds a fresh one per transform.
    """

    def __init__(self, names: Iterable[str]) -> None:
        super().__init__(names)
        self._members = frozenset(self)

    def __contains__(self, item: object) -> bool:
        return item in self._members
