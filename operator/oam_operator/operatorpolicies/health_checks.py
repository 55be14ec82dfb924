"""The ``health-checks`` policy: extra objects that must be Ready before the Application counts Ready.

``properties.checks: [{apiVersion, kind, name, namespace?}]`` — objects the Application does not
own (a shared ingress controller, a database another team runs). Once every object of the
Application is ready, the operator reads each named object and asks the reconciler's status
analyzer (kstatus plus status hints); until all are ``Current`` the Application stays
``Processing`` with a message naming the ones not ready. A missing ``namespace`` means the
Application's own (ignored for cluster-scoped kinds); another namespace needs the same
operator setting as cross-namespace ``app-dependency`` references. Several policies accumulate;
the checks go to ``extensions["oam-operator.dev/health-checks"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map, optional_namespace, required_list, required_string

TYPE = "health-checks"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
_API_VERSION = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]+$")


@dataclass(frozen=True)
class HealthCheck:
    """One object to check; ``namespace`` is ``""`` when the policy left it out."""

    policy: str
    api_version: str
    kind: str
    name: str
    namespace: str


def _schema() -> Schema:
    check = PropertySchema(
        type="object",
        description="An object that must be Ready (kstatus Current) before the Application counts Ready.",
        properties={
            "apiVersion": PropertySchema(type="string", required=True, description="API version, e.g. apps/v1."),
            "kind": PropertySchema(type="string", required=True, description="Kind, e.g. Deployment."),
            "name": PropertySchema(type="string", required=True, description="Name of the object."),
            "namespace": PropertySchema(
                type="string",
                description="Namespace of the object; defaults to the Application's namespace, ignored for "
                "cluster-scoped kinds.",
            ),
        },
    )
    return {
        "checks": PropertySchema(
            type="array", required=True, description="Objects that must be Ready besides the Application's own.",
            items=check,
        )
    }


def parse(policy_name: str, props: dict[str, Any]) -> list[HealthCheck]:
    checks: list[HealthCheck] = []
    for i, raw in enumerate(required_list(props, "checks")):
        where = f"checks[{i}]"
        entry = entry_map(raw, where)
        api_version = required_string(entry, "apiVersion", where)
        if not _API_VERSION.fullmatch(api_version):
            raise PolicyError(
                f"{where}.apiVersion {go_quote(api_version)} is not an API version (version or group/version)"
            )
        kind = required_string(entry, "kind", where)
        name = required_string(entry, "name", where)
        if "/" in name:
            raise PolicyError(f"{where}.name {go_quote(name)} must not contain '/'")
        checks.append(HealthCheck(policy_name, api_version, kind, name, optional_namespace(entry, where)))
    return checks


def recorded(result: PolicyResult) -> list[HealthCheck]:
    return [
        HealthCheck(e["policy"], e["apiVersion"], e["kind"], e["name"], e["namespace"])
        for e in result.extensions.get(EXTENSION_KEY) or []
    ]


class HealthChecksPolicy(BuiltinType):
    """Objects outside the Application whose readiness its own readiness includes."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        checks = parse(policy.name, policy.properties)
        entries: list[dict[str, str]] = result.extensions.setdefault(EXTENSION_KEY, [])
        seen = {(e["apiVersion"], e["kind"], e["namespace"], e["name"]) for e in entries}
        for check in checks:
            key = (check.api_version, check.kind, check.namespace, check.name)
            if key in seen:
                continue
            seen.add(key)
            entries.append({"policy": check.policy, "apiVersion": check.api_version, "kind": check.kind,
                            "name": check.name, "namespace": check.namespace})
