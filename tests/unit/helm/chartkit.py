"""Small helpers over rendered chart objects (used by the tests in this directory)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[Obj], kind: str, name: str | None = None, namespace: str | None = None) -> Obj:
    found = [o for o in of_kind(objects, kind)
             if (name is None or o["metadata"]["name"] == name)
             and (namespace is None or o["metadata"].get("namespace") == namespace)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container(objects: list[Obj]) -> Obj:
    deployment = one(objects, "Deployment")
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def args(objects: list[Obj]) -> list[str]:
    result: list[str] = container(objects)["args"]
    return result


def rules(objects: list[Obj], kind: str, namespace: str | None = None) -> list[Obj]:
    result: list[Obj] = one(objects, kind, namespace=namespace)["rules"]
    return result


def rule_set(rule_list: list[Obj]) -> set[tuple[str, str, str, str]]:
    """(apiGroup, resource, resourceName or "", verb) for every combination the rules grant."""
    granted = set()
    for rule in rule_list:
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                for name in rule.get("resourceNames") or [""]:
                    for verb in rule["verbs"]:
                        granted.add((group, resource, name, verb))
    return granted


def has_wildcard(rule_list: list[Obj]) -> bool:
    return any("*" in rule.get(field, []) for rule in rule_list
               for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"))
