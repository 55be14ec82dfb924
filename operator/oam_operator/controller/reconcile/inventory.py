"""The standard cluster inventory: ``multicluster.x-k8s.io`` ClusterProfiles as targets, the pure
rules (docs/multicluster.md#the-standard-cluster-inventory).

SIG-Multicluster's ClusterProfile (KEP-4322) is namespaced and written by a cluster manager: it
names a cluster, labels it, says whether its control plane is healthy (``ControlPlaneHealthy``)
and, per access provider, how to reach it (``status.accessProviders[]``, formerly
``status.credentialProviders[]``: a kubeconfig ``cluster`` without credentials). The operator
reads it, never writes it. The credentials follow the secretreader convention of KEP-5339: the
bearer token is key ``token`` of the Secret ``<operator namespace>/<clusterName>``, the
``clusterName`` carried by the ``client.authentication.k8s.io/exec`` extension of the provider's
cluster (default: the profile's name).

Every function here is a function of its arguments, so the refusals and their exact messages are
unit-tested without a cluster; ``controller/service/inventory.py`` watches the profiles and
``controller/service/remotes.py`` connects.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oam_operator.api.meta import API_VERSION as OWN_API_VERSION
from oam_operator.api.meta import GROUP as OWN_GROUP
from oam_operator.reconciler.errors import ReconcilerError

from .delivery import DeliveryRefused, Kubeconfig, for_transform

__all__ = [
    "EXEC_EXTENSION",
    "GROUP",
    "HEALTHY",
    "OWN_RESOURCE",
    "RESOURCE",
    "TOKEN_KEY",
    "VERSION",
    "Access",
    "ControlPlaneUnhealthy",
    "Shadowed",
    "access_of",
    "cluster_name_of",
    "delivery_view",
    "display",
    "is_standard",
    "kubeconfig_of",
    "merged",
    "token_of",
    "transform_view",
    "typed",
    "unhealthy",
]

GROUP = "multicluster.x-k8s.io"
VERSION = "v1alpha1"
RESOURCE = f"clusterprofiles.{GROUP}"
OWN_RESOURCE = f"clusterprofiles.{OWN_GROUP}"
HEALTHY = "ControlPlaneHealthy"
EXEC_EXTENSION = "client.authentication.k8s.io/exec"
TOKEN_KEY = "token"
#: Fields of a kubeconfig cluster the operator passes on; a file reference is refused as in a kubeconfig Secret.
_CLUSTER_FIELDS = ("server", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify", "proxy-url")


class ControlPlaneUnhealthy(ReconcilerError):
    """The cluster manager says the control plane is not healthy: the pass does not connect and
    retries on its backoff (``Pending``), deleting nothing."""

    retryable = True


@dataclass(frozen=True)
class Access:
    """How to reach a standard profile's cluster: the access provider's cluster and the token's Secret."""

    provider: str
    cluster: Mapping[str, Any]  # the kubeconfig ``cluster`` of the access provider
    secret_namespace: str
    secret_name: str  # the clusterName

    def __str__(self) -> str:
        return f"{self.secret_namespace}/{self.secret_name}"


@dataclass(frozen=True)
class Shadowed:
    """A standard profile ignored because another profile holds its name; ``str()`` is the log line."""

    namespace: str
    name: str
    by: str  # the namespace of the standard profile that wins, "" when the operator's own kind wins

    def __str__(self) -> str:
        if not self.by:
            return (f"{RESOURCE} {self.namespace}/{self.name} is ignored: {OWN_RESOURCE} {self.name} has the same "
                    "name, and the operator's own kind wins")
        return (f"{RESOURCE} {self.namespace}/{self.name} is ignored: {RESOURCE} {self.by}/{self.name} has the "
                f"same name, and namespace {self.by} comes first in --inventory-namespaces")


def is_standard(profile: Mapping[str, Any] | None) -> bool:
    """Whether ``profile`` is a ``multicluster.x-k8s.io`` ClusterProfile (else the operator's own kind)."""
    return str((profile or {}).get("apiVersion") or "").startswith(f"{GROUP}/")


def typed(profile: Mapping[str, Any]) -> Mapping[str, Any]:
    """The standard profile with its apiVersion and kind: a LIST's items may lack them, and
    ``is_standard`` tells the kinds apart by them."""
    if profile.get("apiVersion") and profile.get("kind"):
        return profile
    return {**profile, "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile"}


def _meta(profile: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = profile.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def display(profile: Mapping[str, Any]) -> str:
    """How messages name a standard profile after ``ClusterProfile``: ``<ns>/<name> (multicluster.x-k8s.io)``."""
    meta = _meta(profile)
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''} ({GROUP})"


def merged(own: Mapping[str, Mapping[str, Any]], standard: Mapping[tuple[str, str], Mapping[str, Any]],
           namespaces: Sequence[str]) -> tuple[dict[str, Mapping[str, Any]], list[Shadowed]]:
    """Every target by name, the operator's own kind and the standard one together, and the
    standard profiles ignored: a name the own kind holds is the own kind's; a name held in two
    inventory namespaces is that of the namespace listed first (``namespaces``)."""
    order = {namespace: index for index, namespace in enumerate(namespaces)}
    result: dict[str, Mapping[str, Any]] = dict(own)
    shadowed: list[Shadowed] = []
    winners: dict[str, str] = {}
    for namespace, name in sorted(standard, key=lambda key: (order.get(key[0], len(order)), key[0], key[1])):
        if name in own:
            shadowed.append(Shadowed(namespace, name, ""))
        elif name in winners:
            shadowed.append(Shadowed(namespace, name, winners[name]))
        else:
            winners[name] = namespace
            result[name] = standard[(namespace, name)]
    return result, shadowed


