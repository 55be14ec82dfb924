"""Kubernetes' ``IsEnvVarName`` (apimachinery validation) with its exact texts
(docs/transform.md#kubernetes-name-checks).

``external-secret`` with ``envFrom`` turns every secret key into an environment variable, and
the kubelet skips (with only an event) keys that are not valid names; refusing them in the
transform makes the mistake visible.
"""

from __future__ import annotations

import re

ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME_RE = re.compile(ENV_VAR_NAME_FMT)
_ENV_VAR_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must "
    "not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '"
    + ENV_VAR_NAME_FMT
    + "')"
)


def env_var_name_errors(value: str) -> list[str]:
    """The violations of ``value`` as an environment variable name (empty: valid)."""
    errors: list[str] = []
    if not _ENV_VAR_NAME_RE.fullmatch(value):  # Go's "$" never matches before a final newline
        errors.append(_ENV_VAR_NAME_MSG)
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors
