"""Object templates with ``${…}`` CEL in their values (docs/definitions.md#templates).

A string that is exactly one ``${expr}`` takes the expression's value with its type (a number
stays a number, a list a list); ``${…}`` inside a longer string is replaced by the value's
text. Map keys are literal. Every expression is compiled when the definition is read, so its
errors name the field path before anything is rendered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.oam.definitions.celenv import Environment, Expression, ExpressionError
from oam_operator.oam.errors import OamError


class TemplateError(OamError):
    """A template refused: the field path, then the reason."""


@dataclass(frozen=True)
class Piece:
    """A literal text or a compiled expression of one templated string."""

    text: str = ""
    expression: Expression | None = None


def split(text: str) -> list[tuple[str, bool]]:
    """``text`` as (literal, False) and (expression source, True) pieces; braces and quotes inside
    ``${…}`` are balanced so a map literal or a string with ``}`` stays one expression."""
    pieces: list[tuple[str, bool]] = []
    i = start = 0
    while i < len(text):
        if text.startswith("${", i):
            if i > start:
                pieces.append((text[start:i], False))
            end = _closing(text, i + 2)
            pieces.append((text[i + 2 : end], True))
            i = start = end + 1
            continue
        i += 1
    if start < len(text):
        pieces.append((text[start:], False))
    return pieces


def _closing(text: str, i: int) -> int:
    depth, quote = 0, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    raise ExpressionError("unterminated ${ (no closing })")


@dataclass(frozen=True)
class Template:
    """A compiled value tree: strings with expressions become lists of pieces."""

    root: Any

    @classmethod
    def compile(cls, value: Any, env: Environment, path: str) -> Template:
        return cls(_compile(value, env, path))

    def render(self, data: Mapping[str, Any], path: str) -> Any:
        return _render(self.root, data, path)


def _compile(value: Any, env: Environment, path: str) -> Any:
    if isinstance(value, dict):
        return {k: _compile(v, env, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_compile(v, env, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value
    try:
        return [Piece(expression=env.compile(src)) if is_expr else Piece(text=src) for src, is_expr in split(value)]
    except ExpressionError as exc:
        raise TemplateError(f"{path}: {exc.message}") from None


def _render(node: Any, data: Mapping[str, Any], path: str) -> Any:
    if isinstance(node, dict):
        return {k: _render(v, data, f"{path}.{k}") for k, v in node.items()}
    if isinstance(node, list) and not (node and isinstance(node[0], Piece)):
        return [_render(v, data, f"{path}[{i}]") for i, v in enumerate(node)]
    if not isinstance(node, list):
        return node
    try:
        values = [p.expression.evaluate(data) if p.expression is not None else p.text for p in node]
    except ExpressionError as exc:
        raise TemplateError(f"{path}: {exc.message}") from None
    if len(node) == 1 and node[0].expression is not None:
        return values[0]
    return "".join(v if isinstance(v, str) else json.dumps(v) for v in values)
