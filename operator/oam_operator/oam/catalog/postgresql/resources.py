"""CPU and memory of a CloudNativePG cluster (docs/transform.md#the-postgresql-component ``resources``).

Like a workload's resources (docs/transform.md#shared-workload-properties) but limited to ``cpu`` and ``memory`` and
without defaults:
the instances get exactly what the author wrote, canonically printed.

Decisions recorded here: within a section the names are checked before the values; sections
are checked ``requests`` then ``limits``; the quantity and request/limit messages are those of
docs/transform.md#shared-workload-properties,
with its ``invalid resources configuration: `` prefix as kurel prints them (the cpu/memory
restriction is postgresql's own and carries none); a null quantity is unset.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.typed_props import Props
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value
from oam_operator.oam.formatting.quantity import Quantity, QuantityError, format_quantity, parse_quantity

SUPPORTED = ("cpu", "memory")
SECTIONS = ("requests", "limits")
WRAP = "invalid resources configuration: "


def _quantity(section: str, name: str, value: Any) -> Quantity:
    text = value if isinstance(value, str) else go_value(value)
    try:
        quantity = parse_quantity(value)
    except QuantityError as exc:
        raise ValidationError(
            f"{WRAP}resources.{section}: {name}: invalid quantity {go_quote(text)}: {exc.message}"
        ) from None
    if quantity.value < 0:
        raise ValidationError(f"{WRAP}resources.{section}: {name}: quantity must not be negative, got {go_quote(text)}")
    return quantity


def cluster_resources(props: Props) -> dict[str, Any]:
    """``{}`` when no cpu/memory is given, else ``{requests?, limits?}``."""
    block = props.child("resources")
    parsed: dict[str, dict[str, Quantity]] = {}
    for section in SECTIONS:
        values = block.mapping(section) or {}
        unsupported = sorted(name for name in values if name not in SUPPORTED)
        if unsupported:
            raise ValidationError(
                f"resources.{section}: postgresql only supports cpu/memory, got unsupported name(s) "
                f"[{' '.join(unsupported)}]"
            )
        parsed[section] = {
            name: _quantity(section, name, values[name]) for name in SUPPORTED if values.get(name) is not None
        }
    requests, limits = parsed["requests"], parsed["limits"]
    for name in SUPPORTED:
        if name in requests and name in limits and requests[name].value > limits[name].value:
            raise ValidationError(
                f"{WRAP}resources: {name}: request {format_quantity(requests[name])} must not exceed limit "
                f"{format_quantity(limits[name])}"
            )
    return {
        section: {name: format_quantity(q) for name, q in parsed[section].items()}
        for section in SECTIONS
        if parsed[section]
    }
