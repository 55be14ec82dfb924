"""DNS-1123 names (labels and subdomains): the project's one check, with Kubernetes' texts.

Every room validates these names — the transform (metadata and component names, volumes,
secrets), the operator's settings (shard names, domains), the reconciler (its own name) and the
CRD schema (a pattern) — so the rule lives here once. The functions reproduce Kubernetes'
``IsDNS1123Label``/``IsDNS1123Subdomain`` and their texts, because those texts appear inside
messages that embed the error list. Stdlib-only: importable by ``oam`` and ``reconciler``
without loading a cluster client.
"""

from __future__ import annotations

import re

__all__ = [
    "DNS1123_LABEL_FMT",
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_FMT",
    "DNS1123_SUBDOMAIN_MAX",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "max_length_error",
]

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
# fullmatch, not ``^…$``: Python's ``$`` also matches before a trailing newline, Go's does not.
_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '" + DNS1123_SUBDOMAIN_FMT + "')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '" + DNS1123_LABEL_FMT + "')"
)


def max_length_error(limit: int) -> str:
    """Kubernetes' ``MaxLenError`` text."""
    return f"must be no more than {limit} characters"


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Kubernetes' ``IsDNS1123Subdomain``: the list of violations (length first)."""
    errors: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_length_error(DNS1123_SUBDOMAIN_MAX))
    if not _SUBDOMAIN_RE.fullmatch(value):
        errors.append(_SUBDOMAIN_MSG)
    return errors


def dns1123_label_errors(value: str) -> list[str]:
    """Kubernetes' ``IsDNS1123Label``."""
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_length_error(DNS1123_LABEL_MAX))
    if not _LABEL_RE.fullmatch(value):
        errors.append(_LABEL_MSG)
    return errors


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= DNS1123_SUBDOMAIN_MAX and _SUBDOMAIN_RE.fullmatch(value) is not None


def is_dns1123_label(value: str) -> bool:
    return len(value) <= DNS1123_LABEL_MAX and _LABEL_RE.fullmatch(value) is not None
