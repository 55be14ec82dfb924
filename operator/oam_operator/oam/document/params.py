"""kurel package parameters (docs/transform.md#package-parameters): ``kurel.yaml``, ``--values``, ``--set``,
``${param}``.

A package turns an Application into a template: ``kurel.yaml`` declares typed parameters,
``--values``/``--set`` supply them, and every ``${name}`` in a scalar value of the application
YAML is replaced before the document is parsed. Only ``oam-operator build`` uses packages; the
controller sees finished Applications.

Decisions recorded here, where the spec is silent:

* ``kurel.yaml`` is decoded strictly: top level ``apiVersion``, ``kind``, ``metadata``
  (``name``, ``version``, ``description``), ``spec`` (``parameters``); an unsupported parameter
  key is ``parse error in Package at line <N>: kurel parameter: unsupported field …`` (keys in
  sorted order); a non-boolean ``required`` is ``… parameters[<i>].required: expected a
  boolean, got <T>``; an empty ``type`` is an invalid type; a null ``default`` is no default;
* a string parameter's default that is a list or mapping is
  ``parameter "<n>" (type string) has default of type <T>; expected a string scalar value``;
  a non-boolean, non-string value for a boolean parameter is
  ``parameter "<n>" (type boolean): cannot coerce <T> to boolean``, and a placeholder default
  that resolves to no boolean is ``default for parameter "<n>" resolved to "<s>" which is not
  a valid boolean (use true or false)``;
* a placeholder is ``${`` + one or more characters other than ``}`` + ``}``; a default may
  reference any parameter that already has a value (supplied, or an earlier default);
* a values file holds one YAML document (the first is read, as Go's decoder does); its
  syntax errors are ``parsing values file "<p>": …``;
* substitution replaces the scalar's source text in place and keeps every line where it was,
  so later parse errors point at the template's own lines; an application that is not valid
  YAML is left alone for the parser to report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from oam_operator.oam.document.document import LAUNCHER_API_VERSION, _api_version_error, _Decoder
from oam_operator.oam.document.loader import CoreLoader, YamlSyntaxError, load_all, load_one
from oam_operator.oam.errors import ParameterError, ValidationError
from oam_operator.oam.formatting.gofmt import format_float, go_quote, go_type_name, go_value

STRING = "string"
INTEGER = "integer"
BOOLEAN = "boolean"
TYPES = (STRING, INTEGER, BOOLEAN)
PARAMETER_KEYS = ("default", "description", "name", "required", "type")
PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
          "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}  # fmt: skip
_INT64_MAX = (1 << 63) - 1
_UNPRINTABLE = (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)


@dataclass
class Parameter:
    name: str
    type: str
    required: bool = False
    default: Any = None
    description: str = ""


@dataclass
class Package:
    api_version: str
    kind: str
    name: str
    version: str = ""
    description: str = ""
    parameters: list[Parameter] = field(default_factory=list)

    def declared(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}


# --------------------------------------------------------------------------------------------
# kurel.yaml (docs/transform.md#package-parameters)


def _decode_package(value: Any, dec: _Decoder) -> Package:
    root = dec.mapping(None, None, value)
    dec.known(root, ("apiVersion", "kind", "metadata", "spec"), "document")
    meta = dec.mapping(root, "metadata", root.get("metadata"))
    dec.known(meta, ("name", "version", "description"), "metadata")
    spec = dec.mapping(root, "spec", root.get("spec"))
    dec.known(spec, ("parameters",), "spec")
    parameters: list[Parameter] = []
    for i, item in enumerate(dec.sequence(spec, "parameters", spec.get("parameters"))):
        raw = dec.mapping(None, None, item) if item is not None else {}
        for key in sorted(raw):
            if key not in PARAMETER_KEYS:
                line = dec.lines.key_line(raw, key) if dec.lines is not None else None
                raise dec.error(
                    f"kurel parameter: unsupported field {go_quote(key)} (allowed: {', '.join(PARAMETER_KEYS)})", line
                )
        required = raw.get("required")
        if required is not None and not isinstance(required, bool):
            line = dec.lines.value_line(raw, "required") if dec.lines is not None else None
            raise dec.error(f"parameters[{i}].required: expected a boolean, got {go_type_name(required)}", line)
        parameters.append(
            Parameter(
                name=dec.string(raw, "name"),
                type=dec.string(raw, "type"),
                required=bool(required),
                default=raw.get("default"),
                description=dec.string(raw, "description"),
            )
        )
    return Package(
        api_version=dec.string(root, "apiVersion"),
        kind=dec.string(root, "kind"),
        name=dec.string(meta, "name"),
        version=dec.string(meta, "version"),
        description=dec.string(meta, "description"),
        parameters=parameters,
    )


def _check_default(p: Parameter) -> None:
    default, quoted = p.default, go_quote(p.name)
    if default is None:
        return
    if isinstance(default, str):
        if "${" in default:
            return
        if p.type == INTEGER and parse_decimal(default) is None:
            raise ValidationError(f"parameter {quoted} has default {go_quote(default)} which is not a valid integer")
        if p.type == BOOLEAN and default not in _BOOLS:
            raise ValidationError(
                f"parameter {quoted} has default {go_quote(default)} which is not a valid boolean (use true or false)"
            )
        return
    if p.type == INTEGER:
        if isinstance(default, float) and not is_whole(default):
            raise ValidationError(
                f"parameter {quoted} has fractional default {format_float(default, 6)}; "
                "integer parameters require whole numbers"
            )
        if isinstance(default, bool) or not isinstance(default, int | float):
            raise ValidationError(
                f"parameter {quoted} (type integer) has default of type {go_type_name(default)}; "
                "expected a whole number"
            )
    elif p.type == BOOLEAN and not isinstance(default, bool):
        raise ValidationError(
            f"parameter {quoted} (type boolean) has default of type {go_type_name(default)}; expected true or false"
        )
    elif p.type == STRING and isinstance(default, list | dict):
        raise ValidationError(
            f"parameter {quoted} (type string) has default of type {go_type_name(default)}; "
            "expected a string scalar value"
        )


def validate_package(package: Package) -> None:
    """The docs/transform.md#package-parameters checks in order (``ValidationError``)."""
    if package.api_version not in ("oam-operator.dev/v1alpha1", LAUNCHER_API_VERSION):
        raise _api_version_error(package.api_version)
    if package.kind != "Package":
        raise ValidationError(f"expected kind Package, got {go_quote(package.kind)}")
    if not package.name:
        raise ValidationError("metadata.name is required")
    seen: set[str] = set()
    for i, p in enumerate(package.parameters):
        if not p.name:
            raise ValidationError(f"parameters[{i}].name is required")
        if p.name in seen:
            raise ValidationError(f"duplicate parameter name {go_quote(p.name)}")
        seen.add(p.name)
        if p.type not in TYPES:
            raise ValidationError(
                f"parameter {go_quote(p.name)} has invalid type {go_quote(p.type)}; "
                "supported types: string, integer, boolean"
            )
        _check_default(p)


