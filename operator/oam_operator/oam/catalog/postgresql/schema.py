"""The property schema of the ``postgresql`` component (docs/transform.md#the-postgresql-component).

Blocks the spec calls *open* accept undeclared keys; their declared keys are still checked.
Keys marked required in the spec are required in the schema, so ``build`` reports a missing
one with the schema's message; the handler keeps its own message for callers that skip
authored-property validation. Value sets the handler checks itself (pooler type and mode,
replication method, ensure values, …) are described rather than enumerated, so the handler's
message is the one a user sees; only ``provider`` is an enum, as the spec states.
"""

from __future__ import annotations

from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import Schema

DEFAULT_PROVIDER = "cnpg"
DEFAULT_VERSION = "16"
DEFAULT_STORAGE_SIZE = "1Gi"
DEFAULT_REPLICAS = 1
DEFAULT_POOLER_INSTANCES = 3
DEFAULT_POOLER_TYPE = "rw"
DEFAULT_POOL_MODE = "session"
DEFAULT_SYNC_NUMBER = 1
DEFAULT_TOPOLOGY_KEY = "kubernetes.io/hostname"


def _s(description: str, required: bool = False) -> PropertySchema:
    return PropertySchema(type="string", description=description, required=required)


def _b(description: str, default: bool | None = None) -> PropertySchema:
    return PropertySchema(type="boolean", description=description, default=default)


def _open(description: str, **properties: PropertySchema) -> PropertySchema:
    return PropertySchema(type="object", additional_properties=True, description=description, properties=properties)


def _string_map(description: str) -> PropertySchema:
    return PropertySchema(type="object", additional_properties=True, description=description)


def _resources() -> PropertySchema:
    return PropertySchema(
        type="object",
        description="CPU and memory of the PostgreSQL instances (no defaults).",
        properties={
            "requests": _string_map("Requested quantities by resource name: cpu and memory only."),
            "limits": _string_map("Limits by resource name: cpu and memory only."),
        },
    )


def _extension() -> PropertySchema:
    return _open(
        "One PostgreSQL extension of the database.",
        name=_s("Extension name.", required=True),
        ensure=_s("present (default) or absent."),
    )


def _database() -> PropertySchema:
    return _open(
        "One database, emitted as a CloudNativePG Database named <component>-<name>.",
        name=_s("Database name.", required=True),
        owner=_s("Owning role.", required=True),
        ensure=_s("present (default) or absent."),
        databaseReclaimPolicy=_s("retain (default) or delete: what happens to the database when the object goes."),
        extensions=PropertySchema(type="array", description="Extensions of the database.", items=_extension()),
    )


def _role() -> PropertySchema:
    return _open(
        "One role managed by the cluster.",
        name=_s("Role name.", required=True),
        ensure=_s("present (default) or absent."),
        login=_b("The role can log in."),
        superuser=_b("The role is a superuser."),
        createdb=_b("The role can create databases."),
        createrole=_b("The role can create roles."),
        replication=_b("The role can start replication."),
        inherit=_b("The role inherits the privileges of the roles it is a member of."),
        connectionLimit=PropertySchema(type="integer", description="Connection limit of the role (0 = not set)."),
        passwordSecret=PropertySchema(description="Name of the Secret holding the role's password (or {name})."),
        comment=_s("Comment on the role."),
        inRoles=PropertySchema(type="array", description="Roles this role is a member of.", items=_s("A role name.")),
    )


def _object_store_fields(what: str) -> dict[str, PropertySchema]:
    return {
        "destinationPath": _s(f"Object-store path of {what}.", required=True),
        "endpointURL": _s("S3-compatible endpoint URL."),
        "secretName": _s("Secret with ACCESS_KEY_ID and SECRET_ACCESS_KEY."),
        "retentionPolicy": _s("How long backups are kept (e.g. 30d)."),
        "serverName": _s("Server name inside the object store."),
    }


