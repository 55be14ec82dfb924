"""Where a ClusterProfile delivers its Applications: the pure rules (docs/multicluster.md#the-clusterprofile-fields,
docs/multicluster.md#refusals).

A profile's ``spec.kubeConfig.secretRef`` names the Secret holding the kubeconfig of the
cluster its Applications go to; ``spec.allowedNamespaces`` restricts which namespaces'
Applications may use it. Both are the operator's: the transform never sees them
(``for_transform``). Every function here is a function of its arguments, so the refusals and
their exact messages are unit-tested without a cluster; ``remotes.py`` reads the Secret and
connects.

A kubeconfig from a Secret must carry its own credentials: like Flux's controllers by
default, the operator refuses ``exec`` and ``auth-provider`` users and file references
(``client-certificate``, ``tokenFile``, …), which would run programs or read files of the
operator's Pod.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from .tenancy import TenantClients
from .watched import WatchedObjects

__all__ = [
    "DEFAULT_KEY",
    "DELIVERY_FIELDS",
    "DeliveryRefused",
    "Kubeconfig",
    "NamespaceNotAllowed",
    "SecretKey",
    "Target",
    "for_transform",
    "namespace_refusal",
    "owner_cluster",
    "parse_kubeconfig",
    "secret_key_of",
    "secret_value",
]

#: The operator's own fields of a profile, which the transform's profile document does not know:
#: where its Applications go, for whom, when their changes land (docs/operator.md#change-windows), and how
#: their objects are judged (docs/health.md#sources).
DELIVERY_FIELDS = ("kubeConfig", "allowedNamespaces", "changeWindows", "health")
DEFAULT_KEY = "value"
#: Fields that make the client read a file or run a program of the operator's Pod.
_FILE_FIELDS = {"cluster": ("certificate-authority",), "user": ("client-certificate", "client-key", "tokenFile")}
_PROGRAM_FIELDS = ("exec", "auth-provider")


class DeliveryRefused(Exception):
    """A profile's delivery settings cannot be used; ``str()`` is the status message."""


class NamespaceNotAllowed(DeliveryRefused):
    """The profile does not allow the Application's namespace (``spec.allowedNamespaces``)."""


@dataclass(frozen=True)
class SecretKey:
    """The kubeconfig's place: a key of a Secret on the operator's own cluster."""

    namespace: str
    name: str
    key: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Kubeconfig:
    """A kubeconfig that passed the checks: the document, its current context and that context's server."""

    document: Mapping[str, Any]
    context: str
    server: str


def for_transform(profile: Mapping[str, Any]) -> Mapping[str, Any]:
    """``profile`` without the delivery fields, which the transform's profile document does not know."""
    spec = profile.get("spec")
    if not isinstance(spec, Mapping) or not any(key in spec for key in DELIVERY_FIELDS):
        return profile
    return {**profile, "spec": {k: v for k, v in spec.items() if k not in DELIVERY_FIELDS}}


def owner_cluster(remote_id: str, hub_id: str) -> str:
    """The cluster part of the owner ids on a remote cluster, ``<remote id>@<hub id>``
    (docs/multicluster.md#owner-id-on-the-remote-cluster): it names the cluster its objects are
    on and the hub that delivers them, so two hubs with an Application of one namespace and name
    for that cluster never own the same objects — the second meets an owner conflict."""
    return f"{remote_id}@{hub_id}" if hub_id else remote_id


