"""The ``postgresql`` component (docs/transform.md#the-postgresql-component): a CloudNativePG cluster.

Objects, in order: ``Cluster C``; ``Pooler C-pooler`` when the pooler is enabled;
``ObjectStore C`` when an object store is given; one ``Database C-<db>`` per database. The
objects carry no labels of their own (the component label is the engine's). Property blocks
are checked in the order of the spec's table, so the first refusal is deterministic.

Decisions recorded here: ``storageSize`` is written as authored (CloudNativePG takes a string);
an empty ``version``, ``storageSize`` or ``imageName`` is unset; ``replicas`` is written as
``instances`` without a range check (CloudNativePG validates it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oam_operator.oam.catalog.postgresql import cluster as blocks
from oam_operator.oam.catalog.postgresql.objects import CNPG_API_VERSION, cnpg_object, databases, object_store, pooler
from oam_operator.oam.catalog.postgresql.resources import cluster_resources
from oam_operator.oam.catalog.postgresql.schema import (
    DEFAULT_PROVIDER,
    DEFAULT_REPLICAS,
    DEFAULT_STORAGE_SIZE,
    DEFAULT_VERSION,
    postgresql_schema,
)
from oam_operator.oam.catalog.shared.static import StaticConfig
from oam_operator.oam.catalog.shared.typed_props import Props
from oam_operator.oam.document.document import Component
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

TYPE = "postgresql"
IMAGE_REPOSITORY = "ghcr.io/cloudnative-pg/postgresql"


def build_objects(name: str, namespace: str, properties: dict[str, Any]) -> list[Object]:
    """Every object of the component, checking the properties in the spec's order."""
    props = Props(properties)
    provider = props.string("provider", DEFAULT_PROVIDER)
    if provider != DEFAULT_PROVIDER:
        raise ValidationError(f"unsupported postgresql provider {go_quote(provider)}, supported: cnpg")
    version = props.string("version", DEFAULT_VERSION)
    storage_size = props.string("storageSize", DEFAULT_STORAGE_SIZE)
    instances = props.integer("replicas", DEFAULT_REPLICAS)
    image = props.string("imageName", f"{IMAGE_REPOSITORY}:{version}")
    spec: dict[str, Any] = {
        "instances": instances,
        "imageName": image,
        "enablePDB": instances > 1,
        "primaryUpdateStrategy": "unsupervised",
        "storage": {"size": storage_size},
        "resources": cluster_resources(props),
    }
    backup = blocks.backup(props)
    monitoring = blocks.monitoring(props)
    pooler_object = pooler(props, name, namespace)
    bootstrap = blocks.bootstrap(props)
    sync = blocks.synchronous(props)
    spec["postgresql"] = blocks.postgresql_section(props, sync)
    inherited = blocks.inherited_metadata(props)
    store = object_store(props)
    spec["affinity"] = blocks.affinity(props)
    external = blocks.external_clusters(props)
    roles = blocks.managed_roles(props)
    database_objects = databases(props, name, namespace)
    optional: dict[str, Any] = {
        "inheritedMetadata": inherited,
        "backup": backup,
        "monitoring": monitoring,
        "bootstrap": bootstrap,
        "externalClusters": external or None,
        "managed": {"roles": roles} if roles else None,
        "plugins": [store.plugin(name)] if store is not None else None,
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    objects = [cnpg_object(CNPG_API_VERSION, "Cluster", name, namespace, spec)]
    if pooler_object is not None:
        objects.append(pooler_object)
    if store is not None:
        objects.append(store.object(name, namespace))
    return [*objects, *database_objects]


@component(TYPE)
class PostgresqlHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return postgresql_schema()

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> StaticConfig:
        return StaticConfig(build_objects(component.name, namespace, component.properties))
