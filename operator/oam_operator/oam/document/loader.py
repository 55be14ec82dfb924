"""YAML input loading with Go yaml.v3's core-schema typing (docs/transform.md#loading-yaml).

PyYAML resolves YAML 1.1 (``yes``/``on`` as booleans); kurel's loader resolves the YAML 1.2
core schema, so ``yes`` stays a string. We compose nodes with ``CSafeLoader`` under a resolver
restricted to core-schema scalars and build plain Python values ourselves, which also gives us
duplicate-key detection and the line of every key for messages.

Decisions recorded here: mapping keys become their scalar text (``80: x`` has key ``"80"``);
the YAML 1.1 merge key ``<<`` is an ordinary key; explicit tags other than the core ones keep
the scalar's text; alias expansion is bounded to stop "billion laughs" documents.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from oam_operator.oam.errors import ParseError

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

NULL_TAG = "tag:yaml.org,2002:null"
BOOL_TAG = "tag:yaml.org,2002:bool"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"

_MAX_EXPANDED_NODES = 2_000_000


class CoreLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader whose implicit typing is the YAML 1.2 core schema."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012


CoreLoader.add_implicit_resolver(BOOL_TAG, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), None)
CoreLoader.add_implicit_resolver(NULL_TAG, re.compile(r"^(?:~|null|Null|NULL|)$"), None)
CoreLoader.add_implicit_resolver(INT_TAG, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), None)
CoreLoader.add_implicit_resolver(
    FLOAT_TAG,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    None,
)


class YamlSyntaxError(Exception):
    """A YAML-level failure with an optional 1-based line; callers add their own prefix."""

    def __init__(self, cause: str, line: int | None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.line = line


@dataclass
class LineIndex:
    """Lines of the keys and values of every decoded mapping (1-based), for messages."""

    _keys: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)
    _containers: dict[int, int] = field(default_factory=dict)
    _raw: dict[int, dict[str, str]] = field(default_factory=dict)
    _keep: list[Any] = field(default_factory=list)

    def record_container(self, value: Any, line: int) -> None:
        self._containers[id(value)] = line
        self._keep.append(value)

    def record_key(self, mapping: dict[str, Any], key: str, key_line: int, value_line: int) -> None:
        self._keys.setdefault(id(mapping), {})[key] = (key_line, value_line)

    def record_raw(self, mapping: dict[str, Any], key: str, text: str) -> None:
        self._raw.setdefault(id(mapping), {})[key] = text

    def raw_text(self, mapping: Any, key: str) -> str | None:
        """The source text of a scalar value (Go decodes any scalar into a string field as written)."""
        return self._raw.get(id(mapping), {}).get(key)

    def key_line(self, mapping: Any, key: str) -> int | None:
        entry = self._keys.get(id(mapping), {}).get(key)
        return entry[0] if entry else None

    def value_line(self, mapping: Any, key: str) -> int | None:
        entry = self._keys.get(id(mapping), {}).get(key)
        return entry[1] if entry else None

    def line(self, container: Any) -> int | None:
        return self._containers.get(id(container))


def _int_value(text: str) -> int:
    if text.startswith("0x"):
        return int(text[2:], 16)
    if text.startswith("0o"):
        return int(text[2:], 8)
    try:
        return int(text, 10)
    except ValueError:
        return int(text, 0)


def _float_value(text: str) -> float:
    lowered = text.lower()
    if lowered in (".inf", "+.inf"):
        return math.inf
    if lowered == "-.inf":
        return -math.inf
    if lowered == ".nan":
        return math.nan
    return float(text)


class _Builder:
    def __init__(self, index: LineIndex) -> None:
        self.index = index
        self.expanded = 0
        self.active: set[int] = set()

    def build(self, node: yaml.Node) -> Any:
        self.expanded += 1
        if self.expanded > _MAX_EXPANDED_NODES:
            raise YamlSyntaxError("document too large after alias expansion", node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if id(node) in self.active:
            raise YamlSyntaxError("recursive alias", node.start_mark.line + 1)
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                seq: list[Any] = []
                self.index.record_container(seq, node.start_mark.line + 1)
                for item in node.value:
                    seq.append(self.build(item))
                return seq
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node)
        finally:
            self.active.discard(id(node))
        raise YamlSyntaxError(f"unsupported node {type(node).__name__}", node.start_mark.line + 1)

    def mapping(self, node: yaml.MappingNode) -> dict[str, Any]:
        result: dict[str, Any] = {}
        self.index.record_container(result, node.start_mark.line + 1)
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlSyntaxError("mapping keys must be scalars", key_line)
            key = str(key_node.value)
            if key in result:
                raise YamlSyntaxError(f'mapping key "{key}" already defined', key_line)
            result[key] = self.build(value_node)
            self.index.record_key(result, key, key_line, value_node.start_mark.line + 1)
            if isinstance(value_node, yaml.ScalarNode) and value_node.tag != NULL_TAG:
                self.index.record_raw(result, key, str(value_node.value))
        return result

    @staticmethod
    def scalar(node: yaml.ScalarNode) -> Any:
        tag, text = node.tag, node.value
        try:
            if tag == NULL_TAG:
                return None
            if tag == BOOL_TAG:
                return text in ("true", "True", "TRUE")
            if tag == INT_TAG:
                return _int_value(text)
            if tag == FLOAT_TAG:
                return _float_value(text)
        except ValueError as exc:
            raise YamlSyntaxError(
                f"cannot decode {text!r} as {tag.rsplit(':', 1)[-1]}", node.start_mark.line + 1
            ) from exc
        return text


def _is_empty_document(node: yaml.Node | None) -> bool:
    return node is None or (isinstance(node, yaml.ScalarNode) and node.tag == NULL_TAG and node.value == "")


def load_all(text: str) -> list[tuple[Any, LineIndex]]:
    """Every non-empty document of a stream as ``(value, lines)``; raises :class:`YamlSyntaxError`."""
    try:
        nodes = list(yaml.compose_all(text, Loader=CoreLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlSyntaxError(problem, mark.line + 1 if mark is not None else None) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(str(exc).strip() or "invalid YAML", None) from exc
    documents: list[tuple[Any, LineIndex]] = []
    for node in nodes:
        if _is_empty_document(node):
            continue
        index = LineIndex()
        try:
            value = _Builder(index).build(node)
        except RecursionError as exc:
            raise YamlSyntaxError("document nesting too deep", node.start_mark.line + 1) from exc
        documents.append((value, index))
    return documents


def parse_error(kind: str, cause: str, line: int | None) -> ParseError:
    """``parse error in <Kind>[ at line <N>]: <cause>`` (docs/transform.md#loading-yaml)."""
    where = f" at line {line}" if line is not None else ""
    return ParseError(f"parse error in {kind}{where}: {cause}")


def load_one(text: str, kind: str) -> tuple[Any, LineIndex]:
    """Exactly one non-empty document, else the docs/transform.md#loading-yaml parse errors for ``kind``."""
    try:
        documents = load_all(text)
    except YamlSyntaxError as exc:
        raise parse_error(kind, exc.cause, exc.line) from exc
    if not documents:
        raise parse_error(kind, "no documents found", None)
    if len(documents) > 1:
        raise parse_error(kind, f"expected one document, found {len(documents)}", None)
    return documents[0]
