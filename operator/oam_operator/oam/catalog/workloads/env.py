"""Container ``env`` and ``envFrom`` (docs/transform.md#shared-workload-properties).

Entries become Kubernetes ``EnvVar``/``EnvFromSource`` objects in authored order, shaped as
the typed API objects serialise (unset optional fields omitted).

Decisions recorded here: a ``resourceFieldRef`` without ``divisor`` is printed with
``divisor: "0"``, as the typed ``ResourceFieldSelector`` kurel builds serialises its zero
quantity; a selector that is not a mapping, or lacks a required field, is not usable
(``invalid valueFrom``); a ``value`` that is not a string is refused with
``env "<n>": value: must be a string, got <T>``.
"""

from __future__ import annotations

from typing import Any

from oam_operator.common.dns1123 import dns1123_subdomain_errors
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value
from oam_operator.oam.formatting.quantity import QuantityError, canonical_quantity

Object = dict[str, Any]

#: selector -> (required fields, optional fields), in the order messages name them.
SELECTORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "secretKeyRef": (("name", "key"), ("optional",)),
    "configMapKeyRef": (("name", "key"), ("optional",)),
    "fieldRef": (("fieldPath",), ("apiVersion",)),
    "resourceFieldRef": (("resource",), ("containerName", "divisor")),
    "fileKeyRef": (("volumeName", "path", "key"), ("optional",)),
}
_EXCLUSIVE = (
    "valueFrom: secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, and fileKeyRef are mutually exclusive"
)
_INVALID = (
    "invalid valueFrom: must contain a valid secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef, or fileKeyRef"
)


def _selector(name: str, kind: str, raw: Object) -> Object | None:
    """The selector as emitted, or ``None`` when a required field is missing."""
    required, optional = SELECTORS[kind]
    for key in sorted(raw):
        if key not in required and key not in optional:
            raise ValidationError(f"env {go_quote(name)}: {kind}: unrecognized key {go_quote(key)}")
    out: Object = {}
    for key in required:
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            return None
        out[key] = value
    for key in optional:
        value = raw.get(key)
        if value is None:
            continue
        if key == "optional":
            if not isinstance(value, bool):
                raise ValidationError(
                    f"env {go_quote(name)}: {kind}.optional: must be a bool, got {go_type_name(value)}"
                )
            out[key] = value
        elif key == "divisor":
            try:
                out[key] = canonical_quantity(value)
            except QuantityError as exc:
                text = value if isinstance(value, str) else go_value(value)
                raise ValidationError(
                    f"env {go_quote(name)}: {kind}.divisor: invalid quantity {go_quote(text)}: {exc.message}"
                ) from exc
        elif isinstance(value, str):
            if value:
                out[key] = value
        else:
            raise ValidationError(f"env {go_quote(name)}: {kind}.{key}: must be a string, got {go_type_name(value)}")
    if kind == "resourceFieldRef":
        out.setdefault("divisor", "0")
    return out


def _value_from(name: str, raw: Any) -> Object:
    if not isinstance(raw, dict):
        raise ValidationError(f"env {go_quote(name)}: {_INVALID}")
    present = [k for k in SELECTORS if raw.get(k) is not None]
    if len(present) > 1:
        raise ValidationError(f"env {go_quote(name)}: {_EXCLUSIVE}")
    if not present or not isinstance(raw[present[0]], dict):
        raise ValidationError(f"env {go_quote(name)}: {_INVALID}")
    selector = _selector(name, present[0], raw[present[0]])
    if selector is None:
        raise ValidationError(f"env {go_quote(name)}: {_INVALID}")
    return {present[0]: selector}


def build_env(entries: list[Any]) -> list[Object]:
    """``EnvVar`` objects; entries without a name are skipped."""
    out: list[Object] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            continue
        value = entry.get("value")
        if value is not None and not isinstance(value, str):
            raise ValidationError(f"env {go_quote(name)}: value: must be a string, got {go_type_name(value)}")
        value_from = entry.get("valueFrom")
        if value and value_from is not None:
            raise ValidationError(
                f"env {go_quote(name)}: value and valueFrom are mutually exclusive "
                "(valueFrom cannot be used if value is not empty)"
            )
        var: Object = {"name": name}
        if value:
            var["value"] = value
        if value_from is not None:
            var["valueFrom"] = _value_from(name, value_from)
        out.append(var)
    return out


def _printable_prefix(prefix: str) -> bool:
    return all(32 <= ord(ch) <= 126 and ch != "=" for ch in prefix)


def _ref(index: int, kind: str, raw: Any) -> Object:
    where = f"envFrom[{index}].{kind}"
    if not isinstance(raw, dict):
        raise ValidationError(f"{where}: expected object, got {go_type_name(raw)}")
    for key in sorted(raw):
        if key not in ("name", "optional"):
            raise ValidationError(f"{where}: unrecognized key {go_quote(key)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{where}: name is required")
    errors = dns1123_subdomain_errors(name)
    if errors:
        raise ValidationError(f"{where}.name: invalid name {go_quote(name)}: {'; '.join(errors)}")
    out: Object = {"name": name}
    optional = raw.get("optional")
    if optional is not None:
        if not isinstance(optional, bool):
            raise ValidationError(f"{where}.optional: must be a bool, got {go_type_name(optional)}")
        out["optional"] = optional
    return out


def build_env_from(value: Any) -> list[Object]:
    """``EnvFromSource`` objects: exactly one of ``configMapRef``/``secretRef`` each.

    The caller passes ``[]`` when the property is absent: a present ``null`` is refused
    (``envFrom: must be an array, got <nil>``), as kurel refuses it.
    """
    if not isinstance(value, list):
        raise ValidationError(f"envFrom: must be an array, got {go_type_name(value)}")
    out: list[Object] = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ValidationError(f"envFrom[{i}]: expected object, got {go_type_name(entry)}")
        for key in sorted(entry):
            if key not in ("prefix", "configMapRef", "secretRef"):
                raise ValidationError(f"envFrom[{i}]: unrecognized key {go_quote(key)}")
        refs = [k for k in ("configMapRef", "secretRef") if entry.get(k) is not None]
        if len(refs) != 1:
            raise ValidationError(f"envFrom[{i}]: must specify exactly one of configMapRef or secretRef")
        source: Object = {}
        prefix = entry.get("prefix")
        if prefix is not None:
            if not isinstance(prefix, str) or not _printable_prefix(prefix):
                shown = prefix if isinstance(prefix, str) else go_value(prefix)
                raise ValidationError(
                    f"envFrom[{i}].prefix: must consist of printable ASCII characters other than '=', "
                    f"got {go_quote(shown)}"
                )
            if prefix:
                source["prefix"] = prefix
        source[refs[0]] = _ref(i, refs[0], entry[refs[0]])
        out.append(source)
    return out
