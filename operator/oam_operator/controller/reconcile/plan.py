"""What an Application would apply, computed once for the pass and for ``oam-operator diff``
(docs/operator.md#owner-id-and-component-digest).

The owner id stamped on every object, the digest that tells a new revision from a re-apply
(and the previous release's form of it, written for downgrades), and the reconciler's options
follow from the Application, the operator's settings and the cluster the objects go to. The
pass and ``diff`` both call these functions, so what ``diff`` previews is what a pass applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from oam_operator.common.durations import parse_go_duration
from oam_operator.reconciler.cachedreads import CachedReads
from oam_operator.reconciler.objectpolicies import (
    AdoptionPolicy,
    DeletePolicy,
    MissingNamespacesPolicy,
    UpdatePolicy,
)
from oam_operator.reconciler.objects import ObjectRef
from oam_operator.reconciler.options import ReconcilerOptions

from .digest import applied_profile_spec, component_digest, legacy_component_digest
from .settings import Settings
from .sharding import object_labels

__all__ = ["Digests", "PassHooks", "digests_of", "owner_id", "reconciler_options"]


def owner_id(cluster: str, namespace: str, name: str) -> str:
    """The id every object of the Application carries (``<cluster>/<namespace>/<name>``)."""
    return f"{cluster}/{namespace}/{name}"


@dataclass(frozen=True)
class Digests:
    """The digest of what a pass applies, and the previous release's digest of the same input."""

    current: str
    legacy: str


def digests_of(domain: str, spec: Mapping[str, Any], generation: int, profile_name: str,
               profile: Mapping[str, Any] | None, moved_to: str = "",
               definitions: Mapping[str, str] | None = None) -> Digests:
    """The digests of ``spec`` under the resolved profile (``profile_name`` ``""``: none applies);
    ``moved_to``: the topology's target namespace of a cluster Application (fleetns.py), part of
    what it applies, so a changed one is a new revision (absent, the digest is as before);
    ``definitions``: the digests of the definitions it uses (definitionuse.py)."""
    profile_spec = applied_profile_spec(profile)
    if moved_to:
        spec = {**spec, "targetNamespace": moved_to}
    return Digests(component_digest(domain, dict(spec), profile_name, profile_spec, definitions),
                   legacy_component_digest(domain, generation, dict(spec), profile_name, profile_spec))


@dataclass(frozen=True)
class PassHooks:
    """What the operator's pass plugs into the reconciler (a preview such as ``diff`` has none)."""

    on_written: Callable[[Mapping[str, Any]], None] | None
    cached_reads: CachedReads | None
    metrics: Any
    clock: Callable[[], datetime]
    completed: Callable[[ObjectRef], bool]


def reconciler_options(settings: Settings, spec: Mapping[str, Any], namespace: str,
                       annotations: Mapping[str, str], hooks: PassHooks | None = None,
                       shard: str | None = None) -> ReconcilerOptions:
    """The reconciler's options for an Application of ``namespace`` with ``spec`` (its raw or typed
    fields ``adoptionPolicy``, ``updatePolicy``, ``deletePolicy``). Without ``hooks`` (a preview):
    objects only in the Application's namespace, no cluster-scoped ones, no Events; ``shard``: the
    Application's shard when it is not this instance's (``diff``)."""
    labels = object_labels(settings, shard)
    if hooks is None:
        return ReconcilerOptions(allowed_namespaces=frozenset({namespace}), allow_cluster_scoped=False,
                                 enable_events=False, extra_labels=labels)
    cross_namespace = settings.allow_cross_namespace_objects
    events = settings.dependent_events and annotations.get(f"{settings.domain}/disable-events") != "true"
    return ReconcilerOptions(
        adoption_policy=AdoptionPolicy(spec.get("adoptionPolicy") or settings.default_adoption_policy.value),
        update_policy=UpdatePolicy(spec.get("updatePolicy") or settings.default_update_policy.value),
        delete_policy=DeletePolicy(spec.get("deletePolicy") or "Delete"),
        missing_namespaces_policy=(
            MissingNamespacesPolicy.CREATE if cross_namespace else MissingNamespacesPolicy.DO_NOT_CREATE
        ),
        reapply_interval=parse_go_duration(settings.reapply_interval),
        concurrency=settings.apply_concurrency,
        on_written=hooks.on_written,
        cached_reads=hooks.cached_reads,
        enable_events=events,
        allowed_namespaces=None if cross_namespace else frozenset({namespace}),
        allow_cluster_scoped=settings.allow_cluster_scoped_objects,
        cluster_scoped_adoption_policy=settings.cluster_scoped_adoption_policy,  # never the tenant's
        metrics=hooks.metrics,
        clock=hooks.clock,
        extra_labels=labels,  # the watches of owned objects select on it (sharding.py)
        completed=hooks.completed,
    )
