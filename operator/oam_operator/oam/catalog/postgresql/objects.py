"""The objects a ``postgresql`` component adds beside its Cluster (docs/transform.md#the-postgresql-component, objects
2–4).

``Pooler C-pooler`` when the pooler is enabled, ``ObjectStore C`` (with the Cluster's
WAL-archiver plugin) when ``objectStore`` is given, and one ``Database C-<db>`` per database.

Decisions recorded here, where the spec is silent:

* the pooler block is checked whenever given (enabled or not), type then pool mode then
  instances; ``instances`` must be a non-negative integer; PgBouncer parameters keep string
  values, as ``postgresql.parameters`` does;
* a database or extension entry that is not a mapping is refused with
  ``databases[<i>]: must be an object`` (``….extensions[<j>]: must be an object``), and an
  ``ensure`` other than present/absent with ``…: unsupported ensure "<e>", supported: present, absent``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oam_operator.oam.catalog.postgresql.cluster import ENSURE_VALUES, s3_credentials
from oam_operator.oam.catalog.postgresql.schema import DEFAULT_POOL_MODE, DEFAULT_POOLER_INSTANCES, DEFAULT_POOLER_TYPE
from oam_operator.oam.catalog.shared.typed_props import Props, string_values
from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

CNPG_API_VERSION = "postgresql.cnpg.io/v1"
BARMAN_API_VERSION = "barmancloud.cnpg.io/v1"
BARMAN_PLUGIN = "barman-cloud.barmancloud.cnpg.io"
POOLER_TYPES = ("rw", "ro")
POOL_MODES = ("session", "transaction", "statement")
RECLAIM_POLICIES = ("retain", "delete")


def cnpg_object(api_version: str, kind: str, name: str, namespace: str, spec: dict[str, Any]) -> Object:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pooler(props: Props, cluster: str, namespace: str) -> Object | None:
    block = props.child("pooler")
    pooler_type = block.string("type", DEFAULT_POOLER_TYPE)
    if pooler_type not in POOLER_TYPES:
        raise ValidationError(f"unsupported pooler type {go_quote(pooler_type)}, supported: rw, ro")
    mode = block.string("poolMode", DEFAULT_POOL_MODE)
    if mode not in POOL_MODES:
        raise ValidationError(
            f"unsupported pooler pool mode {go_quote(mode)}, supported: session, transaction, statement"
        )
    instances = block.raw("instances")
    if instances is None:
        instances = DEFAULT_POOLER_INSTANCES
    whole = isinstance(instances, int | float) and not isinstance(instances, bool) and float(instances).is_integer()
    if not whole or instances < 0:
        raise ValidationError(f"invalid pooler instances value: {go_value(instances)}")
    if not block.boolean("enabled", False):
        return None
    pgbouncer: dict[str, Any] = {"poolMode": mode}
    parameters = string_values(block.mapping("parameters"))
    if parameters:
        pgbouncer["parameters"] = parameters
    spec = {"cluster": {"name": cluster}, "instances": int(instances), "type": pooler_type, "pgbouncer": pgbouncer}
    return cnpg_object(CNPG_API_VERSION, "Pooler", f"{cluster}-pooler", namespace, spec)


@dataclass
class ObjectStore:
    destination_path: str
    endpoint_url: str
    secret_name: str
    retention_policy: str
    server_name: str

    def plugin(self, cluster: str) -> dict[str, Any]:
        """The Cluster's ``plugins`` entry archiving WAL to this store."""
        return {"name": BARMAN_PLUGIN, "isWALArchiver": True, "parameters": {"objectStoreName": cluster}}

    def object(self, cluster: str, namespace: str) -> Object:
        configuration: dict[str, Any] = {"destinationPath": self.destination_path}
        if self.endpoint_url:
            configuration["endpointURL"] = self.endpoint_url
        if self.server_name:
            configuration["serverName"] = self.server_name
        if self.secret_name:
            configuration["s3Credentials"] = s3_credentials(self.secret_name)
        spec: dict[str, Any] = {"configuration": configuration, "instanceSidecarConfiguration": {"resources": {}}}
        if self.retention_policy:
            spec["retentionPolicy"] = self.retention_policy
        return cnpg_object(BARMAN_API_VERSION, "ObjectStore", cluster, namespace, spec)


def object_store(props: Props) -> ObjectStore | None:
    if props.mapping("objectStore") is None:
        return None
    block = props.child("objectStore")
    destination = block.string("destinationPath")
    if not destination:
        raise ValidationError("objectStore: 'destinationPath' is required")
    return ObjectStore(
        destination,
        block.string("endpointURL"),
        block.string("secretName"),
        block.string("retentionPolicy"),
        block.string("serverName"),
    )


def _ensure(where: str, entry: Props) -> str:
    ensure = entry.string("ensure", "present")
    if ensure not in ENSURE_VALUES:
        raise ValidationError(f"{where}: unsupported ensure {go_quote(ensure)}, supported: present, absent")
    return ensure


def _extensions(where: str, entries: list[Any]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for j, entry in enumerate(entries):
        at = f"{where}.extensions[{j}]"
        if not isinstance(entry, dict):
            raise ValidationError(f"{at}: must be an object")
        extension = Props(entry, "", f"{at}.")
        name = extension.string("name")
        if not name:
            raise ValidationError(f"{at}: 'name' is required")
        out.append({"name": name, "ensure": _ensure(at, extension)})
    return out


def databases(props: Props, cluster: str, namespace: str) -> list[Object]:
    objects: list[Object] = []
    for i, entry in enumerate(props.sequence("databases") or []):
        where = f"databases[{i}]"
        if not isinstance(entry, dict):
            raise ValidationError(f"{where}: must be an object")
        db = Props(entry, "", f"{where}.")
        name, owner = db.string("name"), db.string("owner")
        if not name:
            raise ValidationError(f"{where}: 'name' is required")
        if not owner:
            raise ValidationError(f"{where}: 'owner' is required")
        ensure = _ensure(where, db)
        policy = db.string("databaseReclaimPolicy")
        if policy and policy not in RECLAIM_POLICIES:
            raise ValidationError(
                f"{where}: unsupported databaseReclaimPolicy {go_quote(policy)}, supported: retain, delete"
            )
        spec: dict[str, Any] = {"cluster": {"name": cluster}, "name": name, "owner": owner}
        if ensure == "absent":
            spec["ensure"] = "absent"
        if policy == "delete":
            spec["databaseReclaimPolicy"] = "delete"
        extensions = _extensions(where, db.sequence("extensions") or [])
        if extensions:
            spec["extensions"] = extensions
        objects.append(cnpg_object(CNPG_API_VERSION, "Database", f"{cluster}-{name}", namespace, spec))
    return objects
