"""What an ``external-secret`` fetches (docs/transform.md#certificates-secrets-and-configuration): ``data`` entries,
``dataFrom`` and the ``remoteRef`` shorthand.

A ``data`` entry names one key of the produced Secret and where its value lives in the store;
the defaults (remote key ``<NS>/<secretName>``, property = the secret key) let a team that
follows the platform's path convention write only the key names.

Decisions where the spec is silent: the ``remoteRef`` shorthand is exactly one ``data`` entry
``{secretKey: <secretName>, remoteRef: <remoteRef>}`` and gets the same defaults (the schema
still marks its ``key`` required, so an authored document must write it); ``data`` or
``dataFrom`` that is not a list is ``'data' must be an array`` (``'dataFrom' …``), an entry that
is not a mapping is ``data[<i>]: expected object``, a ``remoteRef`` that is not a mapping is
``data[<i>].remoteRef: expected object`` (shorthand: ``'remoteRef' must be a map``), a
non-string remote field is ``data[<i>].remoteRef.<field> must be a string``; empty lists count
as absent; empty remote fields count as unset; ``dataFrom`` entries are passed through as
written; the entries and their ``extract``/``find`` objects are open (the listed fields are
type-checked, other External Secrets fields such as ``rewrite`` or ``find.path`` are accepted).
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

DATA_KEYS = ("secretKey", "remoteRef")
REMOTE_FIELDS = ("key", "property", "version", "decodingStrategy")
COMBINED = "external-secret: 'remoteRef' cannot be combined with 'data' or 'dataFrom'"


def remote_ref_schema(key_required: bool) -> PropertySchema:
    key_text = "Key of the secret in the store" + ("." if key_required else " (default <namespace>/<secretName>).")
    return PropertySchema(
        type="object",
        description="Where the value lives in the external store.",
        properties={
            "key": PropertySchema(type="string", required=key_required, description=key_text),
            "property": PropertySchema(
                type="string", description="Property of the remote secret (default: the secret key)."
            ),
            "version": PropertySchema(type="string", description="Version of the remote secret."),
            "decodingStrategy": PropertySchema(type="string", description="How the remote value is decoded."),
        },
    )


def data_schema() -> PropertySchema:
    return PropertySchema(
        type="array",
        description="Keys of the produced Secret and where each value comes from.",
        items=PropertySchema(
            type="object",
            description="One key of the produced Secret.",
            properties={
                "secretKey": PropertySchema(type="string", required=True, description="Key in the produced Secret."),
                "remoteRef": remote_ref_schema(key_required=False),
            },
        ),
    )


def data_from_schema() -> PropertySchema:
    extract = PropertySchema(
        type="object",
        additional_properties=True,
        description="Extract every property of one remote secret.",
        properties={
            "key": PropertySchema(type="string", required=True, description="Key of the remote secret."),
            "decodingStrategy": PropertySchema(type="string", description="How the values are decoded."),
            "conversionStrategy": PropertySchema(type="string", description="How the keys are converted."),
            "metadataPolicy": PropertySchema(type="string", description="Whether remote metadata is fetched."),
        },
    )
    find = PropertySchema(
        type="object",
        additional_properties=True,
        description="Find remote secrets by name pattern or tags.",
        properties={
            "name": PropertySchema(
                type="object",
                description="Name pattern of the remote secrets.",
                properties={"regexp": PropertySchema(type="string", description="Regular expression on names.")},
            ),
            "tags": PropertySchema(type="object", additional_properties=True, description="Tags the secrets carry."),
        },
    )
    return PropertySchema(
        type="array",
        description="Whole remote secrets to fetch (ExternalSecret dataFrom), passed through as written.",
        items=PropertySchema(
            type="object",
            additional_properties=True,
            description="One dataFrom source: extract or find.",
            properties={"extract": extract, "find": find},
        ),
    )


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"'{name}' must be an array")
    return value


def _remote(value: Any, where: str, default_key: str, secret_key: str | None) -> Object:
    ref: Object = {}
    for field in REMOTE_FIELDS:
        raw = value.get(field)
        if raw is None or raw == "":
            continue
        if not isinstance(raw, str):
            raise ValidationError(f"{where}.{field} must be a string")
        ref[field] = raw
    ref.setdefault("key", default_key)
    if secret_key is not None:
        ref.setdefault("property", secret_key)
    return ref


def data_entries(value: Any, namespace: str, secret_name: str) -> list[Object]:
    """The ExternalSecret's ``data`` from the authored entries, with remote defaults applied."""
    entries: list[Object] = []
    for i, entry in enumerate(_list(value, "data")):
        if not isinstance(entry, dict):
            raise ValidationError(f"data[{i}]: expected object")
        for key in sorted(entry):
            if key not in DATA_KEYS:
                raise ValidationError(
                    f"data[{i}]: unsupported field {go_quote(str(key))} (supported: {', '.join(DATA_KEYS)})"
                )
        secret_key = entry.get("secretKey")
        if not isinstance(secret_key, str) or not secret_key:
            raise ValidationError(f"data[{i}]: required field 'secretKey' missing or empty")
        remote = entry.get("remoteRef")
        if remote is None:
            remote = {}
        if not isinstance(remote, dict):
            raise ValidationError(f"data[{i}].remoteRef: expected object")
        ref = _remote(remote, f"data[{i}].remoteRef", f"{namespace}/{secret_name}", secret_key)
        entries.append({"secretKey": secret_key, "remoteRef": ref})
    return entries


def data_from_entries(value: Any) -> list[Object]:
    entries: list[Object] = []
    for i, entry in enumerate(_list(value, "dataFrom")):
        if not isinstance(entry, dict) or (entry.get("extract") is None and entry.get("find") is None):
            raise ValidationError(f"dataFrom[{i}]: must have 'extract' or 'find'")
        entries.append(copy.deepcopy(entry))
    return entries


def shorthand_entry(value: Any, namespace: str, secret_name: str) -> Object:
    """The one ``data`` entry the ``remoteRef`` shorthand stands for.

    The shorthand's remote reference is written as authored: ``property`` is not derived from
    the secret key (it names a Secret, not a property of the remote secret), as kurel does.
    """
    if not isinstance(value, dict):
        raise ValidationError("'remoteRef' must be a map")
    ref = _remote(value, "remoteRef", f"{namespace}/{secret_name}", None)
    return {"secretKey": secret_name, "remoteRef": ref}
