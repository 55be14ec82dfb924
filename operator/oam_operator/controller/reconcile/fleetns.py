"""The namespace a cluster Application renders into (docs/multicluster.md#topology).

A topology policy's ``namespace`` sends every selected cluster's namespaced objects there instead
of the Application's own namespace. The fleet Application writes it on each cluster Application
as an annotation (``fleet.child``), not as a spec field: it is the fleet's bookkeeping, not a
field a tenant sets on an Application of its own. The cluster Application's transform renders
into it (``composition.py``), its digest changes with it (so a changed namespace is a new
revision: the objects move, the old ones are pruned from its inventory), and a change of it wakes
the Application as a new generation does (``application.seen``). Tenancy is untouched: the
objects are outside the Application's namespace, so the reconciler's confinement refuses them
unless the operator allows cross-namespace objects (docs/operator.md#tenancy-and-impersonation),
and a profile's ``allowedNamespaces`` must allow this namespace too (``refusal``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def annotation(domain: str) -> str:
    """The annotation naming a cluster Application's target namespace."""
    return f"{domain}/fleet-namespace"


def target(body: Mapping[str, Any], domain: str) -> str:
    """Where the Application's namespaced objects go: the annotation's namespace, else its own."""
    meta = body.get("metadata") or {}
    named = (meta.get("annotations") or {}).get(annotation(domain))
    return str(named or meta.get("namespace") or "")


def moved(body: Mapping[str, Any], domain: str) -> str:
    """The target namespace when it is not the Application's own, else ``""``."""
    namespace = target(body, domain)
    return "" if namespace == str((body.get("metadata") or {}).get("namespace") or "") else namespace


def refusal(profile_name: str, profile: Mapping[str, Any] | None, body: Mapping[str, Any], domain: str) -> str | None:
    """Why the profile's ``allowedNamespaces`` refuses the target namespace, ``None`` when it
    allows it (or the objects stay in the Application's namespace, which the delivery checks)."""
    namespace = moved(body, domain)
    spec = (profile or {}).get("spec")
    allowed = spec.get("allowedNamespaces") if isinstance(spec, Mapping) else None
    if not namespace or not isinstance(allowed, list) or namespace in allowed:
        return None
    shown = ", ".join(str(item) for item in allowed) or "none"
    return (f"ClusterProfile {profile_name} does not allow namespace {namespace}, the topology's target namespace "
            f"(allowedNamespaces: {shown})")
