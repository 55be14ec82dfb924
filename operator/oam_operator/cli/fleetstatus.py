"""``status NAME --tree`` of a fleet Application: each cluster with its cluster Application's
bundles and items under it (docs/multicluster.md#the-clusters-in-status-and-diff).

The fleet Application's own tree holds its cluster Applications as objects; what each delivers
is in that cluster Application's status. The CLI reads them all with one list call (the
``<domain>/fleet=<uid>`` label, ``controller/reconcile/fleet.py``), never one GET per cluster.
Pure: the views in, the lines out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oam_operator.cli.statusview import StatusView, build_view, bundle_lines

__all__ = ["NOT_CREATED", "cluster_heading", "cluster_tree_lines", "fleet_selector"]

#: Under a cluster whose cluster Application is not there (yet).
NOT_CREATED = "  (its Application is not created yet)"


def fleet_selector(app: Mapping[str, Any], domain: str) -> str | None:
    """The label selector of the fleet Application's cluster Applications; ``None`` when ``app``
    has no uid (nothing can carry its label)."""
    uid = (app.get("metadata") or {}).get("uid") if isinstance(app.get("metadata"), Mapping) else None
    return f"{domain}/fleet={uid}" if uid else None


def cluster_heading(cluster: str, application: str, child: StatusView | None) -> str:
    """``Cluster <profile> (Application <name>)``, with the cluster Application's state and counts
    when it is there."""
    head = f"Cluster {cluster} (Application {application})"
    if child is None:
        return head
    return f"{head}  State: {child.state or '<none>'}  Objects: {child.ready_objects}/{child.objects} ready"


def cluster_tree_lines(view: StatusView, children: Sequence[Mapping[str, Any]], domain: str,
                       color: bool = False) -> list[str]:
    """For each cluster of ``view`` (the fleet Application's status, in its order): its heading,
    then its cluster Application's bundles and items indented, found among ``children`` by name."""
    by_name = {str((c.get("metadata") or {}).get("name") or ""): c for c in children}
    lines: list[str] = []
    for line in view.clusters:
        cluster, application = str(line.get("name") or ""), str(line.get("application") or "")
        found = by_name.get(application)
        child = build_view(found, domain) if found is not None else None
        lines.append("")
        lines.append(cluster_heading(cluster, application, child))
        if child is None:
            lines.append(NOT_CREATED)
            continue
        body = bundle_lines(child, tree=True, color=color)
        lines.extend(("  " + text).rstrip() for text in body or ["(no bundles yet)"])
    return lines
