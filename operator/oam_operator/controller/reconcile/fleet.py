"""One Application to a fleet of clusters (docs/multicluster.md#topology).

An Application with a ``topology`` policy (operatorpolicies/topology.py) is delivered to every
ClusterProfile the policy selects through one **cluster Application** per profile: an
Application of the same namespace, named ``<application>-<profile>``, whose spec is the fleet
Application's without the topology policy and with ``profile: <profile>``. The fleet Application
applies these as its objects, on the operator's own cluster and with the operator's identity
(they are its bookkeeping, in its own namespace); each cluster Application then delivers to its
cluster like any other, with the tenant's identity there. So everything one Application does on
one cluster — waves, the inventory, pruning, deletion in reverse order, tenancy, drift — holds on
each cluster, and a cluster's inventory lives in its own object, not in the fleet Application's
status.

Pure: the cluster Applications as manifests, the clusters a topology selects, the status that
sums them up.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.api.meta import API_VERSION
from oam_operator.operatorpolicies.override import TYPE as OVERRIDE
from oam_operator.operatorpolicies.override import applied
from oam_operator.operatorpolicies.override import declared as declared_overrides
from oam_operator.operatorpolicies.rollout import TYPE as ROLLOUT
from oam_operator.operatorpolicies.rollout import Rollout
from oam_operator.operatorpolicies.topology import TYPE as TOPOLOGY
from oam_operator.operatorpolicies.topology import Topology
from oam_operator.operatorpolicies.topology import declared as declared_topology

from . import fleetns
from .encode import BundlePlan, EncodedTree, identity_of

KIND = "Application"
MAX_NAME = 253
#: The bundle the cluster Applications are applied in (one wave: every cluster at once).
BUNDLE = "clusters"


def fleet_label(domain: str) -> str:
    """The label a cluster Application carries: its fleet Application's uid."""
    return f"{domain}/fleet"


def cluster_annotation(domain: str) -> str:
    """The annotation naming the ClusterProfile a cluster Application delivers to."""
    return f"{domain}/fleet-cluster"


def revision_annotation(domain: str) -> str:
    """The annotation naming the fleet Application's revision a cluster Application carries."""
    return f"{domain}/fleet-revision"


def selected(topology: Topology, profiles: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The names of the ClusterProfiles ``topology`` selects, sorted; a named profile that does
    not exist is not selected (it is delivered to once it is created)."""
    chosen = []
    for name, profile in profiles.items():
        labels = (profile.get("metadata") or {}).get("labels") or {}
        if topology.selects(name, labels):
            chosen.append(name)
    return sorted(chosen)


def labels_of(profiles: Mapping[str, Mapping[str, Any]], name: str) -> Mapping[str, str]:
    """The labels of the ClusterProfile ``name``."""
    return ((profiles.get(name) or {}).get("metadata") or {}).get("labels") or {}


def child_name(application: str, cluster: str) -> str:
    """``<application>-<cluster>``; past the 253 characters of a name, shortened with a digest."""
    name = f"{application}-{cluster}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[:MAX_NAME - 11].rstrip('-.')}-{digest}"


def child(body: Mapping[str, Any], cluster: str, domain: str, revision: int = 0,
          spec: Mapping[str, Any] | None = None, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The cluster Application of the fleet Application ``body`` for the ClusterProfile ``cluster``
    (labelled ``labels``), carrying ``revision``: its spec is ``spec`` (the fleet Application's
    spec of that revision, by default its current one) with the override policies that select
    the cluster applied, and without the fleet's own policies; with the topology's target
    ``namespace`` when it is not the fleet Application's own (fleetns.py)."""
    meta = body.get("metadata") or {}
    spec = copy.deepcopy(dict(spec if spec is not None else body.get("spec") or {}))
    topology = declared_topology(spec)
    target = topology.namespace if topology is not None else ""
    chosen = [found for found in declared_overrides(spec) if found.selects(cluster, labels or {})]
    if chosen:
        spec["components"] = applied(spec.get("components") or [], chosen)
    policies = [policy for policy in spec.get("policies") or ()
                if (policy or {}).get("type") not in (TOPOLOGY, ROLLOUT, OVERRIDE)]
    if policies:
        spec["policies"] = policies
    else:
        spec.pop("policies", None)
    spec["profile"] = cluster
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or "")
    moved = {fleetns.annotation(domain): target} if target and target != namespace else {}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": child_name(name, cluster),
            "namespace": namespace,
            "labels": {fleet_label(domain): str(meta.get("uid") or "")},
            "annotations": {
                cluster_annotation(domain): cluster,
                # Ready only once it says so for its generation (docs/reconciler.md#status-hints):
                # a cluster Application the operator has not passed yet is not Ready.
                f"{domain}/status-hint": "has-observed-generation,has-ready-condition",
                revision_annotation(domain): str(revision),
                **moved,
            },
            "ownerReferences": [{"apiVersion": API_VERSION, "kind": KIND, "name": name,
                                 "uid": str(meta.get("uid") or ""), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": spec,
    }


def groups(clusters: list[str], profiles: Mapping[str, Mapping[str, Any]],
           rollout: Rollout | None) -> list[list[str]]:
    """The clusters in the groups they take a new revision in: all at once without a rollout
    policy; else ordered by the ``orderBy`` label's value (absent last), then by name, in groups
    of the policy's size."""
    if rollout is None:
        return [list(clusters)]

    def order(name: str) -> tuple[bool, str, str]:
        labels = ((profiles.get(name) or {}).get("metadata") or {}).get("labels") or {}
        value = labels.get(rollout.order_by) if rollout.order_by else None
        return value is None, str(value or ""), name

    ordered = sorted(clusters, key=order)
    size = rollout.group_size(len(ordered))
    return [ordered[start:start + size] for start in range(0, len(ordered), size)]


def encoded(children: list[list[dict[str, Any]]], domain: str) -> EncodedTree:
    """The cluster Applications as objects, one wave per group: a group is applied once every
    cluster Application of the groups before it is Ready."""
    objects: list[dict[str, Any]] = []
    plans: list[BundlePlan] = []
    for wave, group in enumerate(children):
        keys = set()
        for manifest in group:
            out = copy.deepcopy(manifest)
            annotations = out["metadata"]["annotations"]
            annotations[f"{domain}/apply-order"] = str(wave)
            annotations[f"{domain}/delete-order"] = "0"
            objects.append(out)
            keys.add(identity_of(out))
        name = BUNDLE if len(children) == 1 else f"{BUNDLE}-{wave + 1}"
        plans.append(BundlePlan(name, (plans[-1].name,) if plans else (), wave, wave, frozenset(keys)))
    return EncodedTree(objects, plans)


@dataclass(frozen=True)
class ClusterState:
    """What the fleet Application's status says of one cluster."""

    cluster: str
    application: str
    state: str
    message: str
    revision: int | None
    objects: int | None
    ready_objects: int | None
    carries: int | None = None  # the fleet Application's revision its spec is (``revision_annotation``)
    ready_revision: int | None = None  # the fleet Application's revision last Ready everywhere, this cluster included
    live: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)  # the object as read
    reason: str = ""  # its Ready condition's reason
    said: str = ""  # its Ready condition's message, whole (``message`` is the summary, cut for a column)

    @property
    def why(self) -> str:
        """What it said, whole: what a failure names (the summary may cut the reason off)."""
        return self.said or self.message

    @property
    def failed(self) -> bool:
        """Failed its current spec: ``Error``, or out of time (``Timeout``: an unreachable cluster
        ends ``Pending``/``Timeout``, never ``Error``)."""
        return self.state == "Error" or (self.reason == "Timeout" and self.state != "Processing")

    @property
    def ready(self) -> bool:
        return self.state == "Ready"

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"name": self.cluster, "application": self.application, "state": self.state}
        for key, said in (("message", self.message), ("revision", self.revision), ("objects", self.objects),
                          ("readyObjects", self.ready_objects), ("fleetRevision", self.carries),
                          ("readyRevision", self.ready_revision)):
            if said not in (None, ""):
                value[key] = said
        return value


