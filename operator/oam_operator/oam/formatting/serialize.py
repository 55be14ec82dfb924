"""The YAML emitter of ``oam-operator build`` (docs/transform.md#output).

kurel prints objects with go-yaml v2 (a port of libyaml's emitter). We use libyaml's emitter
through PyYAML's ``CSafeDumper`` when available and reproduce go-yaml's choices on top of it:

* a string is double-quoted when go-yaml's resolver would read its plain form as another type
  (YAML 1.1: ``"true"``, ``"yes"``, ``"200"``, ``"0x1F"``, ``"2024-01-01"``, base-60 ``"1:20"``);
  it is written as a literal block when it contains a newline; otherwise plain, and the emitter
  falls back to single quotes where plain is not allowed (``'@daily'``);
* floats in Go's shortest ``%v`` form, integers in decimal, keys sorted by code point, block
  style, sequences not indented under their key, lines folded at 80 columns.

Decision recorded here: keys are sorted in Unicode code point order as the spec states.
(go-yaml v2's own sorter orders digit runs numerically and non-letters before letters; the two
agree on every key kurel's reference outputs contain.)
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable
from typing import Any

import yaml

from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.formatting.gofmt import format_float

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_TAG = "tag:yaml.org,2002:"
_RESOLVE_MAP: dict[str, str] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), "bool"),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), "bool"),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), "null"),
    **dict.fromkeys((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF"), "float"),
    **dict.fromkeys(("+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"), "float"),
    "<<": "merge",
}
_HINTED = frozenset("+-0123456789yYnNtTfFoO~.")
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_DOT_FLOAT_RE = re.compile(r"^\.[0-9]+([eE][-+]?[0-9]+)?$")
_BASE60_RE = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_DATE = r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
_TIME = r"([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.[0-9]+)?"
_TIMESTAMP_RES = (
    re.compile(f"^{_DATE}[Tt]{_TIME}(?:Z|[-+][0-9]{{2}}:[0-9]{{2}})$"),
    re.compile(f"^{_DATE} {_TIME}$"),
    re.compile(f"^{_DATE}$"),
)
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _go_parse_int(text: str, signed: bool) -> bool:
    """Whether Go's ``strconv.ParseInt/ParseUint(text, 0, 64)`` accepts ``text``."""
    negative = False
    if signed and text[:1] in ("+", "-"):
        negative = text[0] == "-"
        text = text[1:]
    prefix = text[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        base, digits = {"0x": 16, "0o": 8, "0b": 2}[prefix], text[2:]
    elif text[:1] == "0" and len(text) > 1:
        base, digits = 8, text[1:]
    else:
        base, digits = 10, text
    if not digits or any(ch not in _DIGITS[base] for ch in digits):
        return False
    value = int(digits, base)
    if not signed:
        return value < 1 << 64
    return value <= (1 << 63) - 1 + (1 if negative else 0)


def _is_timestamp(text: str) -> bool:
    for pattern in _TIMESTAMP_RES:
        match = pattern.fullmatch(text)
        if match is None:
            continue
        year, month, day = (int(g) for g in match.groups()[:3])
        try:
            datetime.date(year or 2000, month, day)
        except ValueError:
            return False
        if len(match.groups()) > 3:
            hour, minute, second = (int(g) for g in match.groups()[3:6])
            if hour > 23 or minute > 59 or second > 59:
                return False
        return True
    return False


def go_plain_kind(text: str) -> str:
    """The type go-yaml v2 resolves a plain scalar to: str, bool, null, int, float, timestamp, merge."""
    first = text[:1]
    if first and first not in _HINTED:
        return "str"  # go-yaml consults its table only for these first characters
    if text in _RESOLVE_MAP:
        return _RESOLVE_MAP[text]
    if first == ".":
        return "float" if _DOT_FLOAT_RE.fullmatch(text) else "str"
    if first and (first in "+-" or "0" <= first <= "9"):
        if text[:4].isdigit() and text[4:5] == "-" and _is_timestamp(text):
            return "timestamp"
        plain = text.replace("_", "")
        if _go_parse_int(plain, True) or _go_parse_int(plain, False):
            return "int"
        if _FLOAT_RE.fullmatch(plain) and not math.isinf(float(plain)):
            return "float"
    return "str"


def needs_double_quotes(text: str) -> bool:
    """go-yaml v2 refuses the plain style when the text would read back as another type."""
    return go_plain_kind(text) != "str" or _BASE60_RE.fullmatch(text) is not None


class KurelDumper(_Dumper):  # type: ignore[misc, valid-type]
    """A dumper whose typing and quoting follow go-yaml v2."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0]:
                return _TAG + go_plain_kind(value)
            return _TAG + "str"
        return str(super().resolve(kind, value, implicit))


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        style: str | None = "|"
    elif needs_double_quotes(data):
        style = '"'
    else:
        style = None
    return dumper.represent_scalar(_TAG + "str", data, style=style)


def _represent_float(dumper: yaml.SafeDumper, data: float) -> yaml.Node:
    if math.isnan(data):
        text = ".nan"
    elif math.isinf(data):
        text = ".inf" if data > 0 else "-.inf"
    else:
        text = format_float(data, 21)
    return dumper.represent_scalar(_TAG + ("int" if go_plain_kind(text) == "int" else "float"), text)


def _represent_bool(dumper: yaml.SafeDumper, data: bool) -> yaml.Node:
    return dumper.represent_scalar(_TAG + "bool", "true" if data else "false")


def _represent_none(dumper: yaml.SafeDumper, data: None) -> yaml.Node:
    return dumper.represent_scalar(_TAG + "null", "null")


def _represent_int(dumper: yaml.SafeDumper, data: int) -> yaml.Node:
    return dumper.represent_scalar(_TAG + "int", str(data))


def _represent_list(dumper: yaml.SafeDumper, data: Iterable[Any]) -> yaml.Node:
    return dumper.represent_sequence(_TAG + "seq", list(data))


KurelDumper.add_representer(str, _represent_str)
KurelDumper.add_representer(float, _represent_float)
KurelDumper.add_representer(bool, _represent_bool)
KurelDumper.add_representer(type(None), _represent_none)
KurelDumper.add_representer(int, _represent_int)
KurelDumper.add_representer(tuple, _represent_list)
KurelDumper.add_multi_representer(dict, lambda d, data: d.represent_mapping(_TAG + "map", dict(data)))
KurelDumper.add_multi_representer(list, _represent_list)


def dump_document(value: Any) -> str:
    """One YAML document in kurel's style, ending with a newline."""
    text: str = yaml.dump(
        value,
        Dumper=KurelDumper,
        default_flow_style=False,
        allow_unicode=True,
        sort_keys=True,
        width=80,
        indent=2,
    )
    if text.endswith("\n...\n") and not _ends_keep_chomped(value):
        # libyaml keeps a stream "open-ended" after any ``|+`` scalar; go-yaml only when that
        # scalar is the last thing written, so it closes the stream with ``...`` only then.
        text = text[: -len("...\n")]
    return text


def _ends_keep_chomped(value: Any) -> bool:
    """Whether the last scalar emitted for ``value`` is a keep-chomped (``|+``) block scalar."""
    while True:
        if isinstance(value, dict) and value:
            value = value[max(value)]
        elif isinstance(value, list | tuple) and value:
            value = value[-1]
        else:
            break
    return isinstance(value, str) and (value == "\n" or value.endswith("\n\n"))


def dump_objects(objects: Iterable[Object]) -> str:
    """Objects as a stream joined by ``---`` lines, no leading separator
    (docs/transform.md#output-stream-and-object-content)."""
    return "---\n".join(dump_document(obj) for obj in objects)
