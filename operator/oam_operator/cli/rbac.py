"""``oam-operator rbac FILE|NAME``: the Role and RoleBinding an Application's identity needs
(docs/operator.md#not-permitted-and-the-role-it-needs).

The Application goes through the operator's own transform (``controller/reconcile/composition.py``), and
every type of object it generates gets the verbs the reconciler sends for it
(``controller/reconcile/permissions.py``). FILE wins when a file of that name exists, else the argument
names a live Application (its ClusterProfile read from the cluster, of either kind, resolved as
``diff`` and the operator resolve it: ``cli/profiles.py``). The
account is ``--service-account``, else ``spec.serviceAccountName``, else ``default`` (the
operator's ``--default-service-account``). Plurals and scopes are the built-in rule's, without
asking the API server, so a FILE needs no cluster.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from oam_operator.cli.errors import fail

__all__ = ["OperatorSettings", "operator_settings", "rbac_for", "run_rbac"]

DEFAULT_SERVICE_ACCOUNT = "default"


def _read_yaml(path: str, what: str) -> dict[str, Any]:
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as error:
        fail(f"reading {path}: {error}")
    if not isinstance(document, dict) or document.get("kind") != what:
        fail(f"{path}: not a{'n' if what[0] in 'AEIOU' else ''} {what} document")
    return document


@dataclass(frozen=True)
class OperatorSettings:
    """The operator's settings that change what ``rbac`` prints: the URL sources it reads (as
    ``run`` reads them, so a source the operator may reach is read here too) and whether
    cross-namespace objects are allowed (the operator then reads and creates target namespaces)."""

    url_sources: bool = True
    url_source_allowed_networks: tuple[str, ...] = ()
    helm_binary: str = "helm"
    allow_cross_namespace_objects: bool = False


def operator_settings(url_sources: bool, allowed_networks: tuple[str, ...], helm_binary: str,
                      cross_namespace: bool) -> OperatorSettings:
    """The command's options as settings; a network that is not one is refused naming the option."""
    from oam_operator.oam.remote.addresses import parse_networks

    try:
        networks = parse_networks(",".join(allowed_networks))
    except ValueError as error:
        fail(f"--url-source-allowed-networks: {error}")
    return OperatorSettings(url_sources, tuple(str(network) for network in networks), helm_binary, cross_namespace)


def rbac_for(body: Mapping[str, Any], namespace: str, service_account: str | None, domain: str,
             profile: Mapping[str, Any] | None, operator: OperatorSettings = OperatorSettings(),
             ) -> tuple[list[dict[str, Any]], list[str]]:
    """The Role and RoleBinding documents for the Application ``body`` in ``namespace``, and the
    notes on what they mean; raises ``OamError`` for an Application the transform refuses."""
    from oam_operator.controller.reconcile.composition import OperatorTransform
    from oam_operator.controller.reconcile.permissions import (
        created_namespaces,
        rbac_documents,
        rbac_notes,
        required_permissions,
    )
    from oam_operator.controller.reconcile.settings import Settings

    meta = dict(body.get("metadata") or {})
    meta["namespace"] = namespace
    app = {**body, "metadata": meta}
    spec = body.get("spec") or {}
    profile_name = str(spec.get("profile") or "")
    settings = Settings(domain=domain, url_sources=operator.url_sources, helm_binary=operator.helm_binary,
                        url_source_allowed_networks=operator.url_source_allowed_networks)
    encoded, _ = OperatorTransform.from_settings(settings).transform(
        app, cluster_id="", domain=domain, profile=profile, profile_name=profile_name)
    account = service_account or str(spec.get("serviceAccountName") or "") or DEFAULT_SERVICE_ACCOUNT
    permissions = required_permissions(encoded.objects, namespace,
                                       cross_namespace=operator.allow_cross_namespace_objects,
                                       update_policy=str(spec.get("updatePolicy") or "SsaMerge"), domain=domain)
    created = created_namespaces(encoded.objects)
    documents = rbac_documents(permissions, namespace, str(meta.get("name") or ""), account, created)
    return documents, rbac_notes(permissions, created)


