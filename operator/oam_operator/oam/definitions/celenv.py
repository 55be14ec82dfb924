"""CEL expressions of a definition: compiled type-checked against its parameters, with limits
(docs/definitions.md#cel, docs/definitions.md#limits).

The runtime is cel-expr-python (Google's cel-cpp). Each parameter is declared as its own
qualified variable (``parameters.replicas`` of type int), so a reference to an undeclared
parameter and a type mismatch are refused when the definition is admitted, with the position
the checker reports. CEL reaches only the values handed to it: no function reads the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_math, ext_optional, ext_strings

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.errors import OamError

#: The longest expression a definition may hold, in characters.
MAX_EXPRESSION_CHARS = 2048
#: The static cost limit of one expression: each comprehension macro counts as a pass over a list
#: of ``COMPREHENSION_COST`` elements, nested or not (the runtime offers no cost meter).
MAX_EXPRESSION_COST = 1_000_000
COMPREHENSION_COST = 1000
#: The largest value one expression may produce, as characters of its JSON form.
MAX_VALUE_CHARS = 64 * 1024

CONTEXT_VARIABLES = ("appName", "componentName", "namespace")
_MACRO = re.compile(r"\.\s*(?:map|filter|all|exists|exists_one)\s*\(")
_STRING_LITERAL = re.compile(r"'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"", re.S)
_POSITION = re.compile(r"ERROR: <input>:(\d+):(\d+): ([^\n]*)")


class ExpressionError(OamError):
    """A CEL expression refused when compiled or evaluated."""


def cel_type(schema: PropertySchema) -> Any:
    """The CEL type of a parameter of ``schema``'s type."""
    return {
        "string": cel.Type.STRING,
        "integer": cel.Type.INT,
        "number": cel.Type.DOUBLE,
        "boolean": cel.Type.BOOL,
        "array": cel.Type.List(cel_type(schema.items) if schema.items is not None else cel.Type.DYN),
        "object": cel.Type.Map(cel.Type.STRING, cel.Type.DYN),
    }.get(schema.type, cel.Type.DYN)


def static_cost(source: str) -> int:
    """The expression's static cost (docs/definitions.md#limits): its length times the sum, over
    its comprehension macros, of ``COMPREHENSION_COST`` to the power of the macro's nesting level
    (1 outside any other macro): macros one after the other add, nested ones multiply."""
    text = _STRING_LITERAL.sub(lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", source)
    spans = [(m.end() - 1, _closing_paren(text, m.end() - 1)) for m in _MACRO.finditer(text)]
    weight: int = sum(COMPREHENSION_COST ** (1 + sum(1 for o in spans if o[0] < start < o[1])) for start, _ in spans)
    return len(source) * max(weight, 1)


def _closing_paren(text: str, opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening`` (string literals blanked), or the end."""
    depth = 0
    for i in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return len(text)


def first_error(text: str) -> str:
    """``<line>:<column>: <message>`` of the checker's first error."""
    match = _POSITION.search(text)
    return f"{match.group(1)}:{match.group(2)}: {match.group(3)}" if match else text.strip()


@dataclass(frozen=True)
class Environment:
    """The declarations expressions are checked against: one variable per parameter and the context."""

    env: Any

    @classmethod
    def for_parameters(cls, parameters: Mapping[str, PropertySchema]) -> Environment:
        variables = {f"parameters.{name}": cel_type(schema) for name, schema in parameters.items()}
        variables.update({f"context.{name}": cel.Type.STRING for name in CONTEXT_VARIABLES})
        extensions = [ext_strings.ExtStrings(), ext_math.ExtMath(), ext_optional.ExtOptional()]
        return cls(cel.NewEnv(variables=variables, extensions=extensions))

    def compile(self, source: str) -> Expression:
        """The checked expression, or ``ExpressionError`` with the checker's position and message."""
        return Expression(source, checked(self.env, source, ExpressionError))


def checked(env: Any, source: str, error: type[OamError]) -> Any:
    """``source`` compiled in the cel environment ``env`` within the limits (docs/definitions.md#limits),
    or ``error`` with the length, the cost, or the checker's position and message."""
    if len(source) > MAX_EXPRESSION_CHARS:
        raise error(f"expression is {len(source)} characters, over the limit of {MAX_EXPRESSION_CHARS}")
    cost = static_cost(source)
    if cost > MAX_EXPRESSION_COST:
        raise error(f"expression cost {cost} exceeds the limit of {MAX_EXPRESSION_COST}")
    try:
        return env.compile(source)
    except RuntimeError as exc:
        raise error(first_error(str(exc))) from None


@dataclass(frozen=True)
class Expression:
    source: str
    compiled: Any

    def evaluate(self, data: Mapping[str, Any]) -> Any:
        """The expression's plain value over ``data`` (the qualified variables), or ``ExpressionError``."""
        result = self.compiled.eval(data=dict(data))
        if result.type().name() == "ERROR":
            raise ExpressionError(str(result.value()).removeprefix("INVALID_ARGUMENT: ").removeprefix("UNKNOWN: "))
        value = plain(result.plain_value())
        if len(repr(value)) > MAX_VALUE_CHARS:
            raise ExpressionError(f"value is larger than the limit of {MAX_VALUE_CHARS} characters")
        return value


def plain(value: Any) -> Any:
    """A JSON-shaped copy of a CEL result: maps and lists recursively, bytes as text, a timestamp
    as RFC 3339 (``2024-01-02T03:04:05Z``), a duration as seconds (``90s``), a type by its name."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g}s"
    return str(value.name() if hasattr(value, "name") else value)
