"""Health by expression in a pass (docs/health.md): the rules that judge an Application's
objects, and the status analyzer that applies them before kstatus.

The layers, most specific first (docs/health.md#sources): the Application's ``health-checks``
policies, the ComponentDefinitions and TraitDefinitions it uses, its ClusterProfile, then the
shipped library. A rule of a higher layer replaces a lower one's for the same API group and
kind. The library yields to an object's own status-hint annotation; the other layers do not.
An object a rule calls Failed is recorded (``failure``), so the pass can end ``Error`` with the
rule's message at once instead of at the timeout.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.model import Definition
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.health.library import library_rules
from oam_operator.oam.health.rules import (
    FAILED,
    IN_PROGRESS,
    HealthExpressionError,
    HealthRule,
    HealthRuleError,
    HealthRules,
    read_rules,
)
from oam_operator.reconciler.identity import split_api_version
from oam_operator.reconciler.status import (
    DefaultStatusAnalyzer,
    StatusAnalysisError,
    StatusResult,
    status_hint_annotation_key,
)

from .definitionuse import spec_types

__all__ = ["ExpressionAnalyzer", "ProfileHealthError", "definition_rules", "pass_rules", "profile_rules"]

ObjectKey = tuple[str, str, str, str]


class ProfileHealthError(Exception):
    """A ClusterProfile's ``spec.health`` that does not read; ``str()`` names the profile and the field."""


def profile_rules(name: str, profile: Mapping[str, Any] | None) -> list[HealthRule]:
    """The rules of a ClusterProfile's ``spec.health``, or ``ProfileHealthError``."""
    if not profile:
        return []
    raw = (profile.get("spec") or {}).get("health")
    try:
        return read_rules(raw, "spec.health", f"ClusterProfile {go_quote(name)}")
    except HealthRuleError as error:
        raise ProfileHealthError(f"ClusterProfile {go_quote(name)}: {error.message}") from None


def definition_rules(catalog: object, spec: Mapping[str, Any]) -> list[HealthRule]:
    """The rules of the definitions ``spec`` uses; where two name one kind, the first in (kind, type) order."""
    if not isinstance(catalog, DefinitionCatalog):
        return []
    found: list[Definition] = []
    for kind, reference in sorted(spec_types(spec)):
        definition = catalog.find(kind, reference)
        if definition is not None and definition not in found:
            found.append(definition)
    return [rule for definition in found for rule in definition.health]


def pass_rules(policy: Iterable[HealthRule], definitions: Iterable[HealthRule],
               profile: Iterable[HealthRule]) -> HealthRules:
    """The explicit layers of one Application, most specific first (the library is separate)."""
    return HealthRules(list(policy), list(definitions), list(profile))


@functools.cache
def library() -> HealthRules:
    """The shipped library's rules by kind, built once per process."""
    return HealthRules(library_rules())


class ExpressionAnalyzer:
    """The reconciler's status analyzer with health rules in front of kstatus.

    An object under deletion, and one of a kind no rule names, get the default analyzer's answer.
    An InProgress verdict of the library, where kstatus finds the object InProgress too, keeps
    kstatus's message (it says more, such as which controller to look for)."""

    def __init__(self, default: DefaultStatusAnalyzer, rules: HealthRules) -> None:
        self._default = default
        self._rules = rules
        self._library = library()
        self._hint_key = status_hint_annotation_key(default.name)
        self.failures: dict[ObjectKey, str] = {}

    @property
    def name(self) -> str:
        return self._default.name

    def compute(self, obj: Mapping[str, Any]) -> StatusResult:
        metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(metadata, Mapping) or metadata.get("deletionTimestamp"):
            return self._default.compute(obj)
        rule = self._rules.rule_for(obj)
        from_library = False
        if rule is None and self._hint_key not in (metadata.get("annotations") or {}):
            rule, from_library = self._library.rule_for(obj), True
        if rule is None:
            return self._default.compute(obj)
        try:
            verdict = rule.evaluate(obj)
        except HealthExpressionError as error:
            raise StatusAnalysisError(error.message) from None
        key = _key(obj)
        if verdict.status == FAILED:
            self.failures[key] = verdict.message
        else:
            self.failures.pop(key, None)
        if from_library and verdict.status == IN_PROGRESS:
            fallback = self._default.compute(obj)
            if fallback.status == IN_PROGRESS:
                return fallback
        return StatusResult(verdict.status, verdict.message)

    def kinds(self) -> frozenset[tuple[str, str]]:
        """The (group, kind) some rule of this analyzer judges."""
        return self._rules.kinds() | self._library.kinds()

    def failure(self, group: str, kind: str, namespace: str, name: str) -> str | None:
        """The Failed verdict's message of that object at its last analysis, if a rule called it Failed."""
        return self.failures.get((group, kind, namespace, name))


def _key(obj: Mapping[str, Any]) -> ObjectKey:
    metadata = obj.get("metadata") or {}
    group, _ = split_api_version(str(obj.get("apiVersion") or ""))
    return group, str(obj.get("kind") or ""), str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
