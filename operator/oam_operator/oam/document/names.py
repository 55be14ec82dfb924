"""Kubernetes name checks and generated-name rules (docs/transform.md#kubernetes-name-checks,
docs/transform.md#generated-names).

The checks reproduce Kubernetes' validation functions and their texts because those texts
appear inside messages that embed the error list.
"""

from __future__ import annotations

import hashlib
import re

from oam_operator.common.dns1123 import DNS1123_LABEL_MAX, dns1123_subdomain_errors, max_length_error

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
# fullmatch, not ``^…$``: Python's ``$`` also matches before a trailing newline, Go's does not.
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '"
    + _QUALIFIED_NAME_FMT
    + "')"
)
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
    "used for validation is '" + _LABEL_VALUE_FMT + "')"
)


def qualified_name_errors(value: str) -> list[str]:
    """Kubernetes' ``IsQualifiedName``: an optional DNS-subdomain prefix and a name part."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + e for e in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '" + _QUALIFIED_NAME_FMT + "') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > DNS1123_LABEL_MAX:
        errors.append("name part " + max_length_error(DNS1123_LABEL_MAX))
    if name and not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append(_QUALIFIED_NAME_MSG)
    return errors


def label_value_errors(value: str) -> list[str]:
    """Kubernetes' ``IsValidLabelValue``."""
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_length_error(DNS1123_LABEL_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(_LABEL_VALUE_MSG)
    return errors


def digest(s: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes of ``s`` (docs/transform.md#generated-names)."""
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def shorten(name: str, limit: int) -> str:
    """``name`` if it fits ``limit``, else a readable prefix plus 10 digest characters."""
    if len(name) <= limit:
        return name
    prefix = name[: limit - 11].rstrip("-.")
    hashed = digest(name)[:10]
    return f"{prefix}-{hashed}" if prefix else hashed


def shorten_with_suffix(name: str, suffix: str, limit: int) -> str:
    """Like :func:`shorten`, but the suffix is always kept whole (group and source names)."""
    room = limit - len(suffix)
    if len(name) > room and room < 10:
        return shorten(name + suffix, limit)
    return shorten(name, room) + suffix
