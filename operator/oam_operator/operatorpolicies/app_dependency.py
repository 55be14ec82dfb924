"""The ``app-dependency`` policy: an Application starts applying after other Applications.

``properties.applications: [{name, namespace?}]``. The handler validates the entries and records
them, in order and de-duplicated, in ``PolicyResult.app_depends_on`` (``name`` or
``namespace/name`` as authored) and, with the policy that named each one, under
``extensions["oam-operator.dev/app-dependency"]``. A missing ``namespace`` means the
Application's own; the handler cannot know it (policies see only component names), so the
operator resolves it and applies its cross-namespace rule afterwards (``resolve.py``).

Several ``app-dependency`` policies accumulate. Naming the Application itself is not refused
here (the handler does not know the Application's name): the operator reports it as the cycle
``a -> a``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.common.dns1123 import dns1123_subdomain_errors
from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import OamError, PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map, optional_namespace, required_list, required_string

TYPE = "app-dependency"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE


@dataclass(frozen=True, order=True)
class AppRef:
    """An Application by namespace and name; sorts by namespace, then name."""

    namespace: str
    name: str

    def display(self, relative_to: str) -> str:
        """``name`` inside ``relative_to``'s namespace, else ``namespace/name``."""
        return self.name if self.namespace == relative_to else f"{self.namespace}/{self.name}"

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class DeclaredDependency:
    """One entry as authored: ``namespace`` is ``""`` when the policy left it out."""

    policy: str
    name: str
    namespace: str

    def resolve(self, own_namespace: str) -> AppRef:
        return AppRef(self.namespace or own_namespace, self.name)


def _schema() -> Schema:
    entry = PropertySchema(
        type="object",
        description="An Application this one starts applying after.",
        properties={
            "name": PropertySchema(type="string", required=True, description="Name of the Application."),
            "namespace": PropertySchema(
                type="string",
                description="Namespace of the Application; defaults to this Application's namespace. Another "
                "namespace needs the operator setting --allow-cross-namespace-dependencies.",
            ),
        },
    )
    return {
        "applications": PropertySchema(
            type="array",
            required=True,
            description="Applications that must be Ready (at their current generation) before this Application "
            "applies a new revision.",
            items=entry,
        )
    }


def parse_entries(policy_name: str, props: Mapping[str, Any]) -> list[DeclaredDependency]:
    """The policy's entries in authored order; ``PolicyError`` with an exact message on bad input."""
    entries = required_list(dict(props), "applications")
    parsed: list[DeclaredDependency] = []
    for i, raw in enumerate(entries):
        where = f"applications[{i}]"
        entry = entry_map(raw, where)
        name = required_string(entry, "name", where)
        errors = dns1123_subdomain_errors(name)
        if errors:
            raise PolicyError(f"{where}.name {go_quote(name)} is not a valid Application name: {'; '.join(errors)}")
        parsed.append(DeclaredDependency(policy_name, name, optional_namespace(entry, where)))
    return parsed


def recorded(result: PolicyResult) -> list[DeclaredDependency]:
    """What the handlers recorded in ``result`` (empty when no ``app-dependency`` policy ran)."""
    raw = result.extensions.get(EXTENSION_KEY) or []
    return [DeclaredDependency(e["policy"], e["name"], e["namespace"]) for e in raw]


def declared_in_spec(policies: Iterable[Any], own_namespace: str) -> tuple[AppRef, ...]:
    """The resolved dependencies of an Application's ``spec.policies``, leniently.

    Used by the operator's index of every Application, which must not fail on a document the
    transform would refuse: invalid policies contribute nothing (the Application itself
    reports them). Sorted and de-duplicated.
    """
    refs: set[AppRef] = set()
    for policy in policies or ():
        if not isinstance(policy, Mapping) or policy.get("type") != TYPE:
            continue
        try:
            entries = parse_entries(str(policy.get("name", "")), policy.get("properties") or {})
        except OamError:
            continue
        refs.update(entry.resolve(own_namespace) for entry in entries)
    return tuple(sorted(refs))


class AppDependencyPolicy(BuiltinType):
    """Orders this Application after other Applications (read by the operator, not the transform)."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        entries = parse_entries(policy.name, policy.properties)
        recorded_entries: list[dict[str, str]] = result.extensions.setdefault(EXTENSION_KEY, [])
        seen = {(e["name"], e["namespace"]) for e in recorded_entries}
        for entry in entries:
            if (entry.name, entry.namespace) in seen:
                continue
            seen.add((entry.name, entry.namespace))
            recorded_entries.append({"policy": entry.policy, "name": entry.name, "namespace": entry.namespace})
            result.app_depends_on.append(f"{entry.namespace}/{entry.name}" if entry.namespace else entry.name)
