"""The ``target`` of an ``external-secret`` (docs/transform.md#certificates-secrets-and-configuration): the produced
Secret's name, policies and template.

Decisions where the spec is silent: ``target`` that is not a mapping is
``'target' must be a map``; a policy outside its set is
``target.<policy>: unknown <policy> "<v>" (valid: <values joined ", ">)``; ``template`` that is not a
mapping is ``target.template must be a map`` and is copied as written (an empty one is
omitted); a non-string ``targetSecretName`` is ``'targetSecretName' must be a string`` and an
empty one means the default (``secretName``).
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_at
from oam_operator.oam.formatting.gofmt import go_value

CREATION_POLICIES = ("Owner", "Orphan", "Merge", "None")
DELETION_POLICIES = ("Delete", "Merge", "Retain")


def target_schema() -> PropertySchema:
    return PropertySchema(
        type="object",
        description="How External Secrets manages the produced Secret.",
        properties={
            "creationPolicy": PropertySchema(
                type="string", enum=list(CREATION_POLICIES), description="Who owns the produced Secret."
            ),
            "deletionPolicy": PropertySchema(
                type="string",
                enum=list(DELETION_POLICIES),
                description="What happens to the Secret when the remote data is deleted.",
            ),
            "template": PropertySchema(
                type="object",
                description="Template of the produced Secret.",
                properties={
                    "type": PropertySchema(type="string", description="Type of the produced Secret."),
                    "data": PropertySchema(
                        type="object", additional_properties=True, description="Templated data of the Secret."
                    ),
                },
            ),
        },
    )


def target_secret_name(value: Any, secret_name: str) -> str:
    if value is None or value == "":
        return secret_name
    if not isinstance(value, str):
        raise ValidationError("'targetSecretName' must be a string")
    return value


def target_spec(value: Any, name: str) -> Object:
    """The ExternalSecret's ``spec.target``."""
    target: Object = {"name": name}
    if value is None:
        return target
    if not isinstance(value, dict):
        raise ValidationError("'target' must be a map")
    for policy, allowed in (("creationPolicy", CREATION_POLICIES), ("deletionPolicy", DELETION_POLICIES)):
        raw = value.get(policy)
        if raw is None or raw == "":
            continue
        if raw not in allowed:
            raise ValidationError(unknown_at(f"target.{policy}", go_value(raw), allowed))
        target[policy] = raw
    template = value.get("template")
    if template is not None and not isinstance(template, dict):
        raise ValidationError("target.template must be a map")
    if template:
        target["template"] = copy.deepcopy(template)
    return target