def cluster_state(cluster: str, application: str, found: Mapping[str, Any] | None, domain: str,
                  ready_before: int | None = None) -> ClusterState:
    """One cluster's line, from its cluster Application as read (``None``: not there yet);
    ``ready_before``: the revision the last line said was Ready there (it moves only when the
    fleet Application becomes Ready: a rollout's revert target is the revision before it)."""
    if found is None:
        return ClusterState(cluster, application, "Pending", "not created yet", None, None, None, None, ready_before)
    status = found.get("status") or {}
    meta = found.get("metadata") or {}
    current = status.get("observedGeneration") == meta.get("generation")
    state = str(status.get("state") or "Pending")
    if state in ("Ready", "Error") and not current:
        state = "Processing"  # its verdict is of an older spec
    if state == "Pending" and not current:
        state = "Processing"
    raw = (meta.get("annotations") or {}).get(revision_annotation(domain))
    carries = int(raw) if raw is not None and str(raw).isdigit() else None
    ready = next((c for c in status.get("conditions") or () if isinstance(c, Mapping) and c.get("type") == "Ready"),
                 None)
    return ClusterState(cluster, application, state, str(status.get("summary") or ""), status.get("revision"),
                        status.get("objects"), status.get("readyObjects"), carries, ready_before, found,
                        str((ready or {}).get("reason") or "") if current else "",
                        str((ready or {}).get("message") or "") if current else "")


def failed(states: Mapping[str, ClusterState], ordered: Iterable[str], revision: int) -> ClusterState | None:
    """The first cluster, in rollout order, whose cluster Application failed with ``revision``."""
    for cluster in ordered:
        state = states.get(cluster)
        if state is not None and state.carries == revision and state.failed:
            return state
    return None


def rollout_progress(ordered: list[list[str]], states: Iterable[ClusterState], revision: int) -> str | None:
    """Where a rollout of ``revision`` stands (docs/multicluster.md#rollout): the first group whose
    clusters are not all Ready for it; ``None`` when every group is."""
    done = {state.cluster for state in states if state.ready and state.carries == revision}
    for number, group in enumerate(ordered, start=1):
        if not set(group) <= done:
            return f"Rolling out revision {revision}: group {number} of {len(ordered)} ({', '.join(group)})"
    return None


def summary(states: Iterable[ClusterState]) -> str:
    """``<ready>/<selected>``: kubectl's CLUSTERS column."""
    states = list(states)
    return f"{sum(1 for state in states if state.ready)}/{len(states)}"
