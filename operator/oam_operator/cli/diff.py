"""``oam-operator diff FILE|NAME``: the change an Application would make to the live cluster
(docs/operator.md#the-command-line).

Computed, not guessed: the Application goes through the operator's own checks and transform
(``controller/reconcile/checks.py``, ``controller/reconcile/composition.py``; what the operator would refuse is an
``Error:`` with the status's words), its objects are normalised and stamped by the
reconciler's own ``plan()`` (owner-id label, owner-id and digest annotations, the shard label
the serving instance writes (``shard_of``), field manager = the domain), and every object is
sent as a server-side apply with ``dryRun=All`` and ``force``, as the operator writes it. What
the server answers is compared with the live object, with the fields nobody authors left out
(``managedFields``, ``resourceVersion``, ``generation``, ``uid``, ``creationTimestamp``,
``status``), and the operator's bookkeeping annotations (``<domain>/owner-id``,
``<domain>/digest``: the manifest's hash, new on every changed object) unless ``show_bookkeeping``.
The live Application's inventory (as the operator persists it) gives the prunes.

Output, per apply wave (named by its bundle): ``create``, ``change`` (with a unified diff of the
YAML) and then ``prune`` lines; ``no changes`` when the cluster is in sync. Exit codes as
``kubectl diff``: 0 no changes, 1 changes, 2 an error (one ``Error:`` line).

``--revision N`` previews revision N of the live Application NAME (its recorded spec,
``cli/history.py``) instead of its current spec.

Decisions: FILE wins when a file of that name exists, else the argument names a live
Application. ``-n`` sets the namespace of a FILE's Application (else its own, else the
context's). The preview assumes the operator's default confinement (objects only in the
Application's namespace), as ``run`` does without ``--allow-*`` flags.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

__all__ = ["EXIT_CHANGES", "EXIT_ERROR", "EXIT_NONE", "run_diff"]

EXIT_NONE, EXIT_CHANGES, EXIT_ERROR = 0, 1, 2
_NOISE = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")


class DiffError(Exception):
    """A failure of the preview; ``str()`` is the one line printed after ``Error:``."""


@dataclass
class WavePlan:
    name: str
    creates: list[str] = field(default_factory=list)
    changes: list[tuple[str, str]] = field(default_factory=list)


def clean(obj: Mapping[str, Any] | None, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``obj`` without the fields the server or controllers own (see the module doc) and the
    annotations named in ``hidden``."""
    if obj is None:
        return {}
    result = {key: value for key, value in obj.items() if key != "status"}
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _NOISE}
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k not in hidden}
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    result["metadata"] = metadata
    return result


def bookkeeping(domain: str) -> frozenset[str]:
    """The annotations the operator stamps for itself on every object (docs/operator.md#the-command-line)."""
    return frozenset({f"{domain}/owner-id", f"{domain}/digest"})


def unified(live: Mapping[str, Any], desired: Mapping[str, Any], label: str) -> str:
    """A unified diff of two objects' YAML (sorted keys), ``""`` when equal."""
    from oam_operator.oam.formatting.serialize import dump_document

    before = dump_document(dict(live)).splitlines(keepends=True)
    after = dump_document(dict(desired)).splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"live/{label}", f"desired/{label}"))


def _load_target(target: str, namespace: str | None, conn: Any,
                 live_only: bool = False) -> tuple[dict[str, Any], str]:
    import yaml

    from oam_operator.cli.build import size_warnings
    from oam_operator.cli.kubeclient import get_application

    if not live_only and os.path.isfile(target):
        try:
            with open(target, encoding="utf-8") as handle:
                body = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError) as error:
            raise DiffError(f"reading {target}: {error}") from None
        if not isinstance(body, dict) or body.get("kind") != "Application":
            raise DiffError(f"{target}: not an Application document")
        meta = body.setdefault("metadata", {})
        ns = namespace or meta.get("namespace") or conn.namespace
        meta["namespace"] = ns
        for warning in size_warnings(body):  # docs/operator.md#the-size-the-api-server-accepts
            click.echo(f"warning: {warning}", err=True)
        return body, ns
    ns = namespace or conn.namespace
    return get_application(conn, ns, target), ns


def live_application(conn: Any, namespace: str, name: str) -> dict[str, Any] | None:
    from oam_operator.cli.kubeclient import ApiFailure, get_application

    try:
        return get_application(conn, namespace, name)
    except ApiFailure as failure:
        if "not found in namespace" in failure.message:
            return None
        raise


def shard_of(body: Mapping[str, Any], live_app: Mapping[str, Any] | None, label: str) -> str:
    """The shard whose instance writes the Application's objects, hence their shard ``label``
    (docs/operator.md#fleet-scale-requests-flow-control-shards): the one FILE sets, else the live
    Application's; ``""`` for the unsharded instance."""
    for app in (body, live_app or {}):
        labels = (app.get("metadata") or {}).get("labels") or {}
        if label in labels:
            return str(labels[label] or "")
    return ""


