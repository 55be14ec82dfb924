"""Type descriptors and the managed-type matching rules (docs/reconciler.md#managed-types,
docs/reconciler.md#classification).

A CRD or APIService "brings" types; instances of those types (and of the operator's
additional managed types) are created after, and deleted before, everything else of their wave.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

__all__ = ["NameInfo", "TypeInfo", "TypeVersionInfo", "group_matches"]


def group_matches(pattern: str, group: str) -> bool:
    """``*`` matches any group (the core group too); ``*.<suffix>`` matches a suffix;
    any other pattern with ``*`` never matches; otherwise exact equality."""
    if pattern == "*":
        return True
    if pattern.startswith("*.") and "*" not in pattern[2:]:
        return group.endswith(pattern[1:])
    if "*" in pattern:
        return False
    return pattern == group


@dataclass(frozen=True)
class TypeInfo:
    """``{group, kind}``: an additional managed type; group may be a pattern, kind ``*``."""

    group: str
    kind: str

    def matches(self, group: str, kind: str) -> bool:
        return group_matches(self.group, group) and (self.kind == "*" or self.kind == kind)


class TypeVersionInfo(BaseModel):
    """A ``managedTypes`` entry of an inventory item (JSON ``{group, version, kind}``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    group: str = ""
    version: str = ""
    kind: str = ""

    def matches(self, group: str, version: str, kind: str) -> bool:
        return (
            group_matches(self.group, group)
            and (self.version == "*" or self.version == version)
            and (self.kind == "*" or self.kind == kind)
        )

    def to_json(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "kind": self.kind}


@dataclass(frozen=True)
class NameInfo:
    """``{namespace, name}`` of an object (JSON omits an empty namespace)."""

    namespace: str
    name: str

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "name": self.name} if self.namespace else {"name": self.name}
