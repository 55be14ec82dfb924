"""The ``certificate`` trait (docs/transform.md#certificates-secrets-and-configuration): a cert-manager ``Certificate``
for the component.

Capability-required: which issuer signs certificates is a platform decision, so the
ClusterProfile must bind ``certificate`` (its rendering usually supplies ``issuerRef``) and an
application cannot ask for a certificate on a cluster that offers none. Durations are parsed
and printed as Go durations when the object is generated, as kurel does.

Decisions where the spec is silent: an empty ``secretName`` counts as missing; a non-string
``issuerRef.kind`` is ``issuerRef.kind must be a string``; ``dnsNames`` that is not a list is
``required property 'dnsNames' missing or empty``; the Certificate carries no labels besides
the component label (no ``app`` label, as kurel prints it).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.secrets.cert_private_key import private_key, private_key_schema
from oam_operator.oam.catalog.secrets.named_ref import check_rendering_ref, ref_schema, resolved_kind
from oam_operator.oam.catalog.shared.trait_kit import metadata, refuse_rendering_keys
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, ContractMetadata, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.duration import duration_text, go_duration
from oam_operator.oam.formatting.gofmt import go_type_name

TYPE = "certificate"
DEFAULT_ISSUER_KIND = "ClusterIssuer"
DEFAULT_DURATION = "2160h"
DEFAULT_RENEW_BEFORE = "360h"


def _schema() -> Schema:
    return {
        "secretName": PropertySchema(
            type="string",
            required=True,
            description="Secret the certificate is stored in; also the Certificate's name.",
        ),
        "dnsNames": PropertySchema(
            type="array",
            required=True,
            items=PropertySchema(type="string", description="A DNS name."),
            description="DNS names the certificate is issued for.",
        ),
        "issuerRef": ref_schema(
            "The cert-manager issuer; normally supplied by the ClusterProfile rendering.",
            "Name of the issuer.",
            DEFAULT_ISSUER_KIND,
        ),
        "duration": PropertySchema(
            type="string", default=DEFAULT_DURATION, description="Requested certificate lifetime (Go duration)."
        ),
        "renewBefore": PropertySchema(
            type="string",
            default=DEFAULT_RENEW_BEFORE,
            description="How long before expiry the certificate is renewed (Go duration).",
        ),
        "privateKey": private_key_schema(),
    }


class CertificateObject:
    """The trait's sub-application; durations are parsed when the object is generated."""

    def __init__(self, meta: Object, spec: Object, duration: str, renew_before: str) -> None:
        self.meta = meta
        self.spec = spec
        self.duration = duration
        self.renew_before = renew_before

    def generate(self, app: TreeApplication) -> list[Object]:
        spec = dict(self.spec)
        spec["duration"] = go_duration(self.duration, "duration")
        spec["renewBefore"] = go_duration(self.renew_before, "renewBefore")
        return [{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": self.meta, "spec": spec}]


@trait(TYPE)
class CertificateTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=TYPE, required_capability_keys=[TYPE])

    def capability_required(self) -> bool:
        return True

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ("issuerRef",))
        check_rendering_ref(TYPE, rendering, "issuerRef", DEFAULT_ISSUER_KIND)
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        secret_name = props.get("secretName")
        if not isinstance(secret_name, str) or not secret_name:
            raise ValidationError("required property 'secretName' missing or not a string")
        issuer = _issuer_ref(props.get("issuerRef"))
        spec: Object = {"secretName": secret_name, "issuerRef": issuer, "dnsNames": _dns_names(props.get("dnsNames"))}
        key = private_key(props.get("privateKey"))
        if key is not None:
            spec["privateKey"] = key
        config = CertificateObject(
            metadata(secret_name, out.namespace),
            spec,
            duration_text(props.get("duration"), DEFAULT_DURATION),
            duration_text(props.get("renewBefore"), DEFAULT_RENEW_BEFORE),
        )
        out.add(TreeApplication(f"{out.component}-certificate", out.namespace, config, app.owner))


def _issuer_ref(value: Any) -> Object:
    if not isinstance(value, dict):
        raise ValidationError("required property 'issuerRef' missing or not a map")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationError("required property 'issuerRef.name' missing or not a string")
    return {"name": name, "kind": resolved_kind(value, DEFAULT_ISSUER_KIND, "issuerRef")}


def _dns_names(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValidationError("required property 'dnsNames' missing or empty")
    for i, name in enumerate(value):
        if not isinstance(name, str):
            raise ValidationError(f"dnsNames[{i}]: expected string, got {go_type_name(name)}")
    return list(value)
