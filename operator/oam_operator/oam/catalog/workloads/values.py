"""Reading loosely typed property values the way the workload types need (docs/transform.md#shared-workload-properties).

Properties arrive as decoded YAML. ``validate_authored_properties`` has usually type-checked
them, but a library caller may skip that step, so the handlers read values defensively and
refuse a wrong type with ``<field>: must be …, got <Go type name>``.
"""

from __future__ import annotations

import math
from typing import Any

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_type_name

Object = dict[str, Any]


def as_int(value: Any, field: str) -> int:
    """An integer (an integral float counts, as YAML ``8080.0`` would in Go's decoder)."""
    if isinstance(value, bool):
        raise ValidationError(f"{field}: must be an integer, got {go_type_name(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise ValidationError(f"{field}: must be an integer, got {go_type_name(value)}")


def opt_int(props: Object, key: str, default: int, field: str | None = None) -> int:
    """``props[key]`` as an integer, ``default`` when absent or null."""
    value = props.get(key)
    return default if value is None else as_int(value, field or key)


#: A property's value when its key is not written at all. A present ``null`` is a value: the
#: handlers that check presence before type (as kurel's do) refuse it with ``got <nil>``.
ABSENT: Any = object()


def opt_str(props: Object, key: str, field: str | None = None) -> str | None:
    """``props[key]`` as a string, ``None`` when absent or null."""
    value = props.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{field or key}: must be a string, got {go_type_name(value)}")
    return value


def opt_bool(props: Object, key: str, default: bool, field: str | None = None) -> bool:
    value = props.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValidationError(f"{field or key}: must be a bool, got {go_type_name(value)}")
    return value


def opt_list(props: Object, key: str, field: str | None = None) -> list[Any]:
    """``props[key]`` as a list, empty when absent or null."""
    value = props.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{field or key}: must be an array, got {go_type_name(value)}")
    return value


def opt_map(props: Object, key: str, field: str | None = None) -> Object:
    """``props[key]`` as a mapping, empty when absent or null."""
    value = props.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(f"{field or key}: must be an object, got {go_type_name(value)}")
    return value


def strings(values: list[Any]) -> list[str]:
    """The string items of a list; other items are dropped (``command``, ``args``)."""
    return [v for v in values if isinstance(v, str)]
