"""The ``dependency`` policy (docs/transform.md#the-dependency-policy): a component follows the components it names.

A policy's edges are staged on a copy and committed only when every rule and the cycle check
over the accumulated graph pass, so a rejected policy records nothing.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import ComponentNames, PolicyResult

TYPE = "dependency"


def _schema() -> Schema:
    rule = PropertySchema(
        type="object",
        description="One ordering rule: a component and the siblings it depends on.",
        properties={
            "component": PropertySchema(
                type="string",
                required=True,
                description="Name of the component that has dependencies (must exist in this application).",
            ),
            "dependsOn": PropertySchema(
                type="array",
                required=True,
                description="Names of sibling components this component must be deployed after.",
                items=PropertySchema(type="string", description="Name of a sibling component in this application."),
            ),
        },
    )
    return {
        "rules": PropertySchema(
            type="array",
            required=True,
            description=(
                "Intra-application ordering rules; each entry names a component and the sibling components it "
                "must be deployed after."
            ),
            items=rule,
        )
    }


def _parse_rules(props: dict[str, Any]) -> list[tuple[str, list[str]]]:
    rules = props.get("rules")
    if rules is None:
        raise PolicyError("missing required property 'rules'")
    if not isinstance(rules, list):
        raise PolicyError("property 'rules' must be a list")
    if not rules:
        raise PolicyError("property 'rules' must not be empty")
    parsed: list[tuple[str, list[str]]] = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise PolicyError(f"rules[{i}] must be a map")
        component = rule.get("component")
        if not isinstance(component, str) or not component:
            raise PolicyError(f"rules[{i}].component is required and must be a string")
        if "dependsOn" not in rule or rule["dependsOn"] is None:
            raise PolicyError(f"rules[{i}].dependsOn is required")
        depends_on = rule["dependsOn"]
        if not isinstance(depends_on, list):
            raise PolicyError(f"rules[{i}].dependsOn must be a list")
        if not depends_on:
            raise PolicyError(f"rules[{i}].dependsOn must not be empty")
        for j, dep in enumerate(depends_on):
            if not isinstance(dep, str) or not dep:
                raise PolicyError(f"rules[{i}].dependsOn[{j}] must be a non-empty string")
        parsed.append((component, list(depends_on)))
    return parsed


def find_cycle(deps: dict[str, list[str]]) -> list[str] | None:
    """The first cycle of the docs/transform.md#the-dependency-policy walk: roots sorted, dependencies in recorded
    order.

    Returns the walk from its root followed by the node met again, or ``None``. Iterative, so
    long chains do not hit Python's recursion limit.
    """
    state: dict[str, int] = {}  # 1 = on the walk, 2 = done
    for root in sorted(name for name, targets in deps.items() if targets):
        if root in state:
            continue
        path = [root]
        state[root] = 1
        stack = [iter(deps.get(root, ()))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            seen = state.get(nxt, 0)
            if seen == 1:
                return [*path, nxt]
            if seen == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(deps.get(nxt, ())))
    return None


class DependencyPolicy(BuiltinType):
    """Orders components of the same application."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        rules = _parse_rules(policy.properties)
        known: ComponentNames | set[str] = components if isinstance(components, ComponentNames) else set(components)
        for component, depends_on in rules:
            if component not in known:
                raise PolicyError(f"references unknown component {go_quote(component)}")
            for dep in depends_on:
                if dep not in known:
                    raise PolicyError(f"component {go_quote(component)} depends on unknown component {go_quote(dep)}")
                if dep == component:
                    raise PolicyError(f"component {go_quote(component)} cannot depend on itself")
        staged = {name: list(targets) for name, targets in result.dependencies.items()}
        for component, depends_on in rules:
            targets = staged.setdefault(component, [])
            for dep in depends_on:
                if dep not in targets:
                    targets.append(dep)
        cycle = find_cycle(staged)
        if cycle is not None:
            raise PolicyError("circular dependency detected: " + " -> ".join(cycle))
        result.dependencies.clear()
        result.dependencies.update(staged)