def parse_package(text: str) -> Package:
    """Load, decode and validate a ``kurel.yaml``."""
    value, lines = load_one(text, "Package")
    package = _decode_package(value, _Decoder("Package", lines))
    validate_package(package)
    return package


# --------------------------------------------------------------------------------------------
# Supplied values (docs/transform.md#package-parameters)


def parse_values(text: str, path: str) -> dict[str, Any]:
    """A ``--values`` file: a YAML mapping; an empty file supplies nothing."""
    try:
        documents = load_all(text)
    except YamlSyntaxError as exc:
        where = f"line {exc.line}: " if exc.line is not None else ""
        raise ValidationError(f"parsing values file {go_quote(path)}: {where}{exc.cause}") from None
    if not documents:
        return {}
    value = documents[0][0]
    if not isinstance(value, dict):
        raise ValidationError(
            f"values file {go_quote(path)} must be a YAML mapping (key: value pairs), got {go_type_name(value)}"
        )
    return value


def parse_set(pairs: Iterable[str]) -> dict[str, str]:
    """``--set key=value`` flags, in order (a later one wins); the value is a string."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError(f"--set {go_quote(pair)}: expected key=value format")
        out[key] = value
    return out


def missing_package_error(app_dir: str) -> ValidationError:
    return ValidationError(f"--values and --set require a kurel.yaml package descriptor in {go_quote(app_dir)}")


# --------------------------------------------------------------------------------------------
# Resolution (docs/transform.md#package-parameters)


def is_whole(value: float) -> bool:
    return math.isfinite(value) and value.is_integer()


def parse_decimal(text: str) -> int | None:
    """Go's ``strconv.Atoi``: an optional sign and decimal digits, within int64."""
    if not _DECIMAL.fullmatch(text):
        return None
    number = int(text)
    return number if -_INT64_MAX - 1 <= number <= _INT64_MAX else None