def load_body(target: str, namespace: str | None, conn: Any, domain: str, revision: int | None = None,
              live_only: bool = False) -> tuple[dict[str, Any], str]:
    """The Application ``target`` names (a FILE, else a live one; of ``revision`` when given) and
    its namespace; raises ``DiffError`` or ``ApiFailure``. ``live_only``: ``target`` names a live
    Application, never a file (the UI's diff)."""
    body, ns = _load_target(target, namespace, conn, live_only)
    if revision is not None:  # what revision N applied, against the live cluster (cli/history.py)
        if not live_only and os.path.isfile(target):
            raise DiffError(f"--revision compares a live Application's revision: {target} is a file")
        from oam_operator.cli.history import revision_spec

        body = {**body, "spec": revision_spec(conn, ns, target, revision, domain)}
    return body, ns


def diff_body(body: Mapping[str, Any], ns: str, conn: Any, domain: str, show_bookkeeping: bool = False,
              on_cluster: Callable[[str], None] | None = None,
              operator_namespace: str | None = None,
              inventory_namespaces: Sequence[str] | None = None) -> tuple[list[WavePlan], list[str]]:
    """The waves' creates and changes and the prunes of the Application ``body`` of namespace
    ``ns`` (also a fleet Application's cluster Application, cli/fleetdiff.py); raises
    ``DiffError``. ``on_cluster`` is told the remote cluster compared with, ``operator_namespace``
    is where a profile's kubeconfig Secret is when it names no namespace (``None``: the
    environment's; docs/multicluster.md#diff-against-the-remote-cluster), ``inventory_namespaces``
    where a standard ClusterProfile may be (``None``: the environment's;
    docs/multicluster.md#the-standard-cluster-inventory)."""
    from oam_operator.cli.profiles import ProfileReader
    from oam_operator.cli.profiles import inventory_namespaces as inventory_of
    from oam_operator.cli.remotediff import RemoteRefused, remote_cluster
    from oam_operator.controller.reconcile.checks import Subject, first_refusal, served_by
    from oam_operator.controller.reconcile.composition import OperatorTransform
    from oam_operator.controller.reconcile.delivery import owner_cluster as remote_owner_cluster
    from oam_operator.controller.reconcile.fleetns import moved as moved_to
    from oam_operator.controller.reconcile.inventorycodec import read_inventory
    from oam_operator.controller.reconcile.plan import digests_of, owner_id, reconciler_options
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.reconcile.tenancy import IdentityRule
    from oam_operator.controller.service.definitions import DefinitionWatch
    from oam_operator.oam.definitions.catalog import DefinitionCatalog
    from oam_operator.reconciler.client import APPLY_PATCH, ClusterClient
    from oam_operator.reconciler.errors import ApiError, ReconcilerError
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    name = str((body.get("metadata") or {}).get("name") or "")
    live_app = live_application(conn, ns, name)
    client = ClusterClient(conn.api, rate_limiter=RateLimiter(0, 1), user_agent="oam-operator-diff")
    remote = None
    try:
        cluster_id = client.request("read", "GET", "/api/v1/namespaces/kube-system")["metadata"]["uid"]
        owner_cluster = cluster_id  # of the owner ids (docs/multicluster.md#owner-id-on-the-remote-cluster)
        settings = Settings(domain=domain)

        profiles = ProfileReader(client, inventory_of(inventory_namespaces)).get  # as the operator resolves

        asked = str((body.get("spec") or {}).get("profile") or settings.default_profile or "")
        try:
            remote = remote_cluster(client, asked, profiles(asked), operator_namespace) if asked else None
        except RemoteRefused as unreachable:
            raise DiffError(str(unreachable)) from None
        cluster = client if remote is None else remote.client  # where the objects are
        if remote is not None:
            cluster_id, owner_cluster = remote.cluster_id, remote_owner_cluster(remote.cluster_id, cluster_id)
            if on_cluster is not None:
                on_cluster(remote.label)
            if remote.warning:  # compared with all the same (cli/remotediff.py)
                click.echo(f"warning: {remote.warning}", err=True)
        # The operator's own checks and transform (controller/reconcile/checks.py, its ``preview`` column):
        # what it would refuse is an error here, with its words.
        transform = OperatorTransform.from_settings(settings)
        definitions = transform.pipeline.transformer.definitions
        if isinstance(definitions, DefinitionCatalog):  # the cluster's, as the operator loads them
            DefinitionWatch(definitions, client).prime()
        subject = Subject(body, settings, transform, profiles,
                          IdentityRule.from_settings(settings), cluster_id, served=served_by(cluster),
                          inventory=read_inventory((live_app or {}).get("status") or {}))
        refused = first_refusal(subject, lambda check: check.preview)
        if refused is not None:
            raise DiffError(refused.message)
        assert subject.encoded is not None
        encoded, spec, profile, resolved = subject.encoded, subject.spec, subject.profile, subject.resolved_profile
        digest = digests_of(domain, spec, int((body.get("metadata") or {}).get("generation") or 1), resolved,
                            profile, moved_to(body, domain)).current
        shard = shard_of(body, live_app, settings.shard_label)
        options = reconciler_options(settings, spec, ns, {}, shard=shard)  # a preview: no hooks
        try:
            planned = Reconciler(domain, cluster, options).plan(encoded.objects, ns, owner_id(owner_cluster, ns, name),
                                                                digest)
        except ReconcilerError as error:
            raise DiffError(str(error)) from None
        waves: dict[int, WavePlan] = {}
        wanted: set[tuple[str, str, str, str]] = set()
        for p in planned:
            ref = p.ref
            wanted.add((ref.group, ref.kind, ref.namespace, ref.name))
            bundle = encoded.bundle_of_wave(p.apply_order)
            wave = waves.setdefault(p.apply_order, WavePlan(bundle.name if bundle else str(p.apply_order)))
            label = f"{ref.kind} {ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind} {ref.name}"
            if p.resource is None:
                wave.creates.append(label)  # its API comes with an earlier object (a CRD)
                continue
            live = cluster.get(p.resource, ref.namespace, ref.name)
            try:
                dry = cluster.request(
                    "apply", "PATCH", p.resource.path(ref.namespace, ref.name), body=p.body,
                    content_type=APPLY_PATCH,
                    query=[("fieldManager", domain), ("force", "true"), ("dryRun", "All"),
                           ("fieldValidation", "Strict")],
                )
            except ApiError as error:
                if live is None and error.status == 404:
                    wave.creates.append(label)  # its namespace does not exist yet
                    continue
                raise
            if live is None:
                wave.creates.append(label)
                continue
            hidden = frozenset() if show_bookkeeping else bookkeeping(domain)
            text = unified(clean(live, hidden), clean(dry, hidden), label.replace(" ", "/"))
            if text:
                wave.changes.append((label, text))
        prunes = []
        for item in subject.inventory:
            if (item.group, item.kind, item.namespace, item.name) not in wanted:
                prunes.append(f"{item.kind} {item.namespace}/{item.name}" if item.namespace
                              else f"{item.kind} {item.name}")
        return [waves[order] for order in sorted(waves)], prunes
    except ApiError as error:
        raise DiffError(str(error)) from None
    finally:
        client.close()
        if remote is not None:
            remote.client.close()


