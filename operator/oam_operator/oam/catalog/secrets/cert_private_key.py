"""The ``privateKey`` block of a cert-manager Certificate (``certificate`` trait,
docs/transform.md#certificates-secrets-and-configuration).

Key sizes are checked against what cert-manager accepts for the algorithm, so a wrong size
fails the transform instead of leaving a Certificate that never issues.

Decisions where the spec is silent: ``privateKey`` that is not a mapping is
``privateKey must be a map``; an ``algorithm``, ``encoding`` or ``rotationPolicy`` outside its
set is ``privateKey.<field>: unknown <field> "<v>" (valid: <values joined ", ">)`` (checked in that
order, before the size); an empty string counts as unset; a ``privateKey`` with no field set is
omitted from the Certificate.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import whole_number
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_at, unknown_value
from oam_operator.oam.formatting.gofmt import go_value

ALGORITHMS = ("RSA", "ECDSA", "Ed25519")
ENCODINGS = ("PKCS1", "PKCS8")
ROTATION_POLICIES = ("Never", "Always")
RSA_SIZES = (2048, 4096, 8192)
ECDSA_SIZES = (256, 384, 521)
_ENUMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("algorithm", ALGORITHMS),
    ("encoding", ENCODINGS),
    ("rotationPolicy", ROTATION_POLICIES),
)


def private_key_schema() -> PropertySchema:
    return PropertySchema(
        type="object",
        description="Private key settings of the Certificate.",
        properties={
            "algorithm": PropertySchema(type="string", enum=list(ALGORITHMS), description="Key algorithm."),
            "size": PropertySchema(
                type="integer",
                description="Key size: 2048, 4096 or 8192 for RSA; 256, 384 or 521 for ECDSA; unset for Ed25519.",
            ),
            "encoding": PropertySchema(type="string", enum=list(ENCODINGS), description="Key encoding."),
            "rotationPolicy": PropertySchema(
                type="string", enum=list(ROTATION_POLICIES), description="Whether the key is rotated on renewal."
            ),
        },
    )


def private_key(value: Any) -> Object | None:
    """The Certificate's ``spec.privateKey``, or ``None`` when nothing is set."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValidationError("privateKey must be a map")
    out: Object = {}
    for field, allowed in _ENUMS:
        raw = value.get(field)
        if raw is None or raw == "":
            continue
        if raw not in allowed:
            raise ValidationError(unknown_at(f"privateKey.{field}", go_value(raw), allowed))
        out[field] = raw
    size = _size(value.get("size"), out.get("algorithm"))
    if size is not None:
        out["size"] = size
    return out or None


def _size(raw: Any, algorithm: str | None) -> int | None:
    if raw is None:
        return None
    size = whole_number(raw)
    if size is None:
        raise ValidationError("privateKey.size must be a whole number")
    if size <= 0:
        raise ValidationError(f"privateKey.size must be positive, got {size}")
    if algorithm is None:
        raise ValidationError("privateKey.size requires privateKey.algorithm to be set")
    if algorithm == "RSA" and size not in RSA_SIZES:
        raise ValidationError(f"privateKey.size: {unknown_value('RSA key size', size, RSA_SIZES)}")
    if algorithm == "ECDSA" and size not in ECDSA_SIZES:
        raise ValidationError(f"privateKey.size: {unknown_value('ECDSA key size', size, ECDSA_SIZES)}")
    if algorithm == "Ed25519":
        raise ValidationError("privateKey.size must not be set for Ed25519 (key size is fixed)")
    return size
