"""The ``rollback`` policy: a failed revision returns to the last good one (docs/operator.md#automatic-rollback).

``onFailure: true`` (the default) turns it on: a new revision that ends in ``Error``, or is not
Ready within the Application's timeout, is rolled back to the last revision that was Ready,
read from the revision history (ControllerRevisions), and its spec's digest is remembered in
``status.rolledBack`` so that it is not applied again until the spec changes. ``false`` keeps
the policy written down but off. One rollback policy per Application; the value goes to
``extensions["oam-operator.dev/rollback"]``. It needs a revision history that keeps the good
revision beside the failed one: ``spec.revisionHistoryLimit`` of at least 2 (``resolve.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, record_once

TYPE = "rollback"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
MIN_HISTORY = 2  # the failed revision and the good one it returns to


@dataclass(frozen=True)
class Rollback:
    """Whether a failed revision is rolled back (``on_failure``)."""

    policy: str
    on_failure: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "onFailure": self.on_failure}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Rollback:
        return cls(str(raw["policy"]), bool(raw.get("onFailure", True)))


def parse(policy_name: str, props: dict[str, Any]) -> Rollback:
    on_failure = props.get("onFailure", True)
    if not isinstance(on_failure, bool):
        raise PolicyError(f"onFailure must be true or false, not {on_failure!r}")
    return Rollback(policy_name, on_failure)


def recorded(result: PolicyResult) -> Rollback | None:
    raw = result.extensions.get(EXTENSION_KEY)
    return None if raw is None else Rollback.from_json(raw)


def history_refusal(policy: Rollback, spec: Mapping[str, Any]) -> str | None:
    """The refusal of a rollback policy whose revision history cannot hold the revision it returns to."""
    limit = spec.get("revisionHistoryLimit")
    if not policy.on_failure or not isinstance(limit, int) or isinstance(limit, bool) or limit >= MIN_HISTORY:
        return None
    return (f'policy "{policy.policy}": a rollback policy restores a recorded revision, and '
            f"spec.revisionHistoryLimit is {limit}; set it to at least {MIN_HISTORY}")


class RollbackPolicy(BuiltinType):
    """Whether a failed revision is rolled back to the last Ready one."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return {
            "onFailure": PropertySchema(
                type="boolean",
                description="Roll a revision that ends in Error or is not Ready within the timeout back to the last "
                "revision that was Ready (default true).",
            ),
        }

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        record_once(result, EXTENSION_KEY, TYPE, lambda: parse(policy.name, policy.properties).to_json())
