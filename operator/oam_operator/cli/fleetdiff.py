"""``oam-operator diff`` of a fleet Application: one section per selected cluster, then what changes
among its cluster Applications on the hub (docs/multicluster.md#the-clusters-in-status-and-diff).

A fleet Application (a ``topology`` policy) applies no component itself: each selected
ClusterProfile gets a cluster Application whose spec ``controller/reconcile/fleet.py``'s
``child`` makes (the overrides selecting it merged). So the diff of a fleet Application is the
diff of each of those cluster Applications against its own cluster — the same path as any
Application with a profile (``cli/diff.py``'s ``diff_body``, ``cli/remotediff.py``) — plus the
cluster Applications the hub would gain (a newly selected profile) or lose (one no longer
selected: pruned, its objects there deleted or, with ``onRemoval: orphan``, left).

The fleet Application's own checks run first (the transform, the override and topology
policies), so what the operator would refuse is refused here with its words. One cluster that
cannot be compared (its Secret unreadable, the cluster down) is that section's ``Error:`` line;
the others are still shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oam_operator.cli.diff import EXIT_CHANGES, EXIT_ERROR, EXIT_NONE, DiffError, diff_body, render
from oam_operator.controller.reconcile import fleet
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.operatorpolicies.topology import Topology

__all__ = ["ClusterSection", "FleetDiff", "cluster_heading", "fleet_diff", "fleet_exit_code", "render_fleet"]


@dataclass
class ClusterSection:
    """One selected cluster's diff: what its cluster Application would change there."""

    cluster: str
    application: str  # <namespace>/<name> on the hub
    compared_with: str = ""  # "cluster <server> (ClusterProfile <p>)"; "" for the hub itself
    output: str = ""  # cli/diff.py's render(): "no changes\n" or the waves and prunes
    error: str = ""

    @property
    def changed(self) -> bool:
        return not self.error and self.output != "no changes\n"


@dataclass
class FleetDiff:
    """The sections of the selected clusters and the hub's cluster Applications created or pruned."""

    policy: str
    sections: list[ClusterSection] = field(default_factory=list)
    creates: list[str] = field(default_factory=list)  # <namespace>/<name> of cluster Applications
    changes: list[tuple[str, str]] = field(default_factory=list)  # (<namespace>/<name>, unified diff of its spec)
    prunes: list[tuple[str, str, str]] = field(default_factory=list)  # (<namespace>/<name>, profile, onRemoval)


def cluster_heading(cluster: str, application: str) -> str:
    """The line that opens a cluster's section."""
    return f"Cluster {cluster} (Application {application}):"


def render_fleet(diff: FleetDiff) -> str:
    """The text of a fleet Application's diff (docs/multicluster.md#the-clusters-in-status-and-diff)."""
    lines: list[str] = []
    if not diff.sections:
        lines.append(f"No ClusterProfile is selected by the topology policy {go_quote(diff.policy)}")
    for section in diff.sections:
        lines.append(cluster_heading(section.cluster, section.application))
        if section.compared_with:
            lines.append(f"  Compared with {section.compared_with}")
        if section.error:
            lines.append(f"  Error: {section.error}")
        else:
            lines.extend("  " + line for line in section.output.rstrip("\n").split("\n"))
    if diff.creates or diff.changes or diff.prunes:
        lines.append("Cluster Applications on the hub:")
        lines.extend(f"  create Application {name}" for name in diff.creates)
        for name, text in diff.changes:
            lines.append(f"  change Application {name}")
            lines.extend("    " + line for line in text.rstrip("\n").split("\n"))
        lines.extend(f"  prune Application {name} (ClusterProfile {profile} is no longer selected; "
                     f"onRemoval: {on_removal})" for name, profile, on_removal in diff.prunes)
    return "\n".join(lines) + "\n"


def fleet_exit_code(diff: FleetDiff) -> int:
    """As ``diff`` documents: 2 when a cluster could not be compared, else 1 on any change
    anywhere, else 0."""
    if any(section.error for section in diff.sections):
        return EXIT_ERROR
    if diff.creates or diff.changes or diff.prunes or any(section.changed for section in diff.sections):
        return EXIT_CHANGES
    return EXIT_NONE