def postgresql_schema() -> Schema:
    return {
        "provider": PropertySchema(
            type="string",
            enum=[DEFAULT_PROVIDER],
            default=DEFAULT_PROVIDER,
            description="Operator that runs the cluster; cnpg (CloudNativePG) is the only one.",
        ),
        "version": PropertySchema(type="string", default=DEFAULT_VERSION, description="PostgreSQL major version."),
        "storageSize": PropertySchema(
            type="string", default=DEFAULT_STORAGE_SIZE, description="Storage size of each instance."
        ),
        "replicas": PropertySchema(
            type="integer", default=DEFAULT_REPLICAS, description="Number of instances (more than one enables a PDB)."
        ),
        "imageName": _s("PostgreSQL image; defaults to ghcr.io/cloudnative-pg/postgresql:<version>."),
        "resources": _resources(),
        "backup": _open(
            "Barman object-store backups of the cluster.",
            retentionPolicy=_s("How long backups are kept (e.g. 30d)."),
            destinationPath=_s("Object-store path of the backups."),
            endpointURL=_s("S3-compatible endpoint URL."),
            secretName=_s("Secret with ACCESS_KEY_ID and SECRET_ACCESS_KEY."),
        ),
        "monitoring": _open(
            "Prometheus monitoring of the cluster.",
            enabled=_b("Create a PodMonitor.", default=False),
            customQueries=PropertySchema(
                type="array",
                description="ConfigMaps holding custom monitoring queries.",
                items=_open(
                    "One custom-queries ConfigMap key.",
                    name=_s("ConfigMap name.", required=True),
                    key=_s("Key within the ConfigMap.", required=True),
                ),
            ),
        ),
        "pooler": _open(
            "A PgBouncer pooler in front of the cluster, named <component>-pooler.",
            enabled=_b("Create the pooler.", default=False),
            instances=PropertySchema(
                type="integer", default=DEFAULT_POOLER_INSTANCES, description="Number of pooler instances."
            ),
            type=PropertySchema(
                type="string", default=DEFAULT_POOLER_TYPE, description="rw (primary) or ro (replicas)."
            ),
            poolMode=PropertySchema(
                type="string", default=DEFAULT_POOL_MODE, description="session, transaction or statement."
            ),
            parameters=_string_map("PgBouncer parameters (string values)."),
        ),
        "bootstrap": _open(
            "How a new cluster is initialised: recovery or pg_basebackup from an external cluster.",
            recovery=_open("Recover from a backup.", source=_s("Name of the external cluster to recover from.")),
            pg_basebackup=_open("Clone a running cluster.", source=_s("Name of the external cluster to clone.")),
        ),
        "replication": _open(
            "Replication settings.",
            synchronous=_open(
                "Synchronous replication.",
                method=_s("any or first."),
                number=PropertySchema(
                    type="integer", default=DEFAULT_SYNC_NUMBER, description="Number of synchronous standbys (>= 0)."
                ),
                dataDurability=_s("required or preferred."),
            ),
        ),
        "postgresql": _open("PostgreSQL configuration.", parameters=_string_map("postgresql.conf parameters.")),
        "inheritedMetadata": _open(
            "Labels and annotations every object of the cluster inherits.",
            labels=_string_map("Inherited labels (string values)."),
            annotations=_string_map("Inherited annotations (string values)."),
        ),
        "objectStore": _open(
            "A Barman Cloud ObjectStore and the WAL-archiver plugin using it.",
            **_object_store_fields("the archive"),
        ),
        "affinity": _open(
            "Scheduling of the instances.",
            enablePodAntiAffinity=_b("Spread the instances with pod anti-affinity.", default=True),
            topologyKey=PropertySchema(
                type="string", default=DEFAULT_TOPOLOGY_KEY, description="Topology key of the anti-affinity."
            ),
            podAntiAffinityType=_s("preferred or required."),
            nodeSelector=_string_map("Node labels the instances must run on."),
        ),
        "externalClusters": PropertySchema(
            type="array",
            description="Other clusters, for bootstrap or replica clusters.",
            items=_open(
                "One external cluster (entries without a name are dropped).",
                name=_s("External cluster name."),
                connectionParameters=_string_map("libpq connection parameters."),
                barmanObjectStore=_string_map("Barman object store of the external cluster (secretName as in backup)."),
            ),
        ),
        "managedRoles": PropertySchema(type="array", description="Roles the cluster manages.", items=_role()),
        "databases": PropertySchema(type="array", description="Databases of the cluster.", items=_database()),
    }
