"""The ``placement`` policy (docs/transform.md#the-placement-policy): put a component in a tier.

A placement replaces the tier the component's ``<domain>/tier`` annotation names; two
placements of one component must agree.
"""

from __future__ import annotations

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import TIER_ORDER, PolicyResult

TYPE = "placement"


class PlacementPolicy(BuiltinType):
    """Places a component in ``infra``, ``services`` or ``apps``."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return {
            "component": PropertySchema(
                type="string",
                required=True,
                description="Name of the component whose tier classification is being overridden.",
            ),
            "tier": PropertySchema(
                type="string",
                required=True,
                enum=list(TIER_ORDER),
                description="Deployment tier to place the component in, overriding automatic classification.",
            ),
        }

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        component = policy.properties.get("component")
        if not isinstance(component, str) or not component:
            raise PolicyError("missing required property 'component'")
        tier = policy.properties.get("tier")
        if not isinstance(tier, str) or not tier:
            raise PolicyError("missing required property 'tier'")
        if tier not in TIER_ORDER:
            raise PolicyError(unknown_value("tier", tier, TIER_ORDER))
        if component not in components:
            raise PolicyError(f"references unknown component {go_quote(component)}")
        previous = result.tier_overrides.get(component)
        if previous is not None and previous != tier:
            raise PolicyError(
                f"component {go_quote(component)} is already placed in tier {go_quote(previous)} by an earlier "
                f"placement policy, cannot also place it in {go_quote(tier)}"
            )
        result.tier_overrides[component] = tier
