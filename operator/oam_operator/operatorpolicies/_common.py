"""Shared parsing helpers of the operator's policy handlers.

The handlers raise ``PolicyError`` with messages that never name the policy (the transform
adds ``policy "<name>": ``), in the style of the built-in ``dependency`` handler.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from oam_operator.common.dns1123 import dns1123_label_errors
from oam_operator.common.durations import CRD_DURATION_PATTERN, format_seconds, parse_go_duration
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

#: The prefix of the keys these handlers own in ``PolicyResult.extensions``. Fixed (not the
#: configurable annotation domain): it names the operator that reads the values back.
EXTENSION_PREFIX = "oam-operator.dev/"

_DURATION = re.compile(CRD_DURATION_PATTERN)


def record_once(result: PolicyResult, key: str, policy_type: str, value: Callable[[], dict[str, Any]]) -> None:
    """Record ``value()`` (with its ``policy`` name) under ``key``: a policy type an Application may
    have once (``reconciliation``, ``topology``, ``rollout``); a second is refused, naming the
    first, before its own properties are read."""
    previous = result.extensions.get(key)
    if previous is not None:
        raise PolicyError(
            f"only one {policy_type} policy is allowed; policy {go_quote(previous['policy'])} already sets it"
        )
    result.extensions[key] = value()


def required_list(props: dict[str, Any], key: str) -> list[Any]:
    """``props[key]`` as a non-empty list, else the dependency handler's messages."""
    value = props.get(key)
    if value is None:
        raise PolicyError(f"missing required property '{key}'")
    if not isinstance(value, list):
        raise PolicyError(f"property '{key}' must be a list")
    if not value:
        raise PolicyError(f"property '{key}' must not be empty")
    return value


def entry_map(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PolicyError(f"{where} must be a map")
    return value


def required_string(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise PolicyError(f"{where}.{key} is required and must be a string")
    return value


def optional_namespace(entry: dict[str, Any], where: str) -> str:
    """``entry.namespace`` ("" when absent); a DNS-1123 label when given."""
    value = entry.get("namespace")
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise PolicyError(f"{where}.namespace must be a string")
    errors = dns1123_label_errors(value)
    if errors:
        raise PolicyError(f"{where}.namespace {go_quote(value)} is not a valid namespace: {'; '.join(errors)}")
    return value


def duration(props: dict[str, Any], key: str, minimum_seconds: float) -> str | None:
    """A duration property in the CRD's spelling (``90s``, ``10m``, ``1h30m``), at least ``minimum``."""
    value = props.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not _DURATION.fullmatch(value):
        shown = go_quote(value) if isinstance(value, str) else repr(value)
        raise PolicyError(f"{key} {shown} is not a duration such as 30s, 10m or 1h30m")
    if parse_go_duration(value).total_seconds() < minimum_seconds:
        raise PolicyError(f"{key} must be at least {format_seconds(minimum_seconds)}")
    return value