def _live(target: str, namespace: str | None, kubeconfig: str | None, context: str | None,
          inventory_namespaces: str | None = None) -> tuple[dict[str, Any], str, dict[str, Any] | None]:
    """The live Application ``target``, its namespace and its ClusterProfile (``None``: none)."""
    from oam_operator.cli.kubeclient import ApiFailure, connect, get_application

    try:
        conn = connect(kubeconfig, context)
    except ApiFailure as failure:
        fail(failure.message)
    try:
        ns = namespace or conn.namespace
        body = get_application(conn, ns, target)
        name = str((body.get("spec") or {}).get("profile") or "")
        return body, ns, _profile(conn, name, inventory_namespaces) if name else None
    except ApiFailure as failure:
        fail(failure.message)
    finally:
        conn.close()


def _profile(conn: Any, name: str, inventory_namespaces: str | None) -> dict[str, Any] | None:
    """The ClusterProfile ``name``, of either kind; ``None`` when there is none (the operator then
    refuses the Application with ``ProfileNotFound``, and the objects are the transform's without
    it). ``inventory_namespaces`` ``None``: the operator's environment variable."""
    from oam_operator.cli.profiles import ProfileReader
    from oam_operator.cli.profiles import inventory_namespaces as inventory_of
    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.errors import ApiError
    from oam_operator.reconciler.ratelimit import RateLimiter

    client = ClusterClient(conn.api, rate_limiter=RateLimiter(0, 1), user_agent="oam-operator-rbac")
    try:
        return ProfileReader(client, inventory_of(inventory_namespaces)).get(name)
    except ApiError as error:
        fail(f"reading ClusterProfile {name}: {error.status} {error.reason}")
    finally:
        client.close()


def _comment(note: str, width: int = 98) -> str:
    """``note`` as ``# `` lines of at most ``width`` characters."""
    import textwrap

    return "".join(f"# {line}\n" for line in textwrap.wrap(note, width - 2, break_on_hyphens=False))


def run_rbac(target: str, namespace: str | None, service_account: str | None, profile_path: str | None,
             output_format: str, kubeconfig: str | None, context: str | None, domain: str,
             operator: OperatorSettings = OperatorSettings(), inventory_namespaces: str | None = None) -> None:
    import json

    from oam_operator.cli.build import size_warnings
    from oam_operator.common.apisize import application_bytes, too_large
    from oam_operator.oam.errors import OamError
    from oam_operator.oam.formatting.serialize import dump_document

    if os.path.isfile(target):
        body = _read_yaml(target, "Application")
        ns = namespace or str((body.get("metadata") or {}).get("namespace") or "")
        if not ns:
            fail(f"{target}: the Application names no namespace; give it with -n NAMESPACE")
        refused = too_large(application_bytes(body))  # docs/operator.md#the-size-the-api-server-accepts
        if refused is not None:
            fail(f"{target}: {refused}")
        for warning in size_warnings(body):
            click.echo(f"warning: {warning}", err=True)
        profile: dict[str, Any] | None = None
    else:
        body, ns, profile = _live(target, namespace, kubeconfig, context, inventory_namespaces)
    if profile_path is not None:
        profile = _read_yaml(profile_path, "ClusterProfile")
    try:
        documents, notes = rbac_for(body, ns, service_account, domain, profile, operator)
    except OamError as error:
        fail(f"transforming the Application: {error}")
    if output_format == "json":
        listing = {"apiVersion": "v1", "kind": "List", "items": documents, "metadata": {}}
        click.echo(json.dumps(listing, indent=2, sort_keys=True))
        for note in notes:  # JSON has no comments
            click.echo(f"note: {note}", err=True)
        return
    header = "".join(_comment(note) for note in notes)
    click.echo(header + "".join("---\n" + dump_document(document) for document in documents), nl=False)
