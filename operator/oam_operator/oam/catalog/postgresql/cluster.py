"""The blocks of a CloudNativePG ``Cluster`` spec (docs/transform.md#the-postgresql-component, object 1).

Each function reads one property block, checks it with the spec's messages and returns the
fragment of ``Cluster.spec`` it produces (``None`` when it produces nothing).

Decisions recorded here, where the spec is silent:

* a block is *given* when its property is a mapping (``inheritedMetadata: {}`` emits
  ``inheritedMetadata: {}``); string maps keep string values only;
* ``monitoring.customQueries`` entries are checked even when monitoring is disabled;
* ``bootstrap.recovery.source`` is written when non-empty, ``bootstrap.pg_basebackup.source``
  always (CloudNativePG requires the latter, and omits the former when empty);
* ``replication.synchronous`` is checked whenever given and emitted when it has a method;
* an ``externalClusters[].barmanObjectStore`` is emitted as written except that
  ``secretName`` becomes ``s3Credentials``, as in ``backup``; ``connectionParameters`` keep
  string values; non-mapping entries have no name and are dropped;
* a ``managedRoles[].passwordSecret`` is a Secret name, or ``{name}``; ``inRoles`` keeps
  string items; ``connectionLimit`` is an integer.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.postgresql.schema import DEFAULT_SYNC_NUMBER, DEFAULT_TOPOLOGY_KEY
from oam_operator.oam.catalog.shared.typed_props import Props, string_values, strings
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name

ENSURE_VALUES = ("present", "absent")
SYNC_METHODS = ("any", "first")
DATA_DURABILITY = ("required", "preferred")
ROLE_FLAGS = ("login", "superuser", "createdb", "createrole", "replication")


def s3_credentials(secret: str) -> dict[str, Any]:
    return {
        "accessKeyId": {"name": secret, "key": "ACCESS_KEY_ID"},
        "secretAccessKey": {"name": secret, "key": "SECRET_ACCESS_KEY"},
    }


def backup(props: Props) -> dict[str, Any] | None:
    if props.mapping("backup") is None:
        return None
    block = props.child("backup")
    destination, retention = block.string("destinationPath"), block.string("retentionPolicy")
    endpoint, secret = block.string("endpointURL"), block.string("secretName")
    if not destination and not retention:
        return None
    store: dict[str, Any] = {"destinationPath": destination}
    if endpoint:
        store["endpointURL"] = endpoint
    if secret:
        store["s3Credentials"] = s3_credentials(secret)
    out: dict[str, Any] = {"barmanObjectStore": store}
    if retention:
        out["retentionPolicy"] = retention
    return out


def monitoring(props: Props) -> dict[str, Any] | None:
    block = props.child("monitoring")
    queries: list[dict[str, str]] = []
    for i, entry in enumerate(block.sequence("customQueries") or []):
        item = entry if isinstance(entry, dict) else {}
        name, key = item.get("name"), item.get("key")
        if not isinstance(name, str) or not name or not isinstance(key, str) or not key:
            raise ValidationError(f"monitoring.customQueries[{i}]: both 'name' and 'key' are required")
        queries.append({"name": name, "key": key})
    if not block.boolean("enabled", False):
        return None
    out: dict[str, Any] = {"enablePodMonitor": True}
    if queries:
        out["customQueriesConfigMap"] = queries
    return out


def bootstrap(props: Props) -> dict[str, Any] | None:
    block = props.child("bootstrap")
    given = [method for method in ("recovery", "pg_basebackup") if block.mapping(method) is not None]
    if len(given) > 1:
        raise ValidationError("bootstrap: recovery and pg_basebackup are mutually exclusive")
    if not given:
        return None
    source = block.child(given[0]).string("source")
    return {given[0]: {"source": source} if source or given[0] == "pg_basebackup" else {}}


def synchronous(props: Props) -> dict[str, Any] | None:
    block = props.child("replication").child("synchronous")
    method = block.string("method")
    if method and method not in SYNC_METHODS:
        raise ValidationError(f"unsupported replication synchronous method {go_quote(method)}, supported: any, first")
    number = block.integer("number", DEFAULT_SYNC_NUMBER)
    if number < 0:
        raise ValidationError(f"replication synchronous number must be >= 0, got {number}")
    durability = block.string("dataDurability")
    if durability and durability not in DATA_DURABILITY:
        raise ValidationError(
            f"unsupported replication synchronous dataDurability {go_quote(durability)}, supported: required, preferred"
        )
    if not method:
        return None
    out: dict[str, Any] = {"method": method, "number": number, "failoverQuorum": False}
    if durability:
        out["dataDurability"] = durability
    return out


def postgresql_section(props: Props, sync: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"syncReplicaElectionConstraint": {"enabled": False}}
    parameters = string_values(props.child("postgresql").mapping("parameters"))
    if parameters:
        out["parameters"] = parameters
    if sync is not None:
        out["synchronous"] = sync
    return out


def inherited_metadata(props: Props) -> dict[str, Any] | None:
    if props.mapping("inheritedMetadata") is None:
        return None
    block = props.child("inheritedMetadata")
    out: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        values = string_values(block.mapping(key))
        if values:
            out[key] = values
    return out


def affinity(props: Props) -> dict[str, Any]:
    if props.mapping("affinity") is None:
        return {}
    block = props.child("affinity")
    out: dict[str, Any] = {
        "enablePodAntiAffinity": block.boolean("enablePodAntiAffinity", True),
        "topologyKey": block.string("topologyKey", DEFAULT_TOPOLOGY_KEY),
    }
    anti_affinity_type = block.string("podAntiAffinityType")
    if anti_affinity_type:
        out["podAntiAffinityType"] = anti_affinity_type
    selector = string_values(block.mapping("nodeSelector"))
    if selector:
        out["nodeSelector"] = selector
    return out


def external_clusters(props: Props) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in props.sequence("externalClusters") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            continue
        cluster: dict[str, Any] = {"name": entry["name"]}
        parameters = string_values(entry.get("connectionParameters"))
        if parameters:
            cluster["connectionParameters"] = parameters
        store = entry.get("barmanObjectStore")
        if isinstance(store, dict):
            store = copy.deepcopy(store)
            secret = store.pop("secretName", None)
            if isinstance(secret, str) and secret:
                store["s3Credentials"] = s3_credentials(secret)
            cluster["barmanObjectStore"] = store
        out.append(cluster)
    return out


def _password_secret(where: str, value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("name")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError(f"{where}.passwordSecret: expected string, got {go_type_name(value)}")
    return value


def managed_roles(props: Props) -> list[dict[str, Any]]:
    roles: list[dict[str, Any]] = []
    for i, entry in enumerate(props.sequence("managedRoles") or []):
        where = f"managedRoles[{i}]"
        if not isinstance(entry, dict):
            raise ValidationError(f"{where}: must be an object")
        role = Props(entry, "", f"{where}.")
        name = role.string("name")
        if not name:
            raise ValidationError(f"{where}: 'name' is required")
        ensure = role.string("ensure")
        if ensure and ensure not in ENSURE_VALUES:
            raise ValidationError(f"{where}: unsupported ensure {go_quote(ensure)}, supported: present, absent")
        out: dict[str, Any] = {"name": name}
        for flag in ROLE_FLAGS:
            if role.boolean(flag, False):
                out[flag] = True
        if role.has("inherit"):
            out["inherit"] = role.boolean("inherit", False)
        limit = role.integer("connectionLimit", 0)
        if limit:
            out["connectionLimit"] = limit
        secret = _password_secret(where, entry.get("passwordSecret"))
        if secret:
            out["passwordSecret"] = {"name": secret}
        comment = role.string("comment")
        if comment:
            out["comment"] = comment
        in_roles = strings(role.sequence("inRoles"))
        if in_roles:
            out["inRoles"] = in_roles
        if ensure == "absent":
            out["ensure"] = "absent"
        roles.append(out)
    return roles
