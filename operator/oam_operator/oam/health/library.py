"""The shipped library of health rules for common custom resources (docs/health.md#the-library).

``library.yaml`` beside this module holds one rule per kind, each tested against fixtures in
``tests/fixtures/health/``. The library is the lowest layer: a ClusterProfile's, a definition's
or an Application's own rule for the same kind wins, and an object that carries a status-hint
annotation is judged by its hints instead.
"""

from __future__ import annotations

import functools
from importlib import resources

import yaml

from oam_operator.oam.health.rules import HealthRule, HealthRuleError, read_rules

__all__ = ["LIBRARY_SOURCE", "find_rule", "library_rules"]

LIBRARY_SOURCE = "library"


@functools.cache
def library_rules() -> tuple[HealthRule, ...]:
    """Every rule of the library, compiled (once per process)."""
    text = resources.files(__package__).joinpath("library.yaml").read_text(encoding="utf-8")
    entries = yaml.safe_load(text) or []
    return tuple(read_rules(entries, "library.yaml", LIBRARY_SOURCE))


def find_rule(name: str, rules: tuple[HealthRule, ...] | list[HealthRule] | None = None) -> HealthRule:
    """The rule named by ``name``: ``Kind`` (when one group has it), ``Kind.group`` (kubectl's
    spelling) or ``group/version/Kind``; ``HealthRuleError`` listing the choices otherwise."""
    candidates = list(library_rules() if rules is None else rules)
    if name.count("/") == 2:
        group, _, kind = name.split("/")
        matches = [r for r in candidates if r.kind == kind and r.group == group]
    elif "." in name:
        kind, _, group = name.partition(".")
        matches = [r for r in candidates if r.kind == kind and r.group == group]
    else:
        matches = [r for r in candidates if r.kind == name]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(sorted(f"{r.kind}.{r.group}" if r.group else r.kind for r in candidates))
        raise HealthRuleError(f"no health rule for {name!r}; rules exist for: {known}")
    choices = ", ".join(sorted(f"{r.kind}.{r.group}" for r in matches))
    raise HealthRuleError(f"{name!r} is ambiguous: {choices}")
