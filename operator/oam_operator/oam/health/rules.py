"""Health by expression (docs/health.md): per kind, CEL expressions that say whether an object
is Current, InProgress or Failed, in the shape of Flux's ``healthCheckExprs``.

A rule is ``{apiVersion, kind, current, inProgress?, failed?}``; expressions read the object's
``metadata``, ``spec`` and ``status``, so expressions written for Flux carry over. Evaluation
follows Flux's order: an object whose ``status.observedGeneration`` differs from its
``metadata.generation`` is InProgress; else ``inProgress``, ``failed``, ``current`` are tried in
that order and the first that is true decides; none true is InProgress. Unlike Flux, a field
the object does not have yet (``status`` before its controller wrote one) reads as "not true":
the object is InProgress, not in error. Any other evaluation error, or a value that is not a
boolean, is an error naming the rule. A rule matches by API group and kind (not version).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_math, ext_optional, ext_strings

from oam_operator.oam.definitions.celenv import checked
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote

__all__ = ["CURRENT", "FAILED", "IN_PROGRESS", "RULE_KEYS", "HealthExpressionError", "HealthRule", "HealthRuleError",
           "HealthRules", "Verdict", "read_rules"]

CURRENT, IN_PROGRESS, FAILED = "Current", "InProgress", "Failed"
RULE_KEYS = ("apiVersion", "kind", "current", "inProgress", "failed")
#: The most rules one list (a policy, a definition, a profile) may hold.
MAX_RULES = 100
_VARIABLES = ("metadata", "spec", "status")
_ORDER = (("inProgress", IN_PROGRESS), ("failed", FAILED), ("current", CURRENT))
_API_VERSION = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[a-z0-9]+$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_MISSING_KEY = re.compile(r'^NOT_FOUND: Key not found in map : "?(.*?)"?$')


class HealthRuleError(OamError):
    """A rule refused when read: a missing or unknown field, an expression that does not compile."""


class HealthExpressionError(OamError):
    """An expression that could not be evaluated on an object (other than a missing field)."""


@dataclass(frozen=True)
class Verdict:
    """What a rule says about one object: a kstatus string and the message that explains it."""

    status: str
    message: str


@functools.cache
def _environment() -> Any:
    variables = {name: cel.Type.DYN for name in _VARIABLES}
    extensions = [ext_strings.ExtStrings(), ext_math.ExtMath(), ext_optional.ExtOptional()]
    return cel.NewEnv(variables=variables, extensions=extensions)


@functools.lru_cache(maxsize=4096)
def _compiled(source: str) -> Any:
    """The compiled expression (cached by text: every Application naming it shares one), or
    ``HealthRuleError`` with the checker's position."""
    return checked(_environment(), source, HealthRuleError)


@dataclass(frozen=True)
class HealthRule:
    """One kind's expressions and where they were declared (``source``, named in every message)."""

    api_version: str
    kind: str
    current: str
    in_progress: str = ""
    failed: str = ""
    source: str = "library"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def expression(self, key: str) -> str:
        return {"current": self.current, "inProgress": self.in_progress, "failed": self.failed}[key]

    def evaluate(self, obj: Mapping[str, Any]) -> Verdict:
        """The verdict on ``obj``; ``HealthExpressionError`` when an expression cannot be evaluated."""
        metadata, status = _map(obj.get("metadata")), _map(obj.get("status"))
        generation, observed = metadata.get("generation"), status.get("observedGeneration")
        if _is_int(generation) and _is_int(observed) and generation != observed:
            return Verdict(IN_PROGRESS, f"waiting for the controller to observe generation {generation} "
                                        f"(observed {observed})")
        data = {"metadata": metadata, "spec": _map(obj.get("spec")), "status": status}
        missing = ""
        for key, outcome in _ORDER:
            source = self.expression(key)
            if not source:
                continue
            value, absent = self._value(key, source, data)
            missing = missing or absent
            if value:
                return Verdict(outcome, self._message(key, source, status, outcome))
        why = f"health expression current ({self.source}) is not true yet: {self.current}"
        return Verdict(IN_PROGRESS, why + (f"; {missing}" if missing else ""))

    def _value(self, key: str, source: str, data: Mapping[str, Any]) -> tuple[bool, str]:
        """The expression's boolean, with ``(False, "no such key: <k>")`` for a field not there."""
        result = _compiled(source).eval(data=dict(data))
        if result.type().name() == "ERROR":
            text = str(result.value())
            absent = _MISSING_KEY.match(text)
            if absent:
                return False, f"no such key: {absent.group(1)}"
            detail = text.removeprefix("INVALID_ARGUMENT: ").removeprefix("UNKNOWN: ")
            raise HealthExpressionError(f"health expression {key} ({self.source}) of {self.kind}: {detail}")
        value = result.plain_value()
        if not isinstance(value, bool):
            raise HealthExpressionError(f"health expression {key} ({self.source}) of {self.kind}: returned "
                                        f"{result.type().name().lower()}, not a boolean")
        return value, ""

    def _message(self, key: str, source: str, status: Mapping[str, Any], outcome: str) -> str:
        message = f"health expression {key} ({self.source}) is true: {source}"
        if outcome == CURRENT:
            return message
        quoted = quote_condition(status)
        return f"{message}; {quoted}" if quoted else message


