"""The ``external-secret`` trait (docs/transform.md#certificates-secrets-and-configuration): an External Secrets
``ExternalSecret``, optionally
wired into the workload (``envFrom``, ``mountPath``).

The platform usually names the secret store in a ClusterProfile rendering, so teams write only
which keys they need; the trait is not capability-required, since a store can also be named
inline (``secretStoreRef``, or the ``provider`` shorthand for a ClusterSecretStore). The
envFrom and mount wiring are decorations of the component's objects; their refusals are
generation errors.

Decisions where the spec is silent: an empty ``secretName`` counts as missing; ``provider``,
which only an author writes, wins over a ``secretStoreRef`` (which may come from the
rendering); a ``provider`` that is not a string is ``external-secret: provider must be a string``;
a non-string ``secretStoreRef.kind`` is ``external-secret: secretStoreRef.kind must be a string``;
``envFrom`` and ``mountPath`` are checked right after the store, presence before type as kurel
checks them (``external-secret: 'envFrom' must be a boolean, got <T>``, ``external-secret:
'mountPath' must be a string, got <T>``, a written ``null`` included), and an empty
``mountPath`` means no mount; an invalid
``refreshInterval`` is the generation error ``invalid refreshInterval "<d>": <Go error>`` (as
``certificate`` durations), and in a rendering ``external-secret rendering: refreshInterval must
be a string`` / ``external-secret rendering: invalid refreshInterval "<d>": <Go error>``.
"""

from __future__ import annotations

from typing import Any

from oam_operator.common.dns1123 import dns1123_label_errors
from oam_operator.oam.catalog.secrets.envvar_names import env_var_name_errors
from oam_operator.oam.catalog.secrets.es_data import (
    COMBINED,
    data_entries,
    data_from_entries,
    data_from_schema,
    data_schema,
    remote_ref_schema,
    shorthand_entry,
)
from oam_operator.oam.catalog.secrets.es_target import target_schema, target_secret_name, target_spec
from oam_operator.oam.catalog.secrets.es_wiring import wire_secret
from oam_operator.oam.catalog.secrets.named_ref import check_rendering_ref, ref_schema, resolved_kind
from oam_operator.oam.catalog.shared.trait_kit import app_labels, metadata, refuse_rendering_keys
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.duration import DurationError, duration_text, go_duration, parse_duration
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name

TYPE = "external-secret"
DEFAULT_STORE_KIND = "ClusterSecretStore"
DEFAULT_REFRESH_INTERVAL = "1h"
STORE_REQUIRED = (
    "external-secret: secretStoreRef (or provider) is required; set inline or via ClusterProfile capability"
)
ENV_FROM_SHORTHAND = (
    "external-secret: 'envFrom' cannot be combined with the 'remoteRef' shorthand; the shorthand derives its "
    "secretKey from secretName, which is a Secret name and not an environment variable name — author 'data' "
    "entries with explicit secretKey values instead"
)


def _schema() -> Schema:
    return {
        "secretName": PropertySchema(
            type="string", required=True, description="Name of the ExternalSecret (and default name of its Secret)."
        ),
        "secretStoreRef": ref_schema(
            "The secret store to read from; normally supplied by the ClusterProfile rendering.",
            "Name of the secret store.",
            DEFAULT_STORE_KIND,
        ),
        "provider": PropertySchema(
            type="string", description="Shorthand for secretStoreRef: the ClusterSecretStore of this name."
        ),
        "refreshInterval": PropertySchema(
            type="string",
            default=DEFAULT_REFRESH_INTERVAL,
            description="How often the secret is refreshed from the store (Go duration).",
        ),
        "targetSecretName": PropertySchema(
            type="string", description="Name of the produced Secret (default: secretName)."
        ),
        "envFrom": PropertySchema(
            type="boolean",
            default=False,
            description="Expose every key of the produced Secret as environment variables of the first container.",
        ),
        "mountPath": PropertySchema(
            type="string", description="Mount the produced Secret at this path in the first container."
        ),
        "target": target_schema(),
        "data": data_schema(),
        "dataFrom": data_from_schema(),
        "remoteRef": remote_ref_schema(key_required=True),
    }


