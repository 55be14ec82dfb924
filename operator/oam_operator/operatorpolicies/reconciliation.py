"""The ``reconciliation`` policy: per-Application ``interval``, ``timeout``, ``retryInterval``, ``suspend``.

The values mean what the spec fields of the same names mean (docs/operator.md#spec-fields) and obey the
same minimums (``interval`` ≥ 30s, ``timeout`` ≥ 10s); ``retryInterval`` (≥ 1s, no spec field)
replaces the error backoff: an Application in ``Error`` (other than ``TransformFailed``, whose
policies were never read) is retried every ``retryInterval``. Setting a value here *and* in the
spec is refused by the operator (``resolve.py``), naming both. One ``reconciliation`` policy
per Application; the values go to ``extensions["oam-operator.dev/reconciliation"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, duration, record_once

TYPE = "reconciliation"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
FIELDS = ("interval", "timeout", "retryInterval", "suspend")
MIN_SECONDS = {"interval": 30.0, "timeout": 10.0, "retryInterval": 1.0}


@dataclass(frozen=True)
class ReconciliationSettings:
    """What one ``reconciliation`` policy set; ``None`` = not set."""

    policy: str
    interval: str | None = None
    timeout: str | None = None
    retry_interval: str | None = None
    suspend: bool | None = None


def _schema() -> Schema:
    return {
        "interval": PropertySchema(
            type="string",
            description="How often a Ready Application is checked for drift (as spec.interval, at least 30s).",
        ),
        "timeout": PropertySchema(
            type="string",
            description="How long processing may take before the Application times out (as spec.timeout, at "
            "least 10s).",
        ),
        "retryInterval": PropertySchema(
            type="string",
            description="Delay between passes of an Application in Error, instead of the error backoff (at "
            "least 1s).",
        ),
        "suspend": PropertySchema(
            type="boolean", description="Stop reconciling the Application (as spec.suspend); deletion proceeds."
        ),
    }


def parse(policy_name: str, props: dict[str, Any]) -> ReconciliationSettings:
    if all(props.get(key) is None for key in FIELDS):
        raise PolicyError(f"at least one of {', '.join(FIELDS)} must be set")
    suspend = props.get("suspend")
    if suspend is not None and not isinstance(suspend, bool):
        raise PolicyError("suspend must be true or false")
    return ReconciliationSettings(
        policy=policy_name,
        interval=duration(props, "interval", MIN_SECONDS["interval"]),
        timeout=duration(props, "timeout", MIN_SECONDS["timeout"]),
        retry_interval=duration(props, "retryInterval", MIN_SECONDS["retryInterval"]),
        suspend=suspend,
    )


def recorded(result: PolicyResult) -> ReconciliationSettings | None:
    raw = result.extensions.get(EXTENSION_KEY)
    if raw is None:
        return None
    return ReconciliationSettings(
        policy=raw["policy"],
        interval=raw.get("interval"),
        timeout=raw.get("timeout"),
        retry_interval=raw.get("retryInterval"),
        suspend=raw.get("suspend"),
    )


class ReconciliationPolicy(BuiltinType):
    """How often and how long the operator reconciles this Application."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        record_once(result, EXTENSION_KEY, TYPE, lambda: _recorded_value(parse(policy.name, policy.properties)))


def _recorded_value(settings: ReconciliationSettings) -> dict[str, Any]:
    value: dict[str, Any] = {"policy": settings.policy}
    for key, field in (("interval", settings.interval), ("timeout", settings.timeout),
                       ("retryInterval", settings.retry_interval), ("suspend", settings.suspend)):
        if field is not None:
            value[key] = field
    return value
