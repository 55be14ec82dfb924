"""Built-in policy handlers (docs/transform.md#policies): ``dependency`` and ``placement``."""

from __future__ import annotations

from oam_operator.oam.policies.dependency import DependencyPolicy
from oam_operator.oam.policies.placement import PlacementPolicy
from oam_operator.oam.policies.result import TIER_ORDER, PolicyResult

__all__ = ["TIER_ORDER", "DependencyPolicy", "PlacementPolicy", "PolicyResult"]
