"""Body of ``oam-operator build``: an Application document to its objects, offline.

Everything it needs from the transform is imported inside the functions, so the command loads
only what ``build`` uses (``tests/unit/cli/test_cli_startup.py``).
"""

from __future__ import annotations

from typing import Any

import click

from oam_operator.cli.errors import fail

__all__ = ["OPERATOR_POLICY_HINT", "run_build", "size_warnings"]

#: Printed under kurel's own refusal of an operator policy type (docs/transform.md#printing-the-tree).
#: The list is operatorpolicies.OPERATOR_POLICY_TYPES, written out so the command loads without the
#: transform (a unit test keeps the two equal).
OPERATOR_POLICY_HINT = ("hint: {type} is one of the operator's own policy types (app-dependency, change-window, "
                        "health-checks, override, reconciliation, rollback, rollout, topology); --operator-policies "
                        "validates them offline")


def _read_file(path: str, what: str) -> str:
    """A file's text; failures read like Go's ``os.ReadFile`` errors, prefixed as kurel does."""
    from oam_operator.oam.formatting.gofmt import go_quote

    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except IsADirectoryError:
        cause = f"read {path}: is a directory"
    except OSError as exc:
        reason = exc.strerror or str(exc)
        cause = f"open {path}: {reason[:1].lower()}{reason[1:]}"
    except UnicodeDecodeError:
        cause = f"read {path}: invalid UTF-8"
    fail(f"reading {what} file {go_quote(path)}: {cause}")


def _apply_package(package_path: str, values_path: str | None, set_values: tuple[str, ...], text: str) -> str:
    """Resolve the kurel package's parameters and substitute them in the application text
    (docs/transform.md#package-parameters)."""
    from oam_operator.oam.document.params import parse_package, parse_set, parse_values, resolve_parameters, substitute
    from oam_operator.oam.errors import OamError
    from oam_operator.oam.formatting.gofmt import go_quote

    try:
        package = parse_package(_read_file(package_path, "package"))
    except OamError as exc:
        fail(f"parsing package file {go_quote(package_path)}: {exc}")
    supplied = parse_values(_read_file(values_path, "values"), values_path) if values_path is not None else {}
    supplied.update(parse_set(set_values))
    try:
        return substitute(text, package, resolve_parameters(package, supplied))
    except OamError as exc:
        fail(f"resolving parameters: {exc}")


def _operator_policy_hint(message: str) -> str | None:
    """The hint for kurel's ``no handler for policy type "<operator policy>"`` refusal."""
    from oam_operator.oam.formatting.gofmt import go_quote
    from oam_operator.operatorpolicies import OPERATOR_POLICY_TYPES

    for policy_type in OPERATOR_POLICY_TYPES:
        if message.startswith(f"no handler for policy type {go_quote(policy_type)} "):
            return OPERATOR_POLICY_HINT.format(type=policy_type)
    return None


def size_warnings(document: Any) -> list[str]:
    """What the API server or client-side ``kubectl apply`` will refuse for the Application's
    size (docs/operator.md#the-size-the-api-server-accepts): the object limit first, else the
    annotation limit of client-side apply."""
    from oam_operator.common.apisize import annotation_warning, application_bytes, too_large

    if not isinstance(document, dict):
        return []
    size = application_bytes(document)
    warning = too_large(size) or annotation_warning(size)
    return [warning] if warning else []


def _with_dependencies(document: dict[str, Any], result: Any, namespace: str) -> dict[str, Any]:
    """The tree with ``waitsFor``: the Applications its ``app-dependency`` policies make the
    operator wait for (Ready) before the first bundle is applied, as ``namespace/name``."""
    from oam_operator.operatorpolicies import app_dependency

    waits = []
    for entry in app_dependency.recorded(result.policy_result):
        ref = entry.resolve(namespace)
        shown = {"application": str(ref) if ref.namespace else ref.name, "policy": entry.policy}
        if shown not in waits:
            waits.append(shown)
    return {**document, "waitsFor": waits} if waits else document


def _profile_of(text: str) -> Any:
    """The ClusterProfile document, its delivery fields (``spec.kubeConfig``,
    ``spec.allowedNamespaces``: the operator's, never the transform's) left out as the operator
    leaves them out, so a resource as ``kubectl get clusterprofile -o yaml`` prints it builds. A
    standard ClusterProfile (``multicluster.x-k8s.io``) is what the operator's transform sees of
    it: an empty profile of its name (docs/multicluster.md#the-standard-cluster-inventory)."""
    from oam_operator.controller.reconcile.delivery import DELIVERY_FIELDS
    from oam_operator.controller.reconcile.inventory import is_standard, transform_view
    from oam_operator.oam import parse_cluster_profile
    from oam_operator.oam.document.document import cluster_profile_from_object
    from oam_operator.oam.document.loader import load_one

    value, _ = load_one(text, "ClusterProfile")
    if isinstance(value, dict) and is_standard(value):
        return cluster_profile_from_object(transform_view(value))
    spec = value.get("spec") if isinstance(value, dict) else None
    if not isinstance(spec, dict) or not any(key in spec for key in DELIVERY_FIELDS):
        return parse_cluster_profile(text)  # with the document's line numbers in its errors
    value["spec"] = {key: field for key, field in spec.items() if key not in DELIVERY_FIELDS}
    return cluster_profile_from_object(value)