def render(waves: list[WavePlan], prunes: list[str]) -> str:
    lines: list[str] = []
    for wave in waves:
        if not wave.creates and not wave.changes:
            continue
        lines.append(f"Wave {wave.name}:")
        lines.extend(f"  create {label}" for label in wave.creates)
        for label, text in wave.changes:
            lines.append(f"  change {label}")
            lines.extend("    " + line for line in text.rstrip("\n").split("\n"))
    if prunes:
        lines.append("Prune:")
        lines.extend(f"  prune {label}" for label in prunes)
    return "\n".join(lines) + "\n" if lines else "no changes\n"


def run_diff(target: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
             revision: int | None = None, show_bookkeeping: bool = False,
             operator_namespace: str | None = None, inventory_namespaces: str | None = None) -> int:
    from oam_operator.cli.kubeclient import ApiFailure, connect
    from oam_operator.cli.profiles import inventory_namespaces as inventory_of
    from oam_operator.operatorpolicies.topology import declared

    try:
        conn = connect(kubeconfig, context)
    except ApiFailure as failure:
        click.echo(f"Error: {failure.message}", err=True)
        return EXIT_ERROR
    clusters: list[str] = []
    try:
        body, ns = load_body(target, namespace, conn, domain, revision)
        topology = declared(body.get("spec") or {})
        if topology is not None:  # a fleet Application: each cluster's diff (cli/fleetdiff.py)
            from oam_operator.cli.fleetdiff import fleet_diff, fleet_exit_code, render_fleet

            found = fleet_diff(body, ns, conn, domain, topology, show_bookkeeping, operator_namespace,
                               inventory_of(inventory_namespaces))
            click.echo(render_fleet(found), nl=False)
            return fleet_exit_code(found)
        waves, prunes = diff_body(body, ns, conn, domain, show_bookkeeping, on_cluster=clusters.append,
                                  operator_namespace=operator_namespace,
                                  inventory_namespaces=inventory_of(inventory_namespaces))
    except (DiffError, ApiFailure) as error:
        click.echo(f"Error: {getattr(error, 'message', None) or error}", err=True)
        return EXIT_ERROR
    finally:
        conn.close()
    output = render(waves, prunes)
    if clusters:  # the profile delivers to another cluster: say which
        click.echo(f"Compared with {clusters[0]}")
    click.echo(output, nl=False)
    return EXIT_NONE if output == "no changes\n" else EXIT_CHANGES
