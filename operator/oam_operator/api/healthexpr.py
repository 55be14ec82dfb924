"""The shape of one health rule (docs/health.md#the-format), shared by ComponentDefinition,
TraitDefinition and ClusterProfile: Flux's ``healthCheckExprs`` entry, field for field.

Only the shape is declared; the expressions are compiled by ``oam/health`` (at admission, and
when the operator reads them), which refuses one that does not compile with its position.
"""

from __future__ import annotations

from pydantic import Field

from .meta import ApiModel

__all__ = ["HealthExpression"]


class HealthExpression(ApiModel):
    """CEL expressions over an object's metadata, spec and status that say how healthy it is."""

    api_version: str = Field(min_length=1, description="API version of the kind, e.g. cert-manager.io/v1 (only its "
                                                       "group is matched).")
    kind: str = Field(min_length=1, description="Kind, e.g. Certificate.")
    current: str = Field(min_length=1, description="True when the object is ready.")
    in_progress: str | None = Field(default=None, description="True while the object is still progressing (evaluated "
                                                              "first).")
    failed: str | None = Field(default=None, description="True when the object failed: its Application becomes Error "
                                                         "(evaluated second).")
