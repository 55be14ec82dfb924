"""``oam-operator health``: try health rules on objects offline (docs/health.md#health-test).

``health test KIND FIXTURE`` judges every object of FIXTURE (a YAML stream) with the rule for
KIND, exactly as the operator would: the library's, or the one ``--rules FILE`` gives (a list of
rules, a ComponentDefinition, TraitDefinition or ClusterProfile with ``spec.health``, or an
Application's ``health-checks`` policies), which wins over the library's like in the operator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from oam_operator.cli.errors import fail
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.health.library import find_rule, library_rules
from oam_operator.oam.health.rules import HealthExpressionError, HealthRule, HealthRuleError, read_rules

__all__ = ["rules_of_file", "run_health_list", "run_health_test"]

_POLICY_TYPE = "health-checks"


def _documents(path: str) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(Path(path).read_text(encoding="utf-8")) if d is not None]
    except OSError as exc:
        fail(f"reading {path!r}: {exc.strerror}")
    except yaml.YAMLError as exc:
        fail(f"reading {path!r}: not YAML: {exc}")


def rules_of_file(path: str) -> list[HealthRule]:
    """The rules ``path`` declares, in any of the shapes the module docstring names."""
    rules: list[HealthRule] = []
    for document in _documents(path):
        if isinstance(document, list):
            rules.extend(read_rules(document, path, f"file {go_quote(path)}"))
            continue
        if not isinstance(document, dict):
            continue
        kind, name = document.get("kind"), (document.get("metadata") or {}).get("name", "")
        spec = document.get("spec") or {}
        if kind == "Application":
            for i, policy in enumerate(spec.get("policies") or []):
                if isinstance(policy, dict) and policy.get("type") == _POLICY_TYPE:
                    expressions = (policy.get("properties") or {}).get("expressions")
                    rules.extend(read_rules(expressions, f"spec.policies[{i}].properties.expressions",
                                            f"policy {go_quote(str(policy.get('name', '')))}"))
        elif isinstance(spec, dict) and spec.get("health") is not None:
            rules.extend(read_rules(spec["health"], "spec.health", f"{kind} {go_quote(str(name))}"))
    return rules


def run_health_test(kind: str, fixture: str, rules_path: str | None, expect: str | None) -> int:
    """Print ``<Kind> <name>: <status>`` and the verdict's message per object; the exit code says
    whether every verdict is ``expect`` (0) or not (1)."""
    own = rules_of_file(rules_path) if rules_path else []
    try:
        rule = find_rule(kind, own) if own and _names(kind, own) else find_rule(kind)
    except HealthRuleError as exc:
        fail(exc.message, code=2)
    objects = [d for d in _documents(fixture) if isinstance(d, dict)]
    if not objects:
        fail(f"{fixture!r} holds no object", code=2)
    mismatched = 0
    for obj in objects:
        group = str(obj.get("apiVersion") or "").rpartition("/")[0]
        name = (obj.get("metadata") or {}).get("name", "")
        if (group, obj.get("kind")) != (rule.group, rule.kind):
            fail(f"{obj.get('kind')} {name!s} (group {go_quote(group)}) is not of the kind the rule judges: "
                 f"{rule.kind} (group {go_quote(rule.group)})", code=2)
        try:
            verdict = rule.evaluate(obj)
        except HealthExpressionError as exc:
            click.echo(f"{rule.kind} {name}: error")
            click.echo(f"  {exc.message}")
            mismatched += 1
            continue
        click.echo(f"{rule.kind} {name}: {verdict.status}")
        click.echo(f"  {verdict.message}")
        if expect is not None and verdict.status != expect:
            click.echo(f"  expected {expect}")
            mismatched += 1
    click.echo(f"rule: {rule.source} ({rule.api_version} {rule.kind})")
    return 1 if mismatched else 0


def _names(kind: str, rules: list[HealthRule]) -> bool:
    try:
        find_rule(kind, rules)
    except HealthRuleError:
        return False
    return True


def run_health_list() -> int:
    """One line per rule of the library: kind, group, and which expressions it has."""
    for rule in sorted(library_rules(), key=lambda r: (r.group, r.kind)):
        has = ", ".join(k for k, v in (("inProgress", rule.in_progress), ("failed", rule.failed)) if v)
        click.echo(f"{rule.kind}.{rule.group}\t{rule.api_version}\tcurrent{', ' + has if has else ''}")
    return 0
