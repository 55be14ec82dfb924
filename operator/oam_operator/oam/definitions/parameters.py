"""A definition's parameters: the JSON-schema subset of the built-in property schemas
(docs/definitions.md#parameters), read into ``PropertySchema`` so authored values are checked
the same way as a built-in type's properties."""

from __future__ import annotations

import re
from typing import Any

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote

TYPES = ("array", "boolean", "integer", "number", "object", "string")
KEYS = ("default", "description", "enum", "items", "properties", "required", "type")
ZERO: dict[str, Any] = {"array": [], "boolean": False, "integer": 0, "number": 0.0, "object": {}, "string": ""}


class ParameterSchemaError(OamError):
    """A parameter schema that is not valid."""


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def read_parameters(value: Any, path: str = "spec.parameters") -> dict[str, PropertySchema]:
    """The parameters' schemas; their names must be CEL identifiers (``parameters.<name>``)."""
    parameters = read_properties(value, path)
    for name in parameters:
        if not IDENTIFIER.match(name):
            raise ParameterSchemaError(f"{path}: {go_quote(name)} is not a CEL identifier (letters, digits, _)")
    return parameters


def read_properties(value: Any, path: str) -> dict[str, PropertySchema]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParameterSchemaError(f"{path}: expected a map of parameter names to schemas")
    return {name: read_schema(node, f"{path}.{name}") for name, node in value.items()}


def read_schema(node: Any, path: str) -> PropertySchema:
    if not isinstance(node, dict):
        raise ParameterSchemaError(f"{path}: expected a schema (a map)")
    unknown = sorted(set(node) - set(KEYS))
    if unknown:
        raise ParameterSchemaError(f"{path}: unknown key {go_quote(unknown[0])} (valid: {', '.join(KEYS)})")
    kind = node.get("type")
    if kind not in TYPES:
        raise ParameterSchemaError(f"{path}.type: must be one of {', '.join(TYPES)}, got {go_quote(str(kind))}")
    if not isinstance(node.get("description", ""), str):
        raise ParameterSchemaError(f"{path}.description: expected string")
    if not isinstance(node.get("required", False), bool):
        raise ParameterSchemaError(f"{path}.required: expected boolean")
    enum = node.get("enum")
    if enum is not None and not isinstance(enum, list):
        raise ParameterSchemaError(f"{path}.enum: expected a list")
    items = read_schema(node["items"], f"{path}.items") if "items" in node else None
    if kind != "array" and items is not None:
        raise ParameterSchemaError(f"{path}.items: only an array has items")
    properties = read_properties(node["properties"], f"{path}.properties") if "properties" in node else None
    if kind != "object" and properties is not None:
        raise ParameterSchemaError(f"{path}.properties: only an object has properties")
    return PropertySchema(
        type=kind,
        description=node.get("description", ""),
        required=node.get("required", False),
        default=node.get("default"),
        enum=enum,
        properties=properties,
        items=items,
        additional_properties=kind == "object" and properties is None,
    )


def effective_values(schema: dict[str, PropertySchema], authored: dict[str, Any]) -> dict[str, Any]:
    """Each parameter's value: authored, else its default, else its type's zero value."""
    values: dict[str, Any] = {}
    for name, node in schema.items():
        if name in authored and authored[name] is not None:
            values[name] = authored[name]
        elif node.default is not None:
            values[name] = node.default
        else:
            values[name] = ZERO[node.type]
    return values
