"""``{name, kind}`` references with a default kind: cert-manager ``issuerRef`` and ESO ``secretStoreRef``.

Both traits let the platform name the issuer or store in a ClusterProfile rendering, so the
same shape is checked twice: in the rendering (when the profile is evaluated, docs/transform.md#evaluating-a-profile)
and in the
merged trait properties (when the trait runs, docs/transform.md#certificates-secrets-and-configuration).

Decisions where the spec is silent: in a rendering the reference itself is optional (a
binding may only mark the capability as offered), but when present it must be a mapping with
a non-empty string ``name``, a string ``kind`` if any, and no other key
(``<type> rendering: <ref>: unsupported field "<k>" (allowed: kind, name)``,
``<type> rendering: <ref>.kind must be a string``); an absent, null or empty ``kind`` gets the
default.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

REF_KEYS = ("kind", "name")


def ref_schema(description: str, name_description: str, default_kind: str) -> PropertySchema:
    return PropertySchema(
        type="object",
        description=description,
        properties={
            "name": PropertySchema(type="string", required=True, description=name_description),
            "kind": PropertySchema(
                type="string",
                default=default_kind,
                description=f"Kind of the referenced object (default {default_kind}).",
            ),
        },
    )


def check_rendering_ref(trait_type: str, rendering: dict[str, Any], key: str, default_kind: str) -> None:
    """Check ``rendering[key]`` in place and default its kind; an absent reference is left absent."""
    value = rendering.get(key)
    if value is None:
        return
    prefix = f"{trait_type} rendering: "
    if not isinstance(value, dict):
        raise ValidationError(f"{prefix}{key}.name is required")
    for field in sorted(value):
        if field not in REF_KEYS:
            raise ValidationError(
                f"{prefix}{key}: unsupported field {go_quote(str(field))} (allowed: {', '.join(REF_KEYS)})"
            )
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{prefix}{key}.name is required")
    kind = value.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise ValidationError(f"{prefix}{key}.kind must be a string")
    value["kind"] = kind or default_kind


def resolved_kind(ref: dict[str, Any], default_kind: str, where: str) -> str:
    """The kind of the reference at ``where``: the default when absent or empty; a non-string is refused."""
    kind = ref.get("kind")
    if kind is None or kind == "":
        return default_kind
    if not isinstance(kind, str):
        raise ValidationError(f"{where}.kind must be a string")
    return kind