def coerce(p: Parameter, value: Any) -> Any:
    """A supplied value converted to the parameter's type (``ParameterError``)."""
    where = f"parameter {go_quote(p.name)} (type {p.type})"
    if p.type == INTEGER:
        if isinstance(value, bool):
            raise ParameterError(f"{where}: cannot coerce bool to integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if not is_whole(value):
                raise ParameterError(
                    f"{where}: {format_float(value, 6)} is not a valid integer (fractional values are not allowed)"
                )
            return int(value)
        if isinstance(value, str):
            number = parse_decimal(value)
            if number is None:
                raise ParameterError(f"{where}: {go_quote(value)} is not a valid integer")
            return number
        raise ParameterError(f"{where}: cannot coerce {go_type_name(value)} to integer")
    if p.type == BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            if value not in _BOOLS:
                raise ParameterError(f"{where}: {go_quote(value)} is not a valid boolean (use true or false)")
            return _BOOLS[value]
        raise ParameterError(f"{where}: cannot coerce {go_type_name(value)} to boolean")
    if value is None:
        raise ParameterError(f"{where}: null is not a valid string value")
    if isinstance(value, list | dict):
        raise ParameterError(f"{where}: got {go_type_name(value)}, expected a string scalar value")
    return go_value(value)


def value_text(value: Any) -> str:
    """The text a typed value contributes inside a longer string."""
    return go_value(value)


def _resolve_default(p: Parameter, values: Mapping[str, Any]) -> Any:
    default = p.default
    if not (isinstance(default, str) and "${" in default):
        return coerce(p, default)

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ParameterError(
                f"default for parameter {go_quote(p.name)} references {go_quote(name)} which has no value yet; "
                "only earlier parameters may be referenced in defaults"
            )
        return value_text(values[name])

    text = PLACEHOLDER.sub(replace, default)
    if p.type == INTEGER:
        number = parse_decimal(text)
        if number is None:
            raise ParameterError(
                f"default for parameter {go_quote(p.name)} resolved to {go_quote(text)} which is not a valid integer"
            )
        return number
    if p.type == BOOLEAN:
        if text not in _BOOLS:
            raise ParameterError(
                f"default for parameter {go_quote(p.name)} resolved to {go_quote(text)} which is not a valid boolean "
                "(use true or false)"
            )
        return _BOOLS[text]
    return text


def resolve_parameters(package: Package, supplied: Mapping[str, Any]) -> dict[str, Any]:
    """Effective values: supplied values coerced, then defaults in declaration order."""
    declared = package.declared()
    values: dict[str, Any] = {}
    for key in sorted(supplied):
        if key in declared:
            values[key] = coerce(declared[key], supplied[key])
    for key in sorted(supplied):
        if key not in declared:
            raise ParameterError(f"parameter {go_quote(key)} is not declared in kurel.yaml")
    for p in package.parameters:
        if p.name not in values and p.default is not None:
            values[p.name] = _resolve_default(p, values)
    for p in package.parameters:
        if p.required and p.name not in values:
            raise ParameterError(f"required parameter {go_quote(p.name)} is not set; provide it with --values or --set")
    return values


# --------------------------------------------------------------------------------------------
# Substitution in the application YAML (docs/transform.md#package-parameters)


def yaml_double_quoted(text: str) -> str:
    """A YAML double-quoted scalar for ``text`` (non-printable characters escaped)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF or code in _UNPRINTABLE:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _substituted(scalar: str, declared: Mapping[str, Parameter], values: Mapping[str, Any]) -> str:
    """The YAML text replacing one scalar value that holds placeholders."""
    for name in PLACEHOLDER.findall(scalar):
        if name not in declared:
            raise ParameterError(f"undeclared parameter {go_quote(name)} referenced in application template")
        if name not in values:
            raise ParameterError(f"parameter {go_quote(name)} has no value; set it with --values or --set")
    whole = PLACEHOLDER.fullmatch(scalar)
    if whole is not None:
        value = values[whole.group(1)]
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return yaml_double_quoted(str(value))
    return yaml_double_quoted(PLACEHOLDER.sub(lambda m: value_text(values[m.group(1)]), scalar))


def _placeholder_scalars(node: yaml.Node, seen: set[int], out: list[yaml.ScalarNode]) -> None:
    """Scalar values (never keys) holding a placeholder, in document order; aliases once."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            _placeholder_scalars(value, seen, out)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _placeholder_scalars(item, seen, out)
    elif isinstance(node, yaml.ScalarNode) and PLACEHOLDER.search(str(node.value)):
        out.append(node)


def substitute(text: str, package: Package, values: Mapping[str, Any]) -> str:
    """Replace every ``${name}`` in the application's scalar values (``ParameterError``)."""
    try:
        roots = [node for node in yaml.compose_all(text, Loader=CoreLoader) if node is not None]
    except yaml.YAMLError:
        return text
    scalars: list[yaml.ScalarNode] = []
    seen: set[int] = set()
    for root in roots:
        if isinstance(root, yaml.MappingNode | yaml.SequenceNode):  # a bare scalar document is no value
            _placeholder_scalars(root, seen, scalars)
    declared = package.declared()
    edits: list[tuple[int, int, str]] = []
    for node in scalars:
        start, end = node.start_mark.index, node.end_mark.index
        replacement = _substituted(str(node.value), declared, values)
        edits.append((start, end, replacement + "\n" * text.count("\n", start, end)))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
