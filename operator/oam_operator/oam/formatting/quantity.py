"""Kubernetes resource quantities in canonical form (docs/transform.md#durations-and-quantities).

kurel parses every quantity into ``resource.Quantity`` and prints its canonical string, so
``0.5`` prints as ``500m`` and ``2048Mi`` as ``2Gi``. The parse reproduces
``resource.ParseQuantity`` (format from the suffix, its error texts); values are exact
fractions, rounded up to milli precision as the spec states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_value

REGEX = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{REGEX}'"
ERR_SUFFIX = "unable to parse quantity's suffix"

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}


class QuantityError(ValidationError):
    """A ``resource.ParseQuantity`` error; the message is Kubernetes' text."""


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    format: str

    def __str__(self) -> str:
        return format_quantity(self)


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: sign, numerator, denominator, suffix."""
    pos, end, positive = 0, len(text), True
    if text and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body.isdigit() and body.isascii():
            return 10, int(digits), DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def parse_quantity(value: Any) -> Quantity:
    """A quantity from a string, or a bare number read as its decimal text."""
    text = value if isinstance(value, str) else go_value(value)
    if not text:
        raise QuantityError(ERR_FORMAT)
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    amount = Fraction(int(num + denom), 10 ** len(denom))
    amount *= Fraction(10) ** exponent if base == 10 else Fraction(2) ** exponent
    milli = amount * 1000
    if milli.denominator != 1:
        amount = Fraction(math.ceil(milli), 1000)
    return Quantity(amount if positive else -amount, fmt)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """Integer mantissa and the largest exponent (a multiple of 3) that keeps it an integer."""
    exponent = -9
    mantissa = value * 10**9
    while mantissa.denominator != 1:  # cannot happen after milli rounding; guards odd inputs
        mantissa *= 1000
        exponent -= 3
    m = int(mantissa)
    while m != 0 and m % 1000 == 0:
        m //= 1000
        exponent += 3
    return m, exponent


def format_quantity(q: Quantity) -> str:
    """Kubernetes' canonical string of a quantity."""
    value = q.value
    if value == 0:
        return "0"
    fmt = q.format
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        mantissa, exponent = int(value), 0
        while exponent < 60 and mantissa % 1024 == 0:
            mantissa //= 1024
            exponent += 10
        return f"{mantissa}{_BINARY_SUFFIX.get(exponent, '')}"
    mantissa, exponent = _decimal_parts(value)
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    while exponent > 18:
        mantissa *= 1000
        exponent -= 3
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def canonical_quantity(value: Any) -> str:
    """Parse and print back in canonical form: ``0.5`` → ``500m``."""
    return format_quantity(parse_quantity(value))
