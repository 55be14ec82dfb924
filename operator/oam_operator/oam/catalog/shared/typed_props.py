"""Typed reads of authored properties for the helm, oci and postgresql handlers.

``validate_authored_properties`` (docs/transform.md#validating-authored-properties) already refuses wrongly typed values
with the schema's
message; a library caller that skips it reaches the handler directly. Decision recorded here:
the handler then refuses a value of the wrong type on a key it reads with
``<prefix><path>: expected <type>, got <Go type name>`` instead of guessing, and treats an
absent key, a null and (for strings) an empty string as unset.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_type_name


class Props:
    """A view of one authored mapping; ``prefix`` starts every message, ``path`` locates keys."""

    def __init__(self, values: Mapping[str, Any] | None, prefix: str = "", path: str = "") -> None:
        self.values: Mapping[str, Any] = values or {}
        self.prefix = prefix
        self.path = path

    def _error(self, key: str, expected: str, value: Any) -> ValidationError:
        return ValidationError(f"{self.prefix}{self.path}{key}: expected {expected}, got {go_type_name(value)}")

    def has(self, key: str) -> bool:
        return self.values.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.values.get(key)

    def string(self, key: str, default: str = "") -> str:
        value = self.values.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._error(key, "string", value)
        return value or default

    def boolean(self, key: str, default: bool) -> bool:
        value = self.values.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._error(key, "boolean", value)
        return value

    def integer(self, key: str, default: int) -> int:
        value = self.values.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._error(key, "integer", value)
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise self._error(key, "integer", value)
            return int(value)
        return value

    def mapping(self, key: str) -> dict[str, Any] | None:
        value = self.values.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self._error(key, "object", value)
        return value

    def sequence(self, key: str) -> list[Any] | None:
        value = self.values.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self._error(key, "array", value)
        return value

    def child(self, key: str) -> Props:
        """The nested mapping at ``key`` (empty when unset), with its path extended."""
        return Props(self.mapping(key), self.prefix, f"{self.path}{key}.")


def string_values(value: Any) -> dict[str, str]:
    """The string-valued entries of a mapping (kurel keeps only those in string maps)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)}


def strings(value: Any) -> list[str]:
    """The string items of a list, in order."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]
