"""Pydantic JSON Schema → structural OpenAPI v3 schema, as the API server wants it in a CRD.

Pydantic describes the models well (types, constraints, enums, descriptions); a CRD needs the
same information without ``$ref``, ``anyOf`` for optional fields, titles or pydantic's own
defaults. Kubernetes extensions (list types, CEL rules, preserve-unknown-fields) and CRD
defaults travel in ``json_schema_extra``. Anything the conversion does not understand is an
error rather than a silently different schema.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from .meta import CRD_DEFAULT_KEY

__all__ = ["crd_schema", "structural_problems", "walk"]

_KEPT = frozenset(
    {
        "type",
        "format",
        "description",
        "properties",
        "additionalProperties",
        "items",
        "required",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "default",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
_DROPPED = frozenset({"title"})
PRESERVE = "x-kubernetes-preserve-unknown-fields"


def crd_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The ``openAPIV3Schema`` of a top-level kind; ``metadata`` is left to the API server."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    defs = raw.pop("$defs", {})
    schema = _convert(raw, defs, "")
    if "metadata" in schema.get("properties", {}):
        schema["properties"]["metadata"] = {"type": "object"}
    return schema


def _resolve(node: dict[str, Any], defs: dict[str, Any], path: str) -> dict[str, Any]:
    """Inline ``$ref`` and collapse ``anyOf: [X, null]`` / single ``allOf``; the outer keys win."""
    while True:
        if "$ref" in node:
            target = node["$ref"].rsplit("/", 1)[-1]
            outer = {k: v for k, v in node.items() if k != "$ref"}
            node = {**copy.deepcopy(defs[target]), **outer}
        elif "anyOf" in node or "allOf" in node:
            key = "anyOf" if "anyOf" in node else "allOf"
            variants = [v for v in node[key] if v != {"type": "null"}]
            if len(variants) != 1:
                raise ValueError(f"{path or '<root>'}: unions cannot be expressed in a structural schema")
            outer = {k: v for k, v in node.items() if k != key}
            node = {**copy.deepcopy(variants[0]), **outer}
        else:
            return node


def _convert(node: dict[str, Any], defs: dict[str, Any], path: str) -> dict[str, Any]:
    node = _resolve(node, defs, path)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or key == "default":
            continue
        if key == CRD_DEFAULT_KEY:
            out["default"] = copy.deepcopy(value)
        elif key == "const":
            out["enum"] = [value]
        elif key == "properties":
            out["properties"] = {name: _convert(sub, defs, f"{path}.{name}") for name, sub in value.items()}
        elif key == "items":
            out["items"] = _convert(value, defs, f"{path}[]")
        elif key == "additionalProperties":
            if isinstance(value, dict):
                out["additionalProperties"] = _convert(value, defs, f"{path}.*")
            # ``true`` (a dict[str, Any]) is expressed by preserve-unknown-fields or not at all.
        elif key in _KEPT:
            out[key] = copy.deepcopy(value)
        else:
            raise ValueError(f"{path or '<root>'}: unsupported JSON Schema keyword {key!r}")
    return out


def walk(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every node of ``schema`` with its path (``.spec.components[].name``, ``.spec.capabilities.*``)."""
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from walk(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"], f"{path}.*")


def structural_problems(schema: dict[str, Any]) -> list[str]:
    """Violations of the structural-schema rules the generator relies on (empty when fine)."""
    problems = []
    for path, node in walk(schema):
        where = path or "<root>"
        if "type" not in node:
            problems.append(f"{where}: no type")
        if node.get("type") == "object" and path != ".metadata":
            typed = "properties" in node or "additionalProperties" in node
            if not typed and not node.get(PRESERVE):
                problems.append(f"{where}: object without properties, additionalProperties or {PRESERVE}")
            if "properties" in node and "additionalProperties" in node:
                problems.append(f"{where}: both properties and additionalProperties")
        if node.get("type") == "array" and "items" not in node:
            problems.append(f"{where}: array without items")
    return problems
