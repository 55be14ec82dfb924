"""Rules of a container ``securityContext`` beyond its schema (docs/transform.md#shared-workload-properties, as kurel
checks them).

The schema types each field; these rules refuse what types cannot: a field written as ``null``
(presence before type, ``securityContext.<f>: must be <kind>, got <nil>``), negative ids, and
combinations the kubelet or the API server would refuse later — a root user that must not be
root, a privileged container that may not escalate, a Localhost profile without a profile.
Checked in kurel's order, so the first refusal is the same. Messages come without the
``invalid securityContext configuration: `` prefix, which the caller adds.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

#: Fields in kurel's checking order, with the kind a null is refused as.
_FIELDS = (
    ("runAsUser", "an integer"),
    ("runAsGroup", "an integer"),
    ("runAsNonRoot", "a boolean"),
    ("readOnlyRootFilesystem", "a boolean"),
    ("allowPrivilegeEscalation", "a boolean"),
    ("privileged", "a boolean"),
    ("capabilities", "an object"),
    ("seccompProfile", "an object"),
    ("seLinuxOptions", "an object"),
    ("appArmorProfile", "an object"),
    ("procMount", "a string"),
)
_SELINUX_FIELDS = ("user", "role", "type", "level")


def _null(field: str, kind: str) -> ValidationError:
    return ValidationError(f"securityContext.{field}: must be {kind}, got <nil>")


def _capabilities(value: dict[str, Any], no_escalation: bool) -> None:
    for key in ("add", "drop"):
        if key in value and value[key] is None:
            raise ValidationError(f"securityContext.capabilities.{key}: must be an array, got <nil>")
    if no_escalation and "CAP_SYS_ADMIN" in (value.get("add") or []):
        raise ValidationError(
            "securityContext: allowPrivilegeEscalation must not be false when capabilities.add includes CAP_SYS_ADMIN"
        )


def _profile(field: str, value: dict[str, Any]) -> None:
    where = f"securityContext.{field}"
    kind = value.get("type")
    kind = kind if isinstance(kind, str) else ""
    local = value.get("localhostProfile")
    if kind in ("RuntimeDefault", "Unconfined"):
        if "localhostProfile" in value and local is None:
            raise ValidationError(f"{where}.localhostProfile: must be a string, got <nil>")
        if local:
            raise ValidationError(
                f"{where}: localhostProfile is only valid when type is Localhost, got type {go_quote(kind)}"
            )
    elif kind == "Localhost":
        if not isinstance(local, str) or not local:
            raise ValidationError(f"{where}: localhostProfile is required when type is {go_quote(kind)}")
    elif kind == "":
        raise ValidationError(f"{where}: type is required when {field} is set")
    else:
        raise ValidationError(
            f"{where}: invalid type {go_quote(kind)}, must be Localhost, RuntimeDefault, or Unconfined"
        )


def check_security_context(raw: dict[str, Any]) -> None:
    """Refuse what kurel refuses in a container's security context, in kurel's order."""
    for field, kind in _FIELDS[:3]:
        if field in raw and raw[field] is None:
            raise _null(field, kind)
        if field in ("runAsUser", "runAsGroup") and isinstance(raw.get(field), int | float) and raw[field] < 0:
            raise ValidationError(f"securityContext.{field}: must not be negative, got {int(raw[field])}")
    if raw.get("runAsUser") == 0 and raw.get("runAsNonRoot") is True:
        # the kubelet refuses to start such a container, every time: refuse it here instead
        raise ValidationError("securityContext: runAsUser must not be 0 when runAsNonRoot is true")
    for field, kind in _FIELDS[3:6]:
        if field in raw and raw[field] is None:
            raise _null(field, kind)
    if raw.get("privileged") is True and raw.get("allowPrivilegeEscalation") is False:
        raise ValidationError("securityContext: allowPrivilegeEscalation must not be false when privileged is true")
    for field, kind in _FIELDS[6:]:
        if field not in raw:
            continue
        value = raw[field]
        if value is None:
            raise _null(field, kind)
        if field == "capabilities":
            _capabilities(value, raw.get("allowPrivilegeEscalation") is False)
        elif field in ("seccompProfile", "appArmorProfile"):
            _profile(field, value)
        elif field == "seLinuxOptions":
            for key in _SELINUX_FIELDS:
                if key in value and value[key] is None:
                    raise ValidationError(f"securityContext.seLinuxOptions.{key}: must be a string, got <nil>")
