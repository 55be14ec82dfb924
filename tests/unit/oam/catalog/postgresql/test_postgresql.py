"""The ``postgresql`` component: a CloudNativePG cluster (docs/transform.md#the-postgresql-component)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.packages import comp, document, error, objects, run

from oam_operator.oam import TransformContext, new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema

BASE_SPEC: dict[str, Any] = {
    "instances": 1,
    "imageName": "ghcr.io/cloudnative-pg/postgresql:16",
    "enablePDB": False,
    "primaryUpdateStrategy": "unsupervised",
    "storage": {"size": "1Gi"},
    "resources": {},
    "affinity": {},
    "postgresql": {"syncReplicaElectionConstraint": {"enabled": False}},
}


def pg(**props: Any) -> list[dict[str, Any]]:
    return objects(comp("db", "postgresql", **props))


def cluster_spec(**props: Any) -> dict[str, Any]:
    spec: dict[str, Any] = pg(**props)[0]["spec"]
    return spec


def changed(**props: Any) -> dict[str, Any]:
    """The Cluster spec entries that differ from the defaults."""
    return {k: v for k, v in cluster_spec(**props).items() if BASE_SPEC.get(k) != v}


def test_defaults() -> None:
    assert pg() == [
        {
            "apiVersion": "postgresql.cnpg.io/v1",
            "kind": "Cluster",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": BASE_SPEC,
        }
    ]


def test_schema_defaults_match_the_behaviour() -> None:
    schema = new_builtin_transformer().handler_schemas().components["postgresql"]
    defaults = {k: v.default for k, v in schema.items() if v.default is not None}
    assert defaults == {"provider": "cnpg", "version": "16", "storageSize": "1Gi", "replicas": 1}
    assert pg(**defaults) == pg()
    nested = {path: node.default for path, node in walk_schema(schema) if node.default is not None and "." in path}
    assert nested == {
        "affinity.enablePodAntiAffinity": True,
        "affinity.topologyKey": "kubernetes.io/hostname",
        "monitoring.enabled": False,
        "pooler.enabled": False,
        "pooler.instances": 3,
        "pooler.poolMode": "session",
        "pooler.type": "rw",
        "replication.synchronous.number": 1,
    }
    assert pg(pooler={"enabled": True}) == pg(
        pooler={"enabled": True, "instances": 3, "type": "rw", "poolMode": "session"}
    )
    assert changed(replication={"synchronous": {"method": "any"}}) == changed(
        replication={"synchronous": {"method": "any", "number": 1}}
    )
    assert changed(affinity={}) == changed(
        affinity={"enablePodAntiAffinity": True, "topologyKey": "kubernetes.io/hostname"}
    )


def test_version_image_storage_and_replicas() -> None:
    assert changed(version="17", storageSize="20Gi", replicas=3) == {
        "instances": 3,
        "imageName": "ghcr.io/cloudnative-pg/postgresql:17",
        "enablePDB": True,
        "storage": {"size": "20Gi"},
    }
    assert changed(version="17", imageName="registry.local/pg:17.2") == {"imageName": "registry.local/pg:17.2"}
    assert changed(replicas=2.0) == {"instances": 2, "enablePDB": True}


def test_resources_are_canonical_without_defaults() -> None:
    assert changed(resources={"requests": {"cpu": 0.5, "memory": "2048Mi"}, "limits": {"memory": "4Gi"}}) == {
        "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "4Gi"}}
    }
    assert changed(resources={"limits": {"cpu": "2"}}) == {"resources": {"limits": {"cpu": "2"}}}
    assert changed(resources={}) == {}


def test_affinity() -> None:
    assert changed(affinity={}) == {
        "affinity": {"enablePodAntiAffinity": True, "topologyKey": "kubernetes.io/hostname"}
    }
    props = {
        "enablePodAntiAffinity": False,
        "topologyKey": "topology.kubernetes.io/zone",
        "podAntiAffinityType": "required",
        "nodeSelector": {"role": "db", "n": 1},
    }
    assert changed(affinity=props)["affinity"] == {
        "enablePodAntiAffinity": False,
        "topologyKey": "topology.kubernetes.io/zone",
        "podAntiAffinityType": "required",
        "nodeSelector": {"role": "db"},
    }


def test_postgresql_parameters_and_synchronous_replication() -> None:
    spec = cluster_spec(
        postgresql={"parameters": {"max_connections": "200", "shared_buffers": 256}},
        replication={"synchronous": {"method": "first", "number": 2, "dataDurability": "preferred"}},
    )
    assert spec["postgresql"] == {
        "syncReplicaElectionConstraint": {"enabled": False},
        "parameters": {"max_connections": "200"},
        "synchronous": {"method": "first", "number": 2, "dataDurability": "preferred", "failoverQuorum": False},
    }
    assert cluster_spec(replication={"synchronous": {"method": "any"}})["postgresql"]["synchronous"] == {
        "method": "any",
        "number": 1,
        "failoverQuorum": False,
    }
    assert changed(replication={"synchronous": {"number": 0}}) == {}


def test_inherited_metadata_backup_and_monitoring() -> None:
    assert changed(inheritedMetadata={"labels": {"team": "data", "n": 1}, "annotations": {"a": "b"}}) == {
        "inheritedMetadata": {"labels": {"team": "data"}, "annotations": {"a": "b"}}
    }
    assert changed(inheritedMetadata={}) == {"inheritedMetadata": {}}
    assert changed(
        backup={
            "retentionPolicy": "30d",
            "destinationPath": "s3://b/db",
            "endpointURL": "https://s3",
            "secretName": "s3",
        }
    ) == {
        "backup": {
            "retentionPolicy": "30d",
            "barmanObjectStore": {
                "destinationPath": "s3://b/db",
                "endpointURL": "https://s3",
                "s3Credentials": {
                    "accessKeyId": {"name": "s3", "key": "ACCESS_KEY_ID"},
                    "secretAccessKey": {"name": "s3", "key": "SECRET_ACCESS_KEY"},
                },
            },
        }
    }
    assert changed(backup={"retentionPolicy": "7d"}) == {
        "backup": {"retentionPolicy": "7d", "barmanObjectStore": {"destinationPath": ""}}
    }
    assert changed(backup={"secretName": "s3"}) == {}
    assert changed(monitoring={"enabled": True}) == {"monitoring": {"enablePodMonitor": True}}
    queries = [{"name": "cm", "key": "queries.yaml"}]
    assert changed(monitoring={"enabled": True, "customQueries": queries}) == {
        "monitoring": {"enablePodMonitor": True, "customQueriesConfigMap": queries}
    }
    assert changed(monitoring={"enabled": False, "customQueries": queries}) == {}


def test_bootstrap_external_clusters_and_roles() -> None:
    assert changed(bootstrap={"recovery": {"source": "old"}}) == {"bootstrap": {"recovery": {"source": "old"}}}
    assert changed(bootstrap={"pg_basebackup": {"source": "origin"}}) == {
        "bootstrap": {"pg_basebackup": {"source": "origin"}}
    }
    external = [
        {"connectionParameters": {"host": "x"}},
        {"name": "origin", "connectionParameters": {"host": "origin-rw", "port": 5432, "dbname": "app"}},
        {"name": "old", "barmanObjectStore": {"destinationPath": "s3://b/old", "secretName": "s3", "serverName": "pg"}},
    ]
    assert changed(externalClusters=external) == {
        "externalClusters": [
            {"name": "origin", "connectionParameters": {"host": "origin-rw", "dbname": "app"}},
            {
                "name": "old",
                "barmanObjectStore": {
                    "destinationPath": "s3://b/old",
                    "serverName": "pg",
                    "s3Credentials": {
                        "accessKeyId": {"name": "s3", "key": "ACCESS_KEY_ID"},
                        "secretAccessKey": {"name": "s3", "key": "SECRET_ACCESS_KEY"},
                    },
                },
            },
        ]
    }
    roles = [
        {
            "name": "app",
            "login": True,
            "superuser": False,
            "createdb": True,
            "connectionLimit": 0,
            "passwordSecret": "app-pw",
        },
        {
            "name": "ro",
            "inherit": False,
            "createrole": True,
            "replication": True,
            "connectionLimit": -1,
            "comment": "read only",
            "inRoles": ["pg_read_all_data"],
            "passwordSecret": {"name": "ro-pw"},
            "ensure": "present",
        },
        {"name": "gone", "ensure": "absent", "inherit": True},
    ]
    assert changed(managedRoles=roles) == {
        "managed": {
            "roles": [
                {"name": "app", "login": True, "createdb": True, "passwordSecret": {"name": "app-pw"}},
                {
                    "name": "ro",
                    "inherit": False,
                    "createrole": True,
                    "replication": True,
                    "connectionLimit": -1,
                    "comment": "read only",
                    "inRoles": ["pg_read_all_data"],
                    "passwordSecret": {"name": "ro-pw"},
                },
                {"name": "gone", "inherit": True, "ensure": "absent"},
            ]
        }
    }


def test_pooler() -> None:
    objs = pg(
        pooler={
            "enabled": True,
            "type": "ro",
            "poolMode": "transaction",
            "parameters": {"max_client_conn": "100", "x": 1},
        }
    )
    assert objs[1] == {
        "apiVersion": "postgresql.cnpg.io/v1",
        "kind": "Pooler",
        "metadata": {"name": "db-pooler", "namespace": "default"},
        "spec": {
            "cluster": {"name": "db"},
            "instances": 3,
            "type": "ro",
            "pgbouncer": {"poolMode": "transaction", "parameters": {"max_client_conn": "100"}},
        },
    }
    assert pg(pooler={"enabled": True, "instances": 1})[1]["spec"] == {
        "cluster": {"name": "db"},
        "instances": 1,
        "type": "rw",
        "pgbouncer": {"poolMode": "session"},
    }
    assert len(pg(pooler={"type": "ro"})) == 1  # not enabled


def test_object_store_adds_the_plugin_and_the_store() -> None:
    objs = pg(
        objectStore={
            "destinationPath": "s3://b/wal",
            "endpointURL": "https://s3",
            "secretName": "s3",
            "retentionPolicy": "14d",
            "serverName": "db-1",
        },
        databases=[{"name": "app", "owner": "app"}],
        pooler={"enabled": True},
    )
    assert [o["kind"] for o in objs] == ["Cluster", "Pooler", "ObjectStore", "Database"]
    assert objs[0]["spec"]["plugins"] == [
        {"name": "barman-cloud.barmancloud.cnpg.io", "isWALArchiver": True, "parameters": {"objectStoreName": "db"}}
    ]
    assert objs[2] == {
        "apiVersion": "barmancloud.cnpg.io/v1",
        "kind": "ObjectStore",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "configuration": {
                "destinationPath": "s3://b/wal",
                "endpointURL": "https://s3",
                "serverName": "db-1",
                "s3Credentials": {
                    "accessKeyId": {"name": "s3", "key": "ACCESS_KEY_ID"},
                    "secretAccessKey": {"name": "s3", "key": "SECRET_ACCESS_KEY"},
                },
            },
            "retentionPolicy": "14d",
            "instanceSidecarConfiguration": {"resources": {}},
        },
    }
    minimal = pg(objectStore={"destinationPath": "s3://b/wal"})[1]["spec"]
    assert minimal == {
        "configuration": {"destinationPath": "s3://b/wal"},
        "instanceSidecarConfiguration": {"resources": {}},
    }


def test_databases() -> None:
    objs = pg(
        databases=[
            {"name": "app", "owner": "app_user", "ensure": "present", "databaseReclaimPolicy": "retain"},
            {
                "name": "old",
                "owner": "o",
                "ensure": "absent",
                "databaseReclaimPolicy": "delete",
                "extensions": [{"name": "postgis"}, {"name": "pgvector", "ensure": "absent"}],
            },
        ]
    )
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Cluster", "db"),
        ("Database", "db-app"),
        ("Database", "db-old"),
    ]
    assert objs[1]["spec"] == {"cluster": {"name": "db"}, "name": "app", "owner": "app_user"}
    assert objs[2]["spec"] == {
        "cluster": {"name": "db"},
        "name": "old",
        "owner": "o",
        "ensure": "absent",
        "databaseReclaimPolicy": "delete",
        "extensions": [{"name": "postgis", "ensure": "present"}, {"name": "pgvector", "ensure": "absent"}],
    }


def test_objects_carry_only_the_component_label() -> None:
    result = run(document([comp("db", "postgresql", pooler={"enabled": True})]), TransformContext())
    assert [o["metadata"].get("labels") for o in result.objects()] == [{"oam-operator.dev/component": "db"}] * 2
    assert result.cluster.node.name == ""  # no default tier: one flat bundle


REFUSALS = [
    ({"provider": "zalando"}, 'unsupported postgresql provider "zalando", supported: cnpg'),
    (
        {"resources": {"requests": {"memory": "1Gi", "storage": "1Gi", "ephemeral-storage": "1Gi"}}},
        "resources.requests: postgresql only supports cpu/memory, got unsupported name(s) [ephemeral-storage storage]",
    ),
    (
        {"resources": {"limits": {"nvidia.com/gpu": 1}}},
        "resources.limits: postgresql only supports cpu/memory, got unsupported name(s) [nvidia.com/gpu]",
    ),
    (
        {"resources": {"requests": {"cpu": "lots"}}},
        "invalid resources configuration: resources.requests: cpu: invalid quantity \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        {"resources": {"limits": {"memory": "-1Gi"}}},
        'invalid resources configuration: resources.limits: memory: quantity must not be negative, got "-1Gi"',
    ),
    (
        {"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1024Mi"}}},
        "invalid resources configuration: resources: memory: request 2Gi must not exceed limit 1Gi",
    ),
    (
        {"monitoring": {"customQueries": [{"name": "a", "key": "k"}, {"name": "b"}]}},
        "monitoring.customQueries[1]: both 'name' and 'key' are required",
    ),
    ({"pooler": {"enabled": True, "type": "rx"}}, 'unsupported pooler type "rx", supported: rw, ro'),
    (
        {"pooler": {"enabled": True, "poolMode": "tx"}},
        'unsupported pooler pool mode "tx", supported: session, transaction, statement',
    ),
    ({"pooler": {"enabled": True, "instances": 1.5}}, "invalid pooler instances value: 1.5"),
    ({"pooler": {"enabled": True, "instances": -1}}, "invalid pooler instances value: -1"),
    ({"pooler": {"enabled": True, "instances": "three"}}, "invalid pooler instances value: three"),
    (
        {"bootstrap": {"recovery": {"source": "a"}, "pg_basebackup": {"source": "b"}}},
        "bootstrap: recovery and pg_basebackup are mutually exclusive",
    ),
    (
        {"replication": {"synchronous": {"method": "all"}}},
        'unsupported replication synchronous method "all", supported: any, first',
    ),
    (
        {"replication": {"synchronous": {"method": "any", "number": -1}}},
        "replication synchronous number must be >= 0, got -1",
    ),
    (
        {"replication": {"synchronous": {"method": "any", "dataDurability": "strict"}}},
        'unsupported replication synchronous dataDurability "strict", supported: required, preferred',
    ),
    ({"objectStore": {"endpointURL": "https://s3"}}, "objectStore: 'destinationPath' is required"),
    ({"managedRoles": ["app"]}, "managedRoles[0]: must be an object"),
    ({"managedRoles": [{"name": "a"}, {"login": True}]}, "managedRoles[1]: 'name' is required"),
    (
        {"managedRoles": [{"name": "a", "ensure": "gone"}]},
        'managedRoles[0]: unsupported ensure "gone", supported: present, absent',
    ),
    ({"databases": [{"owner": "o"}]}, "databases[0]: 'name' is required"),
    ({"databases": [{"name": "a"}]}, "databases[0]: 'owner' is required"),
    (
        {"databases": [{"name": "a", "owner": "o", "databaseReclaimPolicy": "keep"}]},
        'databases[0]: unsupported databaseReclaimPolicy "keep", supported: retain, delete',
    ),
    (
        {"databases": [{"name": "a", "owner": "o", "extensions": [{"name": "x"}, {"ensure": "absent"}]}]},
        "databases[0].extensions[1]: 'name' is required",
    ),
    ({"databases": ["a"]}, "databases[0]: must be an object"),
    (
        {"databases": [{"name": "a", "owner": "o", "ensure": "gone"}]},
        'databases[0]: unsupported ensure "gone", supported: present, absent',
    ),
    (
        {"databases": [{"name": "a", "owner": "o", "extensions": [{"name": "x", "ensure": "no"}]}]},
        'databases[0].extensions[0]: unsupported ensure "no", supported: present, absent',
    ),
    ({"replicas": "3"}, "replicas: expected integer, got string"),
]


@pytest.mark.parametrize(("props", "message"), REFUSALS)
def test_refusals(props: dict[str, Any], message: str) -> None:
    assert error(document([comp("db", "postgresql", **props)]), validate=False) == f'component "db": {message}'


def test_blocks_are_checked_in_table_order() -> None:
    props = {
        "databases": [{}],
        "pooler": {"type": "x"},
        "monitoring": {"customQueries": [{}]},
        "resources": {"requests": {"disk": "1"}},
    }
    assert error(document([comp("db", "postgresql", **props)]), validate=False) == (
        'component "db": resources.requests: postgresql only supports cpu/memory, got unsupported name(s) [disk]'
    )
    del props["resources"]
    assert error(document([comp("db", "postgresql", **props)]), validate=False).endswith(
        "monitoring.customQueries[0]: both 'name' and 'key' are required"
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"provider": "zalando"}, 'properties.provider: unknown provider "zalando" (valid: cnpg)'),
        ({"replicas": "3"}, "properties.replicas: expected integer, got string (3)"),
        (
            {"monitoring": {"customQueries": [{"name": "a"}]}},
            'properties.monitoring.customQueries[0]: "key" is required',
        ),
        ({"objectStore": {}}, 'properties.objectStore: "destinationPath" is required'),
        ({"databases": [{"name": "a"}]}, 'properties.databases[0]: "owner" is required'),
        (
            {"resources": {"request": {}}},
            'properties.resources: unsupported field "request" (allowed: limits, requests); did you mean "requests"?',
        ),
        (
            {"storage": "1Gi"},
            'properties: unsupported field "storage" (allowed: affinity, backup, bootstrap, databases, externalClusters, imageName, inheritedMetadata, managedRoles, monitoring, objectStore, pooler, postgresql, provider, replicas, replication, resources, storageSize, version); did you mean "storageSize"?',
        ),
    ],
)
def test_authored_properties_are_checked_against_the_schema(props: dict[str, Any], message: str) -> None:
    assert error(document([comp("db", "postgresql", **props)])) == f'component "db" (type "postgresql"): {message}'


def test_open_blocks_accept_undeclared_keys() -> None:
    assert changed(backup={"destinationPath": "s3://b", "compression": "gzip"}) == {
        "backup": {"barmanObjectStore": {"destinationPath": "s3://b"}}
    }
