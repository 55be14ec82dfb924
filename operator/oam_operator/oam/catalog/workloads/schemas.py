"""PropertySchemas of the shared workload properties (docs/transform.md#shared-workload-properties).

The schemas let ``validate_authored_properties`` refuse a misspelt key or a wrongly typed value
before a handler reads it; the handlers still check what they read, for library callers that
skip that step. Defaults here document what the code does (a test ties the two together).
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.workloads.resources import DEFAULT_RESOURCES
from oam_operator.oam.catalog.workloads.scheduling import ANTI_AFFINITY_TYPES, HOSTNAME_KEY
from oam_operator.oam.catalog.workloads.volumes import DEFAULT_ACCESS_MODES
from oam_operator.oam.document.schema import PropertySchema as P

Schema = dict[str, P]

_QUANTITY = "A resource quantity (string or number), printed in canonical form."


def _string(description: str, required: bool = False, default: Any = None, enum: list[Any] | None = None) -> P:
    return P(type="string", description=description, required=required, default=default, enum=enum)


def _strings(description: str, item: str) -> P:
    return P(type="array", description=description, items=P(type="string", description=item))


def _bool(description: str, default: bool | None = None) -> P:
    return P(type="boolean", description=description, default=default)


def _int(description: str, required: bool = False, default: int | None = None) -> P:
    return P(type="integer", description=description, required=required, default=default)


def _object(description: str, fields: Schema, *, required: bool = False, open_: bool = False) -> P:
    return P(type="object", description=description, properties=fields, required=required, additional_properties=open_)


def _key_selector(what: str) -> P:
    return _object(
        f"Selects a key of a {what} in the pod's namespace.",
        {
            "name": _string(f"Name of the {what}.", True),
            "key": _string("The key to select.", True),
            "optional": _bool(f"Whether the {what} or its key may be missing."),
        },
    )


def env_schema() -> P:
    value_from = _object(
        "Source of the variable's value; exactly one selector.",
        {
            "secretKeyRef": _key_selector("Secret"),
            "configMapKeyRef": _key_selector("ConfigMap"),
            "fieldRef": _object(
                "Selects a field of the pod (downward API).",
                {
                    "fieldPath": _string("Path of the field, e.g. metadata.name.", True),
                    "apiVersion": _string("Schema version the fieldPath is written in."),
                },
            ),
            "resourceFieldRef": _object(
                "Selects a resource request or limit of a container.",
                {
                    "resource": _string("The resource, e.g. limits.cpu.", True),
                    "containerName": _string("Container whose resources are read; the main container by default."),
                    "divisor": P(description=f"Output unit of the value. {_QUANTITY}"),
                },
            ),
            "fileKeyRef": _object(
                "Selects a key of an env file in a volume.",
                {
                    "volumeName": _string("Name of the volume holding the file.", True),
                    "path": _string("Path of the file within the volume.", True),
                    "key": _string("The key to select.", True),
                    "optional": _bool("Whether the file or key may be missing."),
                },
            ),
        },
    )
    return P(
        type="array",
        description="Environment variables of the container, in order.",
        items=_object(
            "One environment variable.",
            {
                "name": _string("Variable name.", True),
                "value": _string("Literal value; mutually exclusive with valueFrom."),
                "valueFrom": value_from,
            },
        ),
    )


def env_from_schema() -> P:
    def ref(what: str) -> P:
        return _object(
            f"Imports every key of a {what} as variables.",
            {
                "name": _string(f"Name of the {what} (a DNS-1123 subdomain).", True),
                "optional": _bool(f"Whether the {what} may be missing."),
            },
        )

    return P(
        type="array",
        description="Sources of environment variables (whole ConfigMaps or Secrets).",
        items=_object(
            "One source: exactly one of configMapRef or secretRef.",
            {
                "prefix": _string("Prefix added to every imported variable name."),
                "configMapRef": ref("ConfigMap"),
                "secretRef": ref("Secret"),
            },
        ),
    )


def resources_schema() -> P:
    def section(what: str) -> P:
        return P(
            type="object",
            description=f"Resource {what} by resource name (cpu, memory, ephemeral-storage, hugepages-<size>, "
            f"or an extended resource). {_QUANTITY}",
            additional_properties=True,
            properties={
                "cpu": P(description=f"CPU {what}. {_QUANTITY}"),
                "memory": P(description=f"Memory {what}. {_QUANTITY}"),
            },
        )

    return P(
        type="object",
        description=(
            "Compute resources of the container. Requests default to cpu 100m and memory 128Mi; the memory limit "
            "defaults to the memory request; no cpu limit is added."
        ),
        properties={"requests": section("requests"), "limits": section("limits")},
        default=DEFAULT_RESOURCES,
    )


def _port_value(description: str) -> P:
    return P(description=f"{description} A number in 1-65535, or the name of this component's container port.")


def _http_get() -> P:
    return _object(
        "HTTP GET handler.",
        {
            "port": _port_value("Port to request."),
            "path": _string("Path to request."),
            "host": _string("Host to connect to; the pod IP by default."),
            "scheme": _string("HTTP or HTTPS."),
            "httpHeaders": P(
                type="array",
                description="Extra request headers.",
                items=_object(
                    "One header.",
                    {"name": _string("Header name.", True), "value": _string("Header value.")},
                ),
            ),
        },
    )


def _exec() -> P:
    return _object("Command handler.", {"command": _strings("Command and arguments.", "One argument.")})


def probe_schema(kind: str) -> P:
    fields: Schema = {
        "httpGet": _http_get(),
        "tcpSocket": _object(
            "TCP connect handler.",
            {"port": _port_value("Port to connect to."), "host": _string("Host to connect to.")},
        ),
        "exec": _exec(),
        "grpc": _object(
            "gRPC health-check handler.",
            {"port": _int("Port of the gRPC service."), "service": _string("Service name sent in the request.")},
        ),
        "initialDelaySeconds": _int("Seconds after start before the first probe."),
        "periodSeconds": _int("Seconds between probes."),
        "timeoutSeconds": _int("Seconds after which a probe times out."),
        "successThreshold": _int("Consecutive successes to count as healthy."),
        "failureThreshold": _int("Consecutive failures to count as unhealthy."),
        "terminationGracePeriodSeconds": _int("Grace period when a failed probe restarts the container."),
    }
    return _object(f"The {kind} probe: exactly one handler plus timing fields.", fields, open_=True)


def probes_schema() -> P:
    return _object(
        "Health probes of the main container; no defaults are added.",
        {kind: probe_schema(kind) for kind in ("readiness", "liveness", "startup")},
    )


def lifecycle_schema() -> P:
    def hook(what: str) -> P:
        return _object(
            f"Handler run {what}: exactly one of httpGet, exec or sleep.",
            {
                "httpGet": _http_get(),
                "exec": _exec(),
                "sleep": _object("Sleep handler.", {"seconds": _int("Seconds to sleep.", required=True)}),
            },
            open_=True,
        )

    return _object(
        "Lifecycle hooks of the main container.",
        {"postStart": hook("after the container starts"), "preStop": hook("before the container stops")},
    )


def security_context_schema() -> P:
    profile_types = ["Localhost", "RuntimeDefault", "Unconfined"]

    def profile(what: str) -> P:
        return _object(
            f"The {what} profile.",
            {
                "type": _string("Kind of profile.", enum=profile_types),
                "localhostProfile": _string("Profile file on the node, for type Localhost."),
            },
        )

    return _object(
        "Security context of the main container, emitted as written.",
        {
            "runAsUser": _int("UID the container runs as."),
            "runAsGroup": _int("GID the container runs as."),
            "runAsNonRoot": _bool("Refuse to start as root."),
            "readOnlyRootFilesystem": _bool("Mount the root filesystem read-only."),
            "allowPrivilegeEscalation": _bool("Whether a process may gain more privileges than its parent."),
            "privileged": _bool("Run the container privileged."),
            "capabilities": _object(
                "Linux capabilities to add or drop.",
                {
                    "add": _strings("Capabilities to add.", "A capability name."),
                    "drop": _strings("Capabilities to drop.", "A capability name."),
                },
            ),
            "seccompProfile": profile("seccomp"),
            "seLinuxOptions": _object(
                "SELinux context.",
                {
                    "user": _string("SELinux user."),
                    "role": _string("SELinux role."),
                    "type": _string("SELinux type."),
                    "level": _string("SELinux level."),
                },
            ),
            "appArmorProfile": profile("AppArmor"),
            "procMount": _string("Type of /proc mount.", enum=["Default", "Unmasked"]),
        },
    )


def volumes_schema() -> P:
    item_fields: Schema = {
        "name": _string("Volume name (a DNS-1123 label), unique in the component.", True),
        "mountPath": _string("Where the main container mounts the volume; unique in the component.", True),
        "type": _string(
            "Volume type: hostPath, emptyDir, pvc, configMap or secret; a volume without one is refused by the handler."
        ),
        "readOnly": _bool("Mount read-only."),
        "path": _string("hostPath: absolute path on the node."),
        "sizeLimit": P(description=f"emptyDir: size limit. {_QUANTITY}"),
        "size": P(description=f"pvc: requested storage of the generated claim. {_QUANTITY}"),
        "storageClass": _string("pvc: storage class of the generated claim."),
        "accessModes": P(
            type="array",
            description="pvc: access modes of the generated claim.",
            default=list(DEFAULT_ACCESS_MODES),
            items=_string("ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod."),
        ),
        "configMapName": _string("configMap: name of the ConfigMap."),
        "secretName": _string("secret: name of the Secret."),
    }
    return P(
        type="array",
        description="Pod volumes mounted into the main container; pvc volumes generate their PersistentVolumeClaim.",
        items=_object(
            "One volume and its mount; the keys besides the common ones depend on type.", item_fields, open_=True
        ),
    )


def _volume_mounts() -> P:
    return P(
        type="array",
        description="Volumes the container mounts.",
        items=_object(
            "One mount.",
            {
                "name": _string("Name of a pod volume.", True),
                "mountPath": _string("Where to mount it.", True),
                "readOnly": _bool("Mount read-only."),
                "subPath": _string("Sub-path of the volume to mount."),
            },
        ),
    )


def _container_fields() -> Schema:
    return {
        "name": _string("Container name.", True),
        "image": _string("Container image, pinned by a tag other than latest or by a digest.", True),
        "command": _strings("Entrypoint.", "One argument."),
        "args": _strings("Arguments to the entrypoint.", "One argument."),
        "env": env_schema(),
        "resources": resources_schema(),
        "volumeMounts": _volume_mounts(),
    }


def init_containers_schema() -> P:
    return P(
        type="array",
        description="Containers run to completion, in order, before the main container starts.",
        items=_object("One init container.", _container_fields()),
    )


def sidecars_schema() -> P:
    fields = _container_fields()
    fields["ports"] = P(
        type="array",
        description="Ports the sidecar listens on.",
        items=_object(
            "One container port.",
            {
                "containerPort": _int("Port number.", required=True),
                "name": _string("Port name."),
                "protocol": _string("TCP, UDP or SCTP.", default="TCP"),
            },
        ),
    )
    return P(
        type="array",
        description="Containers run beside the main container in the same pod.",
        items=_object("One sidecar container.", fields),
    )


def affinity_schema() -> P:
    return _object(
        "Scheduling preferences of the pods.",
        {
            "enablePodAntiAffinity": _bool("Keep the component's pods apart.", default=False),
            "topologyKey": _string("Node label that defines 'apart' for pod anti-affinity.", default=HOSTNAME_KEY),
            "podAntiAffinityType": _string(
                "Whether anti-affinity is a preference or a requirement.",
                enum=list(ANTI_AFFINITY_TYPES),
                default="preferred",
            ),
            "nodeSelector": P(
                type="object",
                description="Node labels the pods require (each key must have the given value).",
                additional_properties=True,
            ),
        },
    )


def topology_spread_schema() -> P:
    return _bool(
        "Spread replicas over nodes from 2 replicas (and preferably over zones from 3).",
        default=True,
    )


def image_schema() -> P:
    return _string("Container image of the main container, pinned by a tag other than latest or by a digest.", True)


def common_schema(*, sidecars: bool, affinity: bool) -> Schema:
    """The shared properties every workload type accepts (sidecars/affinity where the type has them)."""
    schema: Schema = {
        "image": image_schema(),
        "env": env_schema(),
        "envFrom": env_from_schema(),
        "resources": resources_schema(),
        "command": _strings("Entrypoint of the main container.", "One argument."),
        "args": _strings("Arguments of the main container.", "One argument."),
        "probes": probes_schema(),
        "lifecycle": lifecycle_schema(),
        "securityContext": security_context_schema(),
        "workingDir": _string("Working directory of the main container."),
        "volumes": volumes_schema(),
        "initContainers": init_containers_schema(),
    }
    if sidecars:
        schema["sidecars"] = sidecars_schema()
    if affinity:
        schema["affinity"] = affinity_schema()
    return schema


def replicas_schema() -> P:
    return _int("Number of pods.", default=1)