def plan_hub(body: Mapping[str, Any], namespace: str, selected: list[str], live: list[Mapping[str, Any]],
             topology: Topology, domain: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The cluster Applications the hub would gain and lose: of the ``selected`` profiles, those
    not among the ``live`` ones (the fleet label's), and the live ones no profile selects now.
    With no profile selected the operator changes nothing (``NoClusters``): none."""
    if not selected:
        return [], []
    name = str((body.get("metadata") or {}).get("name") or "")
    wanted = {fleet.child_name(name, cluster): cluster for cluster in selected}
    present = {str((app.get("metadata") or {}).get("name") or ""): app for app in live}
    creates = [f"{namespace}/{child}" for child in wanted if child not in present]
    prunes = []
    for child, app in sorted(present.items()):
        if child in wanted:
            continue
        annotations = (app.get("metadata") or {}).get("annotations") or {}
        profile = str(annotations.get(fleet.cluster_annotation(domain)) or "?")
        prunes.append((f"{namespace}/{child}", profile, topology.on_removal))
    return creates, prunes


def fleet_diff(body: Mapping[str, Any], namespace: str, conn: Any, domain: str, topology: Topology,
               show_bookkeeping: bool = False, operator_namespace: str | None = None,
               inventory_namespaces: Sequence[str] | None = None) -> FleetDiff:
    """Each selected cluster's diff and the hub's cluster Applications created or pruned; raises
    ``DiffError`` for what the operator refuses of the fleet Application itself. The selection is
    over both kinds of ClusterProfile (``inventory_namespaces`` ``None``: the environment's)."""
    from oam_operator.cli.apifailure import ApiFailure
    from oam_operator.cli.diff import live_application  # the live fleet Application, for its uid
    from oam_operator.cli.profiles import ProfileReader
    from oam_operator.cli.profiles import inventory_namespaces as inventory_of
    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.errors import ApiError
    from oam_operator.reconciler.ratelimit import RateLimiter

    _refuse_fleet(body, domain)
    meta = body.get("metadata") or {}
    name = str(meta.get("name") or "")
    client = ClusterClient(conn.api, rate_limiter=RateLimiter(0, 1), user_agent="oam-operator-diff")
    try:
        try:
            namespaces = inventory_of(inventory_namespaces)
            profiles = ProfileReader(client, namespaces).all()
            live_fleet = live_application(conn, namespace, name)
            uid = str(((live_fleet or {}).get("metadata") or {}).get("uid") or "")
            live: list[Mapping[str, Any]] = []
            if uid:  # its cluster Applications carry its uid: a FILE's is the live one's
                body = {**body, "metadata": {**meta, "uid": uid}}
                selector = f"{fleet.fleet_label(domain)}={uid}"
                live = list(client.request("list", "GET", _applications(namespace),
                                           query=[("labelSelector", selector)]).get("items") or ())
        except ApiError as error:
            raise DiffError(str(error)) from None
        selected = fleet.selected(topology, profiles)
        result = FleetDiff(topology.policy)
        result.creates, result.prunes = plan_hub(body, namespace, selected, live, topology, domain)
        present = {str((app.get("metadata") or {}).get("name") or ""): app for app in live}
        for cluster in selected:
            made = fleet.child(body, cluster, domain, labels=fleet.labels_of(profiles, cluster))
            section = ClusterSection(cluster, f"{namespace}/{made['metadata']['name']}")
            compared: list[str] = []
            try:
                held = present.get(made["metadata"]["name"])
                changed = _spec_change(client, made, held, domain) if held is not None else ""
                if changed:
                    result.changes.append((section.application, changed))
                waves, prunes = diff_body(made, namespace, conn, domain, show_bookkeeping, compared.append,
                                          operator_namespace, namespaces)
                section.output = render(waves, prunes)
            except DiffError as error:
                section.error = str(error)
            except ApiFailure as failure:  # the CLI's client's: this cluster's, not the others'
                section.error = failure.message
            section.compared_with = compared[0] if compared else ""
            result.sections.append(section)
        return result
    finally:
        client.close()


def _applications(namespace: str) -> str:
    return f"/apis/oam-operator.dev/v1alpha1/namespaces/{namespace}/applications"


def _spec_change(client: Any, made: Mapping[str, Any], live: Mapping[str, Any], domain: str) -> str:
    """The unified diff of the live cluster Application's spec and the spec the fleet Application
    would write (a server-side dry run, as the operator applies it, so defaults match); ``""``
    when equal. Raises ``DiffError``."""
    from oam_operator.cli.diff import unified
    from oam_operator.reconciler.client import APPLY_PATCH
    from oam_operator.reconciler.errors import ApiError

    name = str(made["metadata"]["name"])
    try:
        dry = client.request("apply", "PATCH", f"{_applications(str(made['metadata']['namespace']))}/{name}",
                             body=dict(made), content_type=APPLY_PATCH,
                             query=[("fieldManager", domain), ("force", "true"), ("dryRun", "All")])
    except ApiError as error:
        raise DiffError(f"Application {made['metadata']['namespace']}/{name}: {error}") from None
    return unified({"spec": live.get("spec") or {}}, {"spec": dry.get("spec") or {}}, f"Application/{name}")


def _refuse_fleet(body: Mapping[str, Any], domain: str) -> None:
    """The operator's own checks of the fleet Application (controller/reconcile/checks.py, its
    ``preview`` column): its transform, its override and topology policies."""
    from oam_operator.controller.reconcile.checks import Subject, first_refusal
    from oam_operator.controller.reconcile.composition import OperatorTransform
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.reconcile.tenancy import IdentityRule

    settings = Settings(domain=domain)
    subject = Subject(body, settings, OperatorTransform.from_settings(settings), lambda _name: None,
                      IdentityRule.from_settings(settings), cluster_id="")
    refused = first_refusal(subject, lambda check: check.preview)
    if refused is not None:
        raise DiffError(refused.message)
