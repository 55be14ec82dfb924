"""The ``health-checks`` policy: extra objects that must be Ready before the Application counts Ready.

``properties.checks: [{apiVersion, kind, name, namespace?}]`` — objects the Application does not
own (a shared ingress controller, a database another team runs). Once every object of the
Application is ready, the operator reads each named object and asks the reconciler's status
analyzer (kstatus plus status hints); until all are ``Current`` the Application stays
``Processing`` with a message naming the ones not ready. A missing ``namespace`` means the
Application's own (ignored for cluster-scoped kinds); another namespace needs the same
operator setting as cross-namespace ``app-dependency`` references. Several policies accumulate;
the checks go to ``extensions["oam-operator.dev/health-checks"]``.

``properties.expressions: [{apiVersion, kind, current, inProgress?, failed?}]`` — health by
expression (docs/health.md) for the kinds of the Application's own objects (and of the checked
ones): the most specific layer, above definitions, ClusterProfiles and the library. They are
compiled here, so a syntax error is a transform refusal with its position; two rules for one kind
across the Application's policies are refused. They go to
``extensions["oam-operator.dev/health-expressions"]`` with their policy's name.
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
from oam_operator.oam.health.rules import HealthRule, HealthRuleError, read_rules
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map, optional_namespace, required_list, required_string

TYPE = "health-checks"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
EXPRESSIONS_KEY = EXTENSION_PREFIX + "health-expressions"
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
    expression = PropertySchema(
        type="object",
        description="Health by expression for one kind, in the shape of Flux's healthCheckExprs (docs/health.md).",
        properties={
            "apiVersion": PropertySchema(type="string", required=True, description="API version of the kind, "
                                         "e.g. cert-manager.io/v1 (the version is not matched)."),
            "kind": PropertySchema(type="string", required=True, description="Kind, e.g. Certificate."),
            "current": PropertySchema(type="string", required=True,
                                      description="CEL over metadata, spec, status: true when the object is ready."),
            "inProgress": PropertySchema(type="string", description="CEL: true while the object is still progressing "
                                                                    "(evaluated first)."),
            "failed": PropertySchema(type="string", description="CEL: true when the object failed; the Application "
                                                                "becomes Error (evaluated second)."),
        },
    )
    return {
        "checks": PropertySchema(
            type="array", description="Objects that must be Ready besides the Application's own.", items=check,
        ),
        "expressions": PropertySchema(
            type="array", description="Health rules by kind for the Application's objects (docs/health.md).",
            items=expression,
        ),
    }


def parse(policy_name: str, props: dict[str, Any]) -> list[HealthCheck]:
    checks: list[HealthCheck] = []
    if props.get("checks") is None and props.get("expressions") is not None:
        return checks
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


def source_of(policy_name: str) -> str:
    """How messages name a rule of this policy (docs/health.md#sources)."""
    return f"policy {go_quote(policy_name)}"


def parse_expressions(policy_name: str, props: dict[str, Any]) -> list[HealthRule]:
    raw = props.get("expressions")
    if raw is not None and (not isinstance(raw, list) or not raw):
        raise PolicyError("property 'expressions' must be a non-empty list")
    try:
        return read_rules(raw, "expressions", source_of(policy_name))
    except HealthRuleError as error:
        raise PolicyError(error.message) from None


def recorded_expressions(result: PolicyResult) -> list[HealthRule]:
    """The rules of every health-checks policy, compiled (the texts are cached by ``read_rules``)."""
    rules: list[HealthRule] = []
    for entry in result.extensions.get(EXPRESSIONS_KEY) or []:
        rule = {k: v for k, v in entry.items() if k != "policy"}
        rules.extend(read_rules([rule], "expressions", source_of(entry["policy"])))
    return rules


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
        rules = parse_expressions(policy.name, policy.properties)
        recorded_rules: list[dict[str, str]] = result.extensions.setdefault(EXPRESSIONS_KEY, []) if rules else []
        for rule in rules:
            for earlier in recorded_rules:
                if (earlier["apiVersion"].rpartition("/")[0], earlier["kind"]) == (rule.group, rule.kind):
                    raise PolicyError(f"expressions: {rule.kind} of group {go_quote(rule.group)} has a rule in policy "
                                      f"{go_quote(earlier['policy'])} already")
            entry = {"policy": policy.name, "apiVersion": rule.api_version, "kind": rule.kind, "current": rule.current}
            entry.update({k: v for k, v in (("inProgress", rule.in_progress), ("failed", rule.failed)) if v})
            recorded_rules.append(entry)
        entries: list[dict[str, str]] = result.extensions.setdefault(EXTENSION_KEY, [])
        seen = {(e["apiVersion"], e["kind"], e["namespace"], e["name"]) for e in entries}
        for check in checks:
            key = (check.api_version, check.kind, check.namespace, check.name)
            if key in seen:
                continue
            seen.add(key)
            entries.append({"policy": check.policy, "apiVersion": check.api_version, "kind": check.kind,
                            "name": check.name, "namespace": check.namespace})
