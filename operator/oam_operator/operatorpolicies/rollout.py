"""The ``rollout`` policy: how a topology's clusters take a new revision (docs/multicluster.md#rollout).

``maxConcurrent`` (a count, or a percentage of the selected clusters, rounded up, at least one
cluster) sets the size of each group; the clusters are taken in the order of their value of
the label ``orderBy`` (absent values last), then by name. Each group is updated only once every
cluster of the groups before it is Ready. ``onFailure`` says what happens when a cluster fails:
``revert`` (the default) returns the clusters already changed to the last revision that was
Ready there, ``halt`` leaves them as they are; either way the clusters not reached yet get no
write of the new revision. One rollout policy per Application, beside a topology policy; the
value goes to ``extensions["oam-operator.dev/rollout"]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, record_once

TYPE = "rollout"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
ON_FAILURE = ("revert", "halt")
_PERCENT = re.compile(r"^([0-9]+)%$")


@dataclass(frozen=True)
class Rollout:
    """Groups of at most ``count`` clusters (or ``percent`` of them), ordered by a label."""

    policy: str
    count: int | None = None
    percent: int | None = None
    order_by: str = ""
    on_failure: str = "revert"

    def group_size(self, clusters: int) -> int:
        if self.percent is not None:
            return max(1, math.ceil(clusters * self.percent / 100))
        return max(1, self.count or 1)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"policy": self.policy, "onFailure": self.on_failure,
                                 "maxConcurrent": f"{self.percent}%" if self.percent is not None else self.count}
        if self.order_by:
            value["orderBy"] = self.order_by
        return value

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Rollout:
        return parse(str(raw["policy"]), dict(raw))


def _schema() -> Schema:
    return {
        "maxConcurrent": PropertySchema(
            required=True,
            description="Clusters updated at once: a count (at least 1) or a percentage of the selected clusters "
            "such as 25% (rounded up, at least one cluster).",
        ),
        "orderBy": PropertySchema(type="string",
                                  description="A label key: clusters are taken in the order of its values, then by "
                                  "name."),
        "onFailure": PropertySchema(
            type="string", enum=list(ON_FAILURE),
            description="When a cluster fails: revert (the clusters changed return to the last revision that was "
            "Ready there) or halt (they stay as they are).",
        ),
    }


def parse(policy_name: str, props: dict[str, Any]) -> Rollout:
    raw = props.get("maxConcurrent")
    count = percent = None
    if isinstance(raw, bool) or raw is None:
        raise PolicyError("maxConcurrent must be a count such as 2 or a percentage such as 25%")
    if isinstance(raw, int):
        if raw < 1:
            raise PolicyError(f"maxConcurrent must be at least 1, not {raw}")
        count = raw
    elif isinstance(raw, str) and (found := _PERCENT.fullmatch(raw)):
        percent = int(found.group(1))
        if not 1 <= percent <= 100:
            raise PolicyError(f"maxConcurrent {go_quote(raw)} must be a percentage from 1% to 100%")
    else:
        shown = go_quote(raw) if isinstance(raw, str) else repr(raw)
        raise PolicyError(f"maxConcurrent {shown} is not a count such as 2 or a percentage such as 25%")
    order_by = props.get("orderBy") or ""
    if not isinstance(order_by, str):
        raise PolicyError("orderBy must be a label key")
    on_failure = props.get("onFailure") or "revert"
    if on_failure not in ON_FAILURE:
        raise PolicyError(f"onFailure {go_quote(str(on_failure))} is not one of {', '.join(ON_FAILURE)}")
    return Rollout(policy_name, count, percent, order_by, on_failure)


def recorded(result: PolicyResult) -> Rollout | None:
    raw = result.extensions.get(EXTENSION_KEY)
    return None if raw is None else Rollout.from_json(raw)


class RolloutPolicy(BuiltinType):
    """How the clusters of a topology take a new revision: in groups, halting at the first failure."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        record_once(result, EXTENSION_KEY, TYPE, lambda: parse(policy.name, policy.properties).to_json())