def secret_key_of(profile_name: str, spec: Mapping[str, Any], operator_namespace: str,
                  other_namespaces: Sequence[str]) -> SecretKey | None:
    """The Secret the profile names, ``None`` when it names none (the operator's own cluster).

    Raises ``DeliveryRefused`` when the Secret's namespace is neither the operator's nor one the
    platform team allowed (``--profile-secret-namespaces``)."""
    kube_config = spec.get("kubeConfig")
    if not isinstance(kube_config, Mapping):
        return None
    ref = kube_config.get("secretRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        raise DeliveryRefused(f"ClusterProfile {profile_name}: spec.kubeConfig.secretRef.name is required")
    name = str(ref["name"])
    key = str(ref.get("key") or DEFAULT_KEY)
    namespace = str(ref.get("namespace") or operator_namespace)
    if not namespace:
        raise DeliveryRefused(
            f"ClusterProfile {profile_name}: the kubeconfig Secret {name} has no namespace and the operator's "
            "namespace is unknown (set POD_NAMESPACE or --operator-namespace)")
    if namespace != operator_namespace and namespace not in other_namespaces:
        allowed = ", ".join(other_namespaces) or "none"
        raise DeliveryRefused(
            f"ClusterProfile {profile_name}: the kubeconfig Secret {namespace}/{name} is outside the operator's "
            f"namespace {operator_namespace or '(unknown)'} (--profile-secret-namespaces allows: {allowed})")
    return SecretKey(namespace, name, key)


def namespace_refusal(profile_name: str, spec: Mapping[str, Any], namespace: str) -> str | None:
    """Why an Application of ``namespace`` may not use the profile, ``None`` when it may."""
    allowed = spec.get("allowedNamespaces")
    if not isinstance(allowed, list) or namespace in allowed:
        return None
    shown = ", ".join(str(item) for item in allowed) or "none"
    return (f"ClusterProfile {profile_name} does not allow Applications of namespace {namespace} "
            f"(allowedNamespaces: {shown})")


def secret_value(profile_name: str, ref: SecretKey, secret: Mapping[str, Any]) -> bytes:
    """The bytes under the reference's key of the Secret as the API returns it (``data`` is base64)."""
    data = secret.get("data")
    raw = data.get(ref.key) if isinstance(data, Mapping) else None
    if raw is None:
        keys = ", ".join(sorted(data)) if isinstance(data, Mapping) and data else "none"
        raise DeliveryRefused(f'ClusterProfile {profile_name}: Secret {ref} has no key "{ref.key}" (its keys: {keys})')
    try:
        return base64.b64decode(str(raw), validate=True)
    except (binascii.Error, ValueError):
        raise DeliveryRefused(f'ClusterProfile {profile_name}: Secret {ref} key "{ref.key}" is not base64') from None


def parse_kubeconfig(profile_name: str, ref: SecretKey, data: bytes) -> Kubeconfig:
    """The kubeconfig in ``data``, checked as far as the operator can without connecting."""
    where = f'ClusterProfile {profile_name}: Secret {ref} key "{ref.key}"'
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DeliveryRefused(f"{where} is not a kubeconfig: not UTF-8 text") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        problem = " ".join(str(error).split())
        raise DeliveryRefused(f"{where} is not a kubeconfig: {problem}") from None
    if not isinstance(document, Mapping):
        found = "nothing" if document is None else type(document).__name__
        raise DeliveryRefused(f"{where} is not a kubeconfig: a YAML mapping was expected, found {found}")
    context_name = document.get("current-context")
    if not isinstance(context_name, str) or not context_name:
        raise DeliveryRefused(f"{where}: the kubeconfig names no current-context")
    context = _named(document, "contexts", "context", context_name)
    if context is None:
        raise DeliveryRefused(f'{where}: the kubeconfig\'s current-context "{context_name}" is not one of its contexts')
    cluster_name = str(context.get("cluster") or "")
    cluster = _named(document, "clusters", "cluster", cluster_name)
    if cluster is None:
        raise DeliveryRefused(f'{where}: context "{context_name}" names cluster "{cluster_name}", which the '
                              "kubeconfig does not define")
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise DeliveryRefused(f'{where}: cluster "{cluster_name}" has no server')
    _no_files(where, "cluster", cluster_name, cluster)
    user_name = str(context.get("user") or "")
    if user_name:
        user = _named(document, "users", "user", user_name)
        if user is None:
            raise DeliveryRefused(f'{where}: context "{context_name}" names user "{user_name}", which the '
                                  "kubeconfig does not define")
        for field in _PROGRAM_FIELDS:
            if user.get(field):
                raise DeliveryRefused(f'{where}: user "{user_name}" uses {field}, which the operator does not run '
                                      "(a kubeconfig in a Secret must carry its credentials)")
        _no_files(where, "user", user_name, user)
    return Kubeconfig(document, context_name, server)


def _named(document: Mapping[str, Any], section: str, field: str, name: str) -> Mapping[str, Any] | None:
    """The ``field`` of the entry called ``name`` in the list ``section`` of a kubeconfig."""
    entries = document.get(section)
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            value = entry.get(field)
            return value if isinstance(value, Mapping) else {}
    return None


def _no_files(where: str, what: str, name: str, entry: Mapping[str, Any]) -> None:
    for field in _FILE_FIELDS[what]:
        if entry.get(field):
            instead = "token" if field == "tokenFile" else f"{field}-data"
            raise DeliveryRefused(f'{where}: {what} "{name}" reads the file {field}, which the operator does not '
                                  f"read (use {instead})")


@dataclass(frozen=True)
class Target:
    """A remote cluster as one pass uses it."""

    profile: str
    server: str
    cluster_id: str
    clients: TenantClients
    owned: WatchedObjects | None = None  # the watches of owned objects there (``None``: none)
    owner_cluster: str = ""  # the cluster part of owner ids there (delivery.owner_cluster)

    @property
    def label(self) -> str:
        """How messages name the cluster."""
        return f"cluster {self.server} (ClusterProfile {self.profile})"
