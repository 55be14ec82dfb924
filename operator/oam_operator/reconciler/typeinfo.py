"""Type descriptors and the managed-type matching rules (docs/reconciler.md#managed-types,
docs/reconciler.md#classification).

A CRD or APIService "brings" types; instances of those types (and of the operator's
additional managed types) are created after, and deleted before, everything else of their wave.
"""

from __future__ import annotations

from dataclasses import dataclass

from oam_operator.persisted.inventory import TypeVersionInfo, group_matches

__all__ = ["NameInfo", "TypeInfo", "TypeVersionInfo", "group_matches"]


@dataclass(frozen=True)
class TypeInfo:
    """``{group, kind}``: an additional managed type; group may be a pattern, kind ``*``."""

    group: str
    kind: str

    def matches(self, group: str, kind: str) -> bool:
        return group_matches(self.group, group) and (self.kind == "*" or self.kind == kind)


@dataclass(frozen=True)
class NameInfo:
    """``{namespace, name}`` of an object (JSON omits an empty namespace)."""

    namespace: str
    name: str

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "name": self.name} if self.namespace else {"name": self.name}