def _conditions(profile: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = profile.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return [c for c in conditions or [] if isinstance(c, Mapping)] if isinstance(conditions, list) else []


def unhealthy(profile: Mapping[str, Any]) -> str | None:
    """The ``Pending`` message while ``ControlPlaneHealthy`` is ``False`` or ``Unknown``, ``None``
    when it is ``True`` or absent (a cluster manager that does not report it is trusted)."""
    for condition in _conditions(profile):
        if condition.get("type") != HEALTHY:
            continue
        status = str(condition.get("status") or "Unknown")
        if status == "True":
            return None
        message = str(condition.get("message") or "").strip() or "no message"
        return (f"ClusterProfile {display(profile)}: {HEALTHY} is {status}: {message}; the operator connects once "
                "it is True")
    return None


def _providers(profile: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    status = profile.get("status")
    providers = status.get(field) if isinstance(status, Mapping) else None
    return [p for p in providers or [] if isinstance(p, Mapping)] if isinstance(providers, list) else []


def _provider(profile: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The access provider ``name``: ``status.accessProviders`` first, then the deprecated
    ``status.credentialProviders`` (the newer field wins on a name both hold)."""
    for field in ("accessProviders", "credentialProviders"):
        for provider in _providers(profile, field):
            if provider.get("name") == name:
                return provider
    return None


def cluster_name_of(profile: Mapping[str, Any], cluster: Mapping[str, Any]) -> str:
    """The ``clusterName`` of the exec extension of the provider's cluster, else the profile's name."""
    extensions = cluster.get("extensions")
    for entry in extensions if isinstance(extensions, list) else []:
        if isinstance(entry, Mapping) and entry.get("name") == EXEC_EXTENSION:
            extension = entry.get("extension")
            if isinstance(extension, Mapping) and extension.get("clusterName"):
                return str(extension["clusterName"])
    return str(_meta(profile).get("name") or "")


def access_of(profile: Mapping[str, Any], provider: str, operator_namespace: str) -> Access:
    """How to reach the profile's cluster through ``provider``; raises ``DeliveryRefused``."""
    where = f"ClusterProfile {display(profile)}"
    found = _provider(profile, provider)
    if found is None:
        names = sorted({str(p.get("name")) for field in ("accessProviders", "credentialProviders")
                        for p in _providers(profile, field) if p.get("name")})
        raise DeliveryRefused(f'{where}: no access provider "{provider}" in status.accessProviders or '
                              f"status.credentialProviders (it has: {', '.join(names) or 'none'})")
    cluster = found.get("cluster")
    cluster = cluster if isinstance(cluster, Mapping) else {}
    if not isinstance(cluster.get("server"), str) or not cluster.get("server"):
        raise DeliveryRefused(f'{where}: access provider "{provider}" has no cluster.server')
    if cluster.get("certificate-authority"):
        raise DeliveryRefused(f'{where}: access provider "{provider}" reads the file certificate-authority, which '
                              "the operator does not read (use certificate-authority-data)")
    if not operator_namespace:
        raise DeliveryRefused(f"{where}: the token Secret's namespace is the operator's, which is unknown (set "
                              "POD_NAMESPACE or --operator-namespace)")
    return Access(provider, cluster, operator_namespace, cluster_name_of(profile, cluster))


def token_of(profile: Mapping[str, Any], access: Access, secret: Mapping[str, Any] | None) -> str:
    """The bearer token in the Secret as the API returns it (``None``: not found); raises ``DeliveryRefused``."""
    where = f"ClusterProfile {display(profile)}"
    if secret is None:
        raise DeliveryRefused(f'{where}: token Secret {access} of access provider "{access.provider}" not found')
    data = secret.get("data")
    raw = data.get(TOKEN_KEY) if isinstance(data, Mapping) else None
    if raw is None:
        keys = ", ".join(sorted(data)) if isinstance(data, Mapping) and data else "none"
        raise DeliveryRefused(f'{where}: Secret {access} has no key "{TOKEN_KEY}" (its keys: {keys})')
    try:
        token = base64.b64decode(str(raw), validate=True).decode("utf-8").strip()
    except (binascii.Error, ValueError):
        raise DeliveryRefused(f'{where}: Secret {access} key "{TOKEN_KEY}" is not base64 UTF-8 text') from None
    if not token:
        raise DeliveryRefused(f'{where}: Secret {access} key "{TOKEN_KEY}" is empty')
    return token


def kubeconfig_of(profile: Mapping[str, Any], access: Access, token: str) -> Kubeconfig:
    """The kubeconfig the operator connects with: the provider's cluster and the token, nothing else."""
    cluster = {key: access.cluster[key] for key in _CLUSTER_FIELDS if key in access.cluster}
    name = str(_meta(profile).get("name") or "cluster")
    document = {
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    return Kubeconfig(document, name, str(cluster["server"]))


def transform_view(profile: Mapping[str, Any]) -> Mapping[str, Any]:
    """The profile document the transform reads: a standard profile has no capabilities and no
    gitopsEngine, so it is an empty profile of its name (docs/transform.md#the-clusterprofile-document)."""
    if not is_standard(profile):
        return for_transform(profile)
    return {"apiVersion": OWN_API_VERSION, "kind": "ClusterProfile",
            "metadata": {"name": str(_meta(profile).get("name") or "")}, "spec": {}}


def delivery_view(profile: Mapping[str, Any] | None, provider: str) -> Any:
    """What of a profile decides where and whether its Applications deliver: a change of it wakes
    them. The own kind's spec; of a standard profile also its access provider and its health."""
    if profile is None:
        return None
    if not is_standard(profile):
        return profile.get("spec")
    health = [(c.get("status"), c.get("message")) for c in _conditions(profile) if c.get("type") == HEALTHY]
    return profile.get("spec"), _provider(profile, provider), health
