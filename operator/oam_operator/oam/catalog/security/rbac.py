"""The ``rbac`` trait (docs/transform.md#access-and-security): a Role and RoleBinding for the component's
ServiceAccount.

Every built-in workload runs as ServiceAccount ``C``; this trait grants it the authored rules
in the namespace, and cluster-wide with ``clusterWide`` (a ClusterRole and ClusterRoleBinding
named ``C``, binding the same namespaced ServiceAccount).

Decisions where the spec is silent: a rule's fields are checked in the order ``apiGroups``,
``resources``, ``verbs`` (type first, then emptiness); an empty ``apiGroups`` is omitted like an
absent one; a non-boolean ``clusterWide`` is ``rbac: clusterWide must be a bool``; rule keys
other than the three are left to the schema check (docs/transform.md#validating-authored-properties) and ignored here.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, app_labels, metadata
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError

TYPE = "rbac"
RBAC_API = "rbac.authorization.k8s.io"
_FIELDS = ("apiGroups", "resources", "verbs")


def _strings(description: str, item: str, required: bool = False) -> PropertySchema:
    return PropertySchema(
        type="array",
        required=required,
        description=description,
        items=PropertySchema(type="string", description=item),
    )


@trait(TYPE)
class RBACTrait(BuiltinType):
    def property_schema(self) -> Schema:
        rule = PropertySchema(
            type="object",
            description="One policy rule.",
            properties={
                "apiGroups": _strings('API groups of the resources ("" is the core group).', "An API group."),
                "resources": _strings("Resources the rule covers.", "A resource.", required=True),
                "verbs": _strings("Verbs the rule allows.", "A verb.", required=True),
            },
        )
        return {
            "rules": PropertySchema(type="array", required=True, items=rule, description="The policy rules."),
            "clusterWide": PropertySchema(
                type="boolean", default=False, description="Also grant the rules cluster-wide (ClusterRole)."
            ),
        }

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        rules = _rules(props.get("rules"))
        cluster_wide = props.get("clusterWide")
        if cluster_wide is not None and not isinstance(cluster_wide, bool):
            raise ValidationError("rbac: clusterWide must be a bool")
        component, namespace = out.component, out.namespace
        subject = {"kind": "ServiceAccount", "name": component, "namespace": namespace}
        objects: list[Object] = [
            _object("Role", component, namespace, {"rules": rules}),
            _object("RoleBinding", component, namespace, _binding("Role", component, subject)),
        ]
        if cluster_wide:
            objects.append(_object("ClusterRole", component, None, {"rules": rules}))
            objects.append(_object("ClusterRoleBinding", component, None, _binding("ClusterRole", component, subject)))
        out.add(TreeApplication(f"{component}-rbac", namespace, FixedObjects(_copies(objects)), app.owner))


def _rules(value: Any) -> list[Object]:
    if not isinstance(value, list) or not value:
        raise ValidationError("rbac: required property 'rules' missing or empty")
    rules: list[Object] = []
    for i, rule in enumerate(value):
        if not isinstance(rule, dict):
            raise ValidationError(f"rbac: rules[{i}]: expected object")
        out: Object = {}
        for key in _FIELDS:
            items = rule.get(key)
            if items is None:
                items = []
            if not isinstance(items, list):
                raise ValidationError(f"rbac: rules[{i}].{key}: expected array")
            for j, item in enumerate(items):
                if not isinstance(item, str):
                    raise ValidationError(f"rbac: rules[{i}].{key}[{j}]: expected string")
            if not items and key != "apiGroups":
                raise ValidationError(f"rbac: rules[{i}].{key} must not be empty")
            if items:
                out[key] = list(items)
        rules.append(out)
    return rules


def _binding(kind: str, name: str, subject: dict[str, str]) -> Object:
    return {"roleRef": {"apiGroup": RBAC_API, "kind": kind, "name": name}, "subjects": [dict(subject)]}


def _object(kind: str, name: str, namespace: str | None, body: Object) -> Object:
    return {
        "apiVersion": f"{RBAC_API}/v1",
        "kind": kind,
        "metadata": metadata(name, namespace, app_labels(name)),
        **body,
    }


def _copies(objects: list[Object]) -> list[Object]:
    """Objects that share no nested value (the rules are used twice with ``clusterWide``)."""
    return [copy.deepcopy(obj) for obj in objects]