class ExternalSecretObject:
    """The trait's sub-application; the refresh interval is parsed when the object is generated."""

    def __init__(self, meta: Object, spec: Object, refresh_interval: str) -> None:
        self.meta = meta
        self.spec = spec
        self.refresh_interval = refresh_interval

    def generate(self, app: TreeApplication) -> list[Object]:
        spec = dict(self.spec)
        spec["refreshInterval"] = go_duration(self.refresh_interval, "refreshInterval")
        return [{"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret", "metadata": self.meta, "spec": spec}]


@trait(TYPE)
class ExternalSecretTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return _schema()

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ("refreshInterval", "secretStoreRef"))
        check_rendering_ref(TYPE, rendering, "secretStoreRef", DEFAULT_STORE_KIND)
        interval = rendering.get("refreshInterval")
        if interval is not None:
            if not isinstance(interval, str):
                raise ValidationError(f"{TYPE} rendering: refreshInterval must be a string")
            try:
                parse_duration(interval)
            except DurationError as exc:
                raise ValidationError(
                    f"{TYPE} rendering: invalid refreshInterval {go_quote(interval)}: {exc.message}"
                ) from exc
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        secret_name = props.get("secretName")
        if not isinstance(secret_name, str) or not secret_name:
            raise ValidationError("required property 'secretName' missing or not a string")
        store = _store_ref(props)
        env_from = _flag(props)
        mount_value = _mount_value(props)
        data = data_entries(props.get("data"), out.namespace, secret_name)
        data_from = data_from_entries(props.get("dataFrom"))
        shorthand = props.get("remoteRef")
        if shorthand is not None:
            if data or data_from:
                raise ValidationError(COMBINED)
            if env_from:
                raise ValidationError(ENV_FROM_SHORTHAND)
            data = [shorthand_entry(shorthand, out.namespace, secret_name)]
        if env_from:
            _check_env_names(data)
        target = target_secret_name(props.get("targetSecretName"), secret_name)
        mount_path = _mount_path(mount_value, target)
        spec: Object = {"secretStoreRef": store, "target": target_spec(props.get("target"), target)}
        if data:
            spec["data"] = data
        if data_from:
            spec["dataFrom"] = data_from
        meta = metadata(secret_name, out.namespace, app_labels(out.component))
        config = ExternalSecretObject(meta, spec, duration_text(props.get("refreshInterval"), DEFAULT_REFRESH_INTERVAL))
        out.add(TreeApplication(f"{out.component}-external-secret-{secret_name}", out.namespace, config, app.owner))
        if env_from or mount_path:
            wire_secret(app, target, env_from, mount_path)


def _store_ref(props: dict[str, Any]) -> Object:
    provider = props.get("provider")
    if provider is not None and provider != "":
        if not isinstance(provider, str):
            raise ValidationError("external-secret: provider must be a string")
        return {"name": provider, "kind": DEFAULT_STORE_KIND}
    ref = props.get("secretStoreRef")
    if ref is None:
        raise ValidationError(STORE_REQUIRED)
    name = ref.get("name") if isinstance(ref, dict) else None
    if not isinstance(ref, dict) or not isinstance(name, str) or not name:
        raise ValidationError("external-secret: secretStoreRef.name is required")
    return {"name": name, "kind": resolved_kind(ref, DEFAULT_STORE_KIND, "external-secret: secretStoreRef")}


def _flag(props: dict[str, Any]) -> bool:
    if "envFrom" not in props:
        return False
    value = props["envFrom"]
    if not isinstance(value, bool):
        raise ValidationError(f"external-secret: 'envFrom' must be a boolean, got {go_type_name(value)}")
    return value


def _mount_value(props: dict[str, Any]) -> str:
    if "mountPath" not in props:
        return ""
    value = props["mountPath"]
    if not isinstance(value, str):
        raise ValidationError(f"external-secret: 'mountPath' must be a string, got {go_type_name(value)}")
    return value


def _check_env_names(data: list[Object]) -> None:
    for i, entry in enumerate(data):
        key = str(entry["secretKey"])
        errors = env_var_name_errors(key)
        if errors:
            raise ValidationError(
                f"data[{i}].secretKey {go_quote(key)} is not a valid environment variable name (required by envFrom): "
                + "; ".join(errors)
            )


def _mount_path(value: str, target: str) -> str:
    if value == "":
        return ""
    errors = dns1123_label_errors(target)
    if errors:
        raise ValidationError(
            f"external-secret mountPath: the produced Secret name {go_quote(target)} cannot be used as a volume name "
            f"({'; '.join(errors)}); set targetSecretName to a DNS-1123 label"
        )
    return value