def _for_cluster(document: dict[str, Any], lines: Any, profile_document: Any, domain: str,
                 transformer: Any) -> Any:
    """The decoded cluster Application of the profile when ``document`` is a fleet Application
    (docs/multicluster.md#one-cluster-offline), else ``None``; ``fail`` when the profile is not
    one of its clusters."""
    from oam_operator.cli.fleetbuild import NotSelected, cluster_document, profile_identity
    from oam_operator.oam.document.document import decode_application, validate_application
    from oam_operator.oam.errors import OamError

    name, labels = profile_identity(profile_document if isinstance(profile_document, dict) else {})
    try:
        made = cluster_document(document, name, labels, domain)
        if made is None:
            return None
        app = decode_application(made, lines)
        validate_application(app, transformer.component_types(), transformer.trait_types())
    except NotSelected as refused:
        fail(str(refused))
    except OamError as exc:
        fail(f"transforming application: {exc}")
    return app


def run_build(
    file: str,
    profile_path: str | None,
    namespace: str | None,
    domain: str | None,
    component_label: bool,
    tree: bool,
    output_dir: str | None,
    values_path: str | None = None,
    set_values: tuple[str, ...] = (),
    operator_policies: bool = False,
    output_format: str = "yaml",
    definitions_dir: str | None = None,
) -> None:
    """``oam-operator build`` (docs/transform.md#order-of-validation, docs/transform.md#errors-printed-by-build,
    docs/transform.md#printing-the-tree, docs/transform.md#output-stream-and-object-content).

    By default the operator's own policy types are refused exactly as kurel refuses them (no
    handler); ``operator_policies`` registers the operator's handlers, which validate them
    offline. They generate no objects, and the checks that need the cluster (cross-namespace
    references, conflicts with ``spec.interval``/``spec.timeout``) are the operator's.
    ``-o json`` prints the same objects as a ``v1`` ``List`` (the tree as one JSON document),
    keys sorted like the YAML.
    """
    import json
    import os

    from oam_operator.oam import (
        GenerationError,
        OamError,
        dump_objects,
        tree_document,
    )
    from oam_operator.oam.document.document import decode_application, validate_application
    from oam_operator.oam.document.loader import load_one
    from oam_operator.oam.document.params import missing_package_error
    from oam_operator.oam.engine.duplicates import duplicate_trait_object
    from oam_operator.oam.engine.release_order import release_order
    from oam_operator.oam.formatting.gofmt import go_quote
    from oam_operator.oam.formatting.serialize import dump_document
    from oam_operator.oam.pipeline import ProfileNotEvaluated, build_pipeline

    app_path = os.path.join(file, "app.yaml") if os.path.isdir(file) else file
    app_dir = os.path.dirname(app_path) or "."
    package = os.path.join(app_dir, "kurel.yaml")
    has_package = os.path.exists(package)
    if (values_path is not None or set_values) and not has_package:
        raise missing_package_error(app_dir)
    text = _read_file(app_path, "application")
    if has_package:
        text = _apply_package(package, values_path, set_values, text)
    pipeline = build_pipeline()
    transformer = pipeline.transformer
    if operator_policies:
        from oam_operator.operatorpolicies import register_operator_policies

        register_operator_policies(transformer)
    if definitions_dir is not None:
        from oam_operator.cli.definitions import load_definitions

        load_definitions(definitions_dir, transformer)
    try:
        document, lines = load_one(text, "Application")
        app = decode_application(document, lines)
        validate_application(app, transformer.component_types(), transformer.trait_types(),
                             open_types=transformer.definitions is not None)
    except OamError as exc:
        fail(f"parsing application file {go_quote(app_path)}: {exc}")
    for warning in size_warnings(document):
        click.echo(f"warning: {warning}", err=True)
    profile = None
    if profile_path is not None:
        profile_text = _read_file(profile_path, "profile")
        try:
            profile = _profile_of(profile_text)
        except OamError as exc:
            fail(f"parsing profile file {go_quote(profile_path)}: {exc}")
        if isinstance(document, dict):  # a fleet Application: what this cluster's Application applies
            app = _for_cluster(document, lines, load_one(profile_text, "ClusterProfile")[0], app.default_domain,
                               transformer) or app
    try:
        result = pipeline.transform(app, profile=profile, namespace=namespace, domain=domain,
                                    component_label=component_label)
    except ProfileNotEvaluated as exc:
        fail(f"evaluating profile {go_quote(str(profile_path))}: {exc.cause}")
    except GenerationError as exc:
        fail(f"generating manifests: {exc}")
    except OamError as exc:
        hint = _operator_policy_hint(exc.message) if not operator_policies else None
        fail(f"transforming application: {exc}" + (f"\n{hint}" if hint else ""))
    duplicate = duplicate_trait_object(result.cluster)  # kurel prints both; the operator refuses it
    if duplicate is not None:
        click.echo(f"warning: {duplicate} (the operator refuses this Application)", err=True)
    as_json = output_format == "json"
    if tree:
        document = tree_document(result.cluster)
        if operator_policies:
            document = _with_dependencies(document, result, namespace or app.metadata.namespace or "")
        output = json.dumps(document, indent=2, sort_keys=True) + "\n" if as_json else dump_document(document)
    else:
        objects = release_order(result, app.components, domain or app.default_domain)
        if not objects:
            click.echo("warning: no resources generated", err=True)
            return
        if as_json:
            listing = {"apiVersion": "v1", "kind": "List", "items": list(objects), "metadata": {}}
            output = json.dumps(listing, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        else:
            output = dump_objects(objects)
    if output_dir is None:
        click.echo(output, nl=False)
        return
    target = os.path.join(output_dir, f"{app.metadata.name}.{output_format}")
    try:
        os.makedirs(output_dir, exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(output)
    except OSError as exc:
        fail(f"writing {go_quote(target)}: {exc.strerror or exc}")

