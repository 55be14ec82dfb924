"""``build --profile P`` of a fleet Application: what P's cluster Application applies there
(docs/multicluster.md#one-cluster-offline).

A fleet Application (one with a ``topology`` policy) applies nothing itself; for each selected
ClusterProfile the operator writes a cluster Application whose spec is the fleet's, with the
override policies that select the profile merged (``controller/reconcile/fleet.py``'s ``child``).
Offline, the profile's name and labels are those of the profile file's ``metadata``, the same
fields the operator reads from the ClusterProfile resource: a file from
``kubectl get clusterprofile P -o yaml`` selects as the cluster does.

Pure: the document in, the cluster Application's document out, or the refusal's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.controller.reconcile.fleet import child
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.operatorpolicies.override import TYPE as OVERRIDE
from oam_operator.operatorpolicies.override import parse as parse_override
from oam_operator.operatorpolicies.topology import declared

__all__ = ["NotSelected", "cluster_document", "labels_text", "not_selected_message"]


class NotSelected(Exception):
    """The profile is not one of the topology's clusters; ``str()`` is the message."""


def labels_text(labels: Mapping[str, str]) -> str:
    """``k=v,k2=v2`` sorted, ``none`` without labels."""
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items())) or "none"


def not_selected_message(profile: str, policy: str, labels: Mapping[str, str]) -> str:
    """The refusal of ``build --profile`` for a cluster the fleet Application does not go to."""
    return (f"ClusterProfile {profile} (labels: {labels_text(labels)}) is not selected by the topology policy "
            f"{go_quote(policy)}: the Application delivers nothing to it")


def profile_identity(document: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """The name and labels of a ClusterProfile document, as its ``metadata`` says."""
    meta = document.get("metadata") if isinstance(document.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
    assert isinstance(labels, Mapping)
    return str(meta.get("name") or ""), {str(k): str(v) for k, v in labels.items()}


def cluster_document(document: Mapping[str, Any], profile: str, labels: Mapping[str, str],
                     domain: str) -> dict[str, Any] | None:
    """The Application document the cluster Application of ``profile`` (labelled ``labels``)
    carries: the fleet's metadata, its spec as the operator writes it there; ``None`` when
    ``document`` has no topology policy (it is built as it is). Raises ``NotSelected``, and
    ``PolicyError`` (``policy "<o>": …``) for an override policy that does not parse."""
    spec = document.get("spec") if isinstance(document.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    topology = declared(spec)
    if topology is None:
        return None
    names = [str(c.get("name")) for c in spec.get("components") or () if isinstance(c, Mapping)]
    for policy in spec.get("policies") or ():  # child() leaves out the overrides that do not parse
        if isinstance(policy, Mapping) and policy.get("type") == OVERRIDE:
            name = str(policy.get("name") or "")
            try:
                parse_override(name, dict(policy.get("properties") or {}), names)
            except PolicyError as error:
                raise PolicyError(f"policy {go_quote(name)}: {error}") from None
    if not topology.selects(profile, labels):
        raise NotSelected(not_selected_message(profile, topology.policy, labels))
    spec = child(document, profile, domain, labels=labels)["spec"]
    spec.pop("profile", None)  # build's --profile is the profile (the operator's field, not the transform's)
    if topology.namespace:  # where the cluster Application renders (controller/reconcile/fleetns.py)
        metadata = document.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        return {**document, "metadata": {**metadata, "namespace": topology.namespace}, "spec": spec}
    return {**document, "spec": spec}
