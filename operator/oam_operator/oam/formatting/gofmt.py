"""Go-compatible formatting of values in messages (transform.md conventions).

Messages must match kurel's, which are produced by Go's ``fmt``: ``%q`` quoting, ``%T`` type
names of decoded YAML values and ``%v`` renderings. These helpers reproduce exactly those.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_NAMED_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``: double quotes, ``\\"``/``\\\\`` escaped, non-printables escaped."""
    out = ['"']
    for ch in s:
        esc = _NAMED_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_type_name(value: Any) -> str:
    """The ``%T`` name of a YAML-decoded value as Go's decoder would type it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-tripping digits of ``abs(f)`` and ``point``: value = 0.<digits> × 10**point."""
    _, digit_tuple, exponent = Decimal(repr(abs(f))).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(str(d) for d in digit_tuple)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped, len(stripped) + exponent


def format_float(f: float, exp_threshold: int) -> str:
    """Go's shortest float text: ``%v`` (``exp_threshold=21``) or ``strconv 'g', -1`` (``6``)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, point = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    exp = point - 1
    if exp < -4 or exp >= exp_threshold:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        esign = "+" if exp >= 0 else "-"
        return f"{sign}{mant}e{esign}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * (-point)}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_value(value: Any) -> str:
    """Go's ``%v`` of a YAML-decoded value (strings unquoted, maps with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value, 21)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = " ".join(f"{go_value(k)}:{go_value(value[k])}" for k in sorted(value, key=str))
        return "map[" + items + "]"
    return str(value)