def quote_condition(status: Mapping[str, Any]) -> str:
    """The condition that explains an unhealthy object, as ``condition Ready=False (Reason): "message"``:
    its ``Ready`` condition when that is not True, else the first False one with a message, else
    ``Stalled=True``; ``""`` when none fits."""
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    chosen = next((c for c in conditions if c.get("type") == "Ready" and c.get("status") != "True"), None)
    if chosen is None:
        chosen = next((c for c in conditions if c.get("status") == "False" and c.get("message")), None)
    if chosen is None:
        chosen = next((c for c in conditions if c.get("type") == "Stalled" and c.get("status") == "True"), None)
    if chosen is None:
        return ""
    text = f"condition {chosen.get('type')}={chosen.get('status')}"
    if chosen.get("reason"):
        text += f" ({chosen['reason']})"
    if chosen.get("message"):
        text += f": {go_quote(str(chosen['message']))}"
    return text


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_rules(raw: Any, path: str, source: str) -> list[HealthRule]:
    """Read and compile a list of rules at ``path`` (named in refusals, e.g. ``spec.health``)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise HealthRuleError(f"{path}: expected a list of {{apiVersion, kind, current, inProgress, failed}}")
    if len(raw) > MAX_RULES:
        raise HealthRuleError(f"{path}: {len(raw)} rules, over the limit of {MAX_RULES}")
    rules: list[HealthRule] = []
    seen: dict[tuple[str, str], int] = {}
    for i, entry in enumerate(raw):
        rule = _read_rule(entry, f"{path}[{i}]", source)
        key = (rule.group, rule.kind)
        if key in seen:
            raise HealthRuleError(f"{path}[{i}]: a second rule for {rule.kind} of group {go_quote(rule.group)} "
                                  f"(the first is {path}[{seen[key]}])")
        seen[key] = i
        rules.append(rule)
    return rules


def _read_rule(entry: Any, where: str, source: str) -> HealthRule:
    if not isinstance(entry, Mapping):
        raise HealthRuleError(f"{where}: expected a map")
    unknown = sorted(set(entry) - set(RULE_KEYS))
    if unknown:
        raise HealthRuleError(f"{where}: unknown field {go_quote(str(unknown[0]))} (allowed: {', '.join(RULE_KEYS)})")
    for key in ("apiVersion", "kind", "current"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise HealthRuleError(f"{where}.{key}: required, a string")
    if not _API_VERSION.fullmatch(entry["apiVersion"]):
        raise HealthRuleError(f"{where}.apiVersion: {go_quote(entry['apiVersion'])} is not an API version")
    if not _KIND.fullmatch(entry["kind"]):
        raise HealthRuleError(f"{where}.kind: {go_quote(entry['kind'])} is not a kind")
    for key in ("current", "inProgress", "failed"):
        value = entry.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise HealthRuleError(f"{where}.{key}: expected a string")
        try:
            _compiled(value)
        except HealthRuleError as error:
            raise HealthRuleError(f"{where}.{key}: {error.message}") from None
    return HealthRule(entry["apiVersion"], entry["kind"], entry["current"], entry.get("inProgress") or "",
                      entry.get("failed") or "", source)


class HealthRules:
    """Rules by (group, kind); built from layers where an earlier layer's rule wins."""

    def __init__(self, *layers: Sequence[HealthRule]) -> None:
        table: dict[tuple[str, str], HealthRule] = {}
        for layer in reversed(layers):
            for rule in layer:
                table[(rule.group, rule.kind)] = rule
        self._table = table

    def __bool__(self) -> bool:
        return bool(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def rules(self) -> Iterable[HealthRule]:
        return self._table.values()

    def kinds(self) -> frozenset[tuple[str, str]]:
        return frozenset(self._table)

    def rule_for(self, obj: Mapping[str, Any]) -> HealthRule | None:
        api_version = obj.get("apiVersion")
        group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
        return self._table.get((group, str(obj.get("kind") or "")))

    def evaluate(self, obj: Mapping[str, Any]) -> Verdict | None:
        """The verdict of the rule for ``obj``'s kind, or ``None`` when no rule names it."""
        rule = self.rule_for(obj)
        return rule.evaluate(obj) if rule is not None else None
