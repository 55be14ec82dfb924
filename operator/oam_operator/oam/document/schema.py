"""PropertySchema and authored-property checks (docs/transform.md#properties-and-schemas).

Every handler publishes the shape of the properties it reads, so a key no schema declares is
an error rather than a silently ignored setting. The engine never injects defaults: ``default``
documents what the handler's code does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.errors import PROPERTY_PLATFORM_RESERVED, PlatformReservedError, PropertyError
from oam_operator.oam.formatting.choices import closest, unknown_at
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value


@dataclass
class PropertySchema:
    """One node of a handler's property schema (docs/transform.md#the-schema-vocabulary)."""

    type: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    enum: list[Any] | None = None
    properties: dict[str, PropertySchema] | None = None
    items: PropertySchema | None = None
    additional_properties: bool = False
    platform_reserved: bool = False


def scope_schema(trait_type: str) -> PropertySchema:
    """The engine-owned ``scope`` property accepted on every trait
    (docs/transform.md#validating-authored-properties)."""
    return PropertySchema(
        type="string",
        description=(
            f'Selects the scoped ClusterProfile capability binding "{trait_type}.<scope>", falling back to the '
            "unscoped binding when no scoped one is declared."
        ),
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _enum_equal(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    return bool(a == b)


def check_value(schema: PropertySchema, value: Any, path: str) -> Any:
    """Check ``value`` against ``schema`` at ``path`` (docs/transform.md#checking-a-value); returns the normalised
    value."""
    if value is None:
        return None
    kind = schema.type
    if kind == "":
        pass
    elif kind == "string":
        if not isinstance(value, str):
            raise PropertyError(f"{path}: expected string, got {go_type_name(value)}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise PropertyError(f"{path}: expected boolean, got {go_type_name(value)}")
    elif kind == "integer":
        ok = _is_number(value) and (isinstance(value, int) or (math.isfinite(value) and float(value).is_integer()))
        if not ok:
            raise PropertyError(f"{path}: expected integer, got {go_type_name(value)} ({go_value(value)})")
    elif kind == "number":
        if not (_is_number(value) and (isinstance(value, int) or math.isfinite(value))):
            raise PropertyError(f"{path}: expected number, got {go_type_name(value)}")
    elif kind == "array":
        if not isinstance(value, list):
            raise PropertyError(f"{path}: expected array, got {go_type_name(value)}")
        if schema.items is not None:
            value = [check_value(schema.items, item, f"{path}[{i}]") for i, item in enumerate(value)]
    elif kind == "object":
        if not isinstance(value, dict):
            raise PropertyError(f"{path}: expected object, got {go_type_name(value)}")
        value = check_object(schema.properties or {}, schema.additional_properties, value, path, True)
    else:
        raise PropertyError(f"{path}: schema declares unsupported property type {go_quote(kind)}")
    if schema.enum is not None and not any(_enum_equal(value, e) for e in schema.enum):
        raise PropertyError(unknown_at(path, value, schema.enum))
    return value


def check_object(
    fields: Mapping[str, PropertySchema],
    additional: bool,
    value: dict[str, Any],
    path: str,
    check_required: bool,
) -> dict[str, Any]:
    """The object check of docs/transform.md#checking-a-value; ``check_required`` is off for a top level
    (docs/transform.md#validating-authored-properties)."""
    if check_required:
        for key in sorted(fields):
            if fields[key].required and value.get(key) is None:
                raise PropertyError(f"{path}: {go_quote(key)} is required")
    for key in sorted(value):
        sub = fields.get(key)
        if sub is None:
            if not additional:
                allowed = ", ".join(sorted(fields)) or "(none)"
                near = closest(key, sorted(fields))  # a misspelt key, docs/transform.md#checking-a-value
                hint = f"; did you mean {go_quote(near)}?" if near is not None else ""
                raise PropertyError(f"{path}: unsupported field {go_quote(key)} (allowed: {allowed}){hint}")
            continue
        value[key] = check_value(sub, value[key], f"{path}.{key}")
    return value


def check_platform_reserved(fields: Mapping[str, PropertySchema], props: Mapping[str, Any], context: str = "") -> None:
    """Refuse any authored value, null included, for a platform-reserved field
    (docs/transform.md#platform-reserved-properties).

    The message is ``<context>: properties…``; without a context the caller adds its own.
    """
    _reserved_walk(fields, props, f"{context}: " if context else "", "properties")


def _reserved_walk(fields: Mapping[str, PropertySchema], props: Mapping[str, Any], prefix: str, path: str) -> None:
    for key in sorted(props):
        sub = fields.get(key)
        if sub is None:
            continue
        if sub.platform_reserved:
            raise PlatformReservedError(
                f"{prefix}{path}: {go_quote(key)} is platform-reserved and may only be set via ClusterProfile "
                f"capability rendering: {PROPERTY_PLATFORM_RESERVED}"
            )
        nested = props[key]
        if sub.properties and isinstance(nested, dict):
            _reserved_walk(sub.properties, nested, prefix, f"{path}.{key}")


def walk_schema(fields: Mapping[str, PropertySchema], path: str = "") -> list[tuple[str, PropertySchema]]:
    """Every node of a schema with its path, for tests and introspection."""
    nodes: list[tuple[str, PropertySchema]] = []
    for key in sorted(fields):
        node = fields[key]
        sub_path = f"{path}.{key}" if path else key
        nodes.extend(_walk_node(node, sub_path))
    return nodes


def _walk_node(node: PropertySchema, path: str) -> list[tuple[str, PropertySchema]]:
    nodes = [(path, node)]
    if node.properties:
        nodes.extend(walk_schema(node.properties, path))
    if node.items is not None:
        nodes.extend(_walk_node(node.items, path + "[]"))
    return nodes


def to_json_schema(node: PropertySchema) -> dict[str, Any]:
    """A JSON Schema rendering of one node (``oam-operator schema``)."""
    out: dict[str, Any] = {}
    if node.type:
        out["type"] = node.type
    if node.description:
        out["description"] = node.description
    if node.default is not None:
        out["default"] = node.default
    if node.enum is not None:
        out["enum"] = list(node.enum)
    if node.type == "object" or node.properties is not None:
        out.update(object_json_schema(node.properties or {}, node.additional_properties))
    if node.items is not None:
        out["items"] = to_json_schema(node.items)
    if node.platform_reserved:
        out["x-platform-reserved"] = True
    return out


def object_json_schema(fields: Mapping[str, PropertySchema], additional: bool) -> dict[str, Any]:
    """``properties``/``required``/``additionalProperties`` of an object schema."""
    out: dict[str, Any] = {"properties": {k: to_json_schema(fields[k]) for k in sorted(fields)}}
    required = sorted(k for k, v in fields.items() if v.required)
    if required:
        out["required"] = required
    out["additionalProperties"] = additional
    return out
