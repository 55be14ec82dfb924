"""The ``oam-operator`` command line (docs/operator.md#the-command-line).

Commands whose issue has not landed yet exit 1 with a one-line ``not implemented yet``:
nothing here pretends to work.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

import click

from oam_operator import __version__


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``Error: <message>`` on stderr and exit; no traceback ever reaches a user."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def guarded(action: Callable[[], None]) -> None:
    """Run a command body; any failure becomes one ``Error:`` line and exit 1, never a traceback."""
    from oam_operator.oam.errors import OamError

    try:
        action()
    except OamError as exc:
        fail(exc.message)
    except (click.exceptions.Exit, click.exceptions.Abort, SystemExit):
        raise
    except Exception as exc:
        fail(f"internal error: {type(exc).__name__}: {exc}")


def not_implemented(command: str) -> NoReturn:
    fail(f"oam-operator {command}: not implemented yet")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oam-operator")
def main() -> None:
    """oam-operator: deploy OAM-style Applications onto Kubernetes in ordered waves."""


@main.command()
@click.argument("file")
@click.option("--profile", "profile_path", metavar="FILE", help="ClusterProfile document (capabilities).")
@click.option("-n", "--namespace", metavar="NS", help="Namespace of the generated objects.")
@click.option("--domain", metavar="D", help="Domain of the tier annotation and the component label.")
@click.option("--no-component-label", is_flag=True, help="Do not stamp <domain>/component labels.")
@click.option("--tree", is_flag=True, help="Print the bundle tree instead of the objects.")
@click.option("-o", "--output", "output_format", default="yaml", show_default=True, metavar="yaml|json",
              callback=lambda ctx, param, value: _check_output_format(value),
              help="Output format: yaml (a --- stream, like kurel) or json (a List).")
@click.option("--output-dir", metavar="DIR", help="Write <DIR>/<application>.<format> instead of stdout.")
@click.option("--values", "values_path", metavar="FILE", help="Package parameter values (YAML mapping).")
@click.option("--set", "set_values", metavar="K=V", multiple=True, help="Package parameter value (repeatable).")
@click.option("--operator-policies", is_flag=True,
              help="Validate the operator's own policy types (app-dependency, reconciliation, health-checks) "
              "instead of refusing them.")
def build(
    file: str,
    profile_path: str | None,
    namespace: str | None,
    domain: str | None,
    no_component_label: bool,
    tree: bool,
    output_format: str,
    output_dir: str | None,
    values_path: str | None,
    set_values: tuple[str, ...],
    operator_policies: bool,
) -> None:
    """Print the objects an Application generates (offline)."""
    guarded(
        lambda: _run_build(
            file, profile_path, namespace, domain, not no_component_label, tree, output_dir, values_path, set_values,
            operator_policies, output_format,
        )
    )


def _check_output_format(value: str) -> str:
    """``-o`` is the output format, as in kubectl; the old ``-o DIR`` of kurel is refused with a hint
    rather than silently creating a directory named like a format (issue 14)."""
    if value in ("yaml", "json"):
        return value
    raise click.BadParameter(
        f"{value!r} is not an output format (yaml or json); to write files into a directory use --output-dir {value}"
    )


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


def _run_build(
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
        parse_application,
        parse_cluster_profile,
        tree_document,
    )
    from oam_operator.oam.document.params import missing_package_error
    from oam_operator.oam.engine.release_order import release_order
    from oam_operator.oam.formatting.gofmt import go_quote
    from oam_operator.oam.formatting.serialize import dump_document
    from oam_operator.oam.pipeline import build_pipeline

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
        from oam_operator.apppolicies import register_operator_policies

        register_operator_policies(transformer)
    try:
        app = parse_application(
            text, component_types=transformer.component_types(), trait_types=transformer.trait_types()
        )
    except OamError as exc:
        fail(f"parsing application file {go_quote(app_path)}: {exc}")
    capabilities = {}
    if profile_path is not None:
        profile_text = _read_file(profile_path, "profile")
        try:
            profile = parse_cluster_profile(profile_text)
        except OamError as exc:
            fail(f"parsing profile file {go_quote(profile_path)}: {exc}")
        try:
            capabilities = transformer.evaluate_profile(profile).capabilities
        except OamError as exc:
            fail(f"evaluating profile {go_quote(profile_path)}: {exc}")
    ctx = pipeline.context(
        namespace=namespace, domain=domain, capabilities=capabilities, component_label=component_label
    )
    try:
        transformer.validate_authored_properties(app)
        result = transformer.transform(app, ctx)
    except GenerationError as exc:
        fail(f"generating manifests: {exc}")
    except OamError as exc:
        fail(f"transforming application: {exc}")
    as_json = output_format == "json"
    if tree:
        document = tree_document(result.cluster)
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


def _default_text(value: object) -> str:
    """A setting's default as ``run --help`` shows it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or value == () or value == "":
        return '""' if value == "" else "none"
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(getattr(value, "value", value))


def settings_params() -> list[click.Parameter]:
    """One option per setting (docs/operator.md#settings): its meaning, default and environment variable.

    Values reach ``Settings.from_sources`` unparsed, so a flag and its variable are validated alike.
    """
    from oam_operator.controller.settings import Settings, env_var, flag_name

    params: list[click.Parameter] = []
    for name, info in Settings.model_fields.items():
        flag = flag_name(name)
        help_text = f"{Settings.describe(name)} [default: {_default_text(info.default)}; env {env_var(name)}]"
        if info.annotation is bool or str(info.annotation).startswith("typing.Annotated[bool"):
            params.append(click.Option([f"{flag}/--no-{flag[2:]}", name], default=None, help=help_text))
        elif name == "namespaces":
            params.append(click.Option([flag, name], multiple=True, metavar="NS", help=help_text))
        else:
            params.append(click.Option([flag, name], default=None, metavar="VALUE", help=help_text))
    return params


class _SettingsCommand(click.Command):
    """``run``: its settings options are built on first use (parsing or ``run --help``).

    Building them imports pydantic and the models (about a second on a loaded machine); other
    commands and ``oam-operator --help`` never pay for it.
    """

    _settings_added = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self._settings_added:
            self.params.extend(settings_params())
            self._settings_added = True
        return super().get_params(ctx)


@main.command(cls=_SettingsCommand)
@click.option("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: in-cluster, else $KUBECONFIG).")
def run(kubeconfig: str | None, **flags: object) -> None:
    """Run the operator."""
    import os

    from oam_operator.controller.main import run_operator
    from oam_operator.controller.settings import Settings, SettingsError

    try:
        settings = Settings.from_sources(flags, os.environ)
    except SettingsError as error:
        fail(str(error))
    combination = settings.combination_error()
    if combination is not None:
        fail(str(combination))
    if kubeconfig:
        os.environ["KUBECONFIG"] = kubeconfig  # kopf's login reads it
    run_operator(settings, kubeconfig)


@main.command()
@click.argument("family", required=False)
@click.argument("type_name", metavar="[TYPE]", required=False)
@click.option("-o", "--output", "output_format", type=click.Choice(["json", "yaml"]), default="json", show_default=True)
def schema(family: str | None, type_name: str | None, output_format: str) -> None:
    """Print the property schemas and contracts of the built-in types (FAMILY: component|trait|policy)."""
    guarded(lambda: _run_schema(family, type_name, output_format))


_FAMILIES = {
    "component": "components",
    "components": "components",
    "trait": "traits",
    "traits": "traits",
    "policy": "policies",
    "policies": "policies",
}


def _run_schema(family: str | None, type_name: str | None, output_format: str) -> None:
    """``oam-operator schema``: JSON Schema and contract of every type, of a family, or of one type."""
    import dataclasses
    import json
    from typing import Any

    from oam_operator.apppolicies import register_operator_policies
    from oam_operator.oam import new_builtin_transformer
    from oam_operator.oam.document.schema import object_json_schema
    from oam_operator.oam.formatting.gofmt import go_quote
    from oam_operator.oam.formatting.serialize import dump_document

    # The operator's own policy types are part of what it validates, so their schemas are published too.
    transformer = register_operator_policies(new_builtin_transformer())
    schemas = transformer.handler_schemas()
    contracts = transformer.handler_contracts()

    def describe(position: str, name: str) -> dict[str, Any]:
        contract = dataclasses.asdict(getattr(contracts, position)[name])
        return {
            "contract": {
                "family": contract["family"],
                "version": contract["version"],
                "requiredCapabilityKeys": contract["required_capability_keys"],
                "deprecated": contract["deprecated"],
                "deprecationMessage": contract["deprecation_message"],
            },
            "schema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": f"{position[:-1] if position != 'policies' else 'policy'} {name} properties",
                "type": "object",
                **object_json_schema(getattr(schemas, position)[name], False),
            },
        }

    def family_doc(position: str) -> dict[str, Any]:
        return {name: describe(position, name) for name in sorted(getattr(schemas, position))}

    document: dict[str, Any]
    if family is None:
        document = {position: family_doc(position) for position in ("components", "traits", "policies")}
    else:
        position = _FAMILIES.get(family)
        if position is None:
            fail(f"unknown family {go_quote(family)}; expected component, trait or policy")
        if type_name is None:
            document = family_doc(position)
        else:
            known = sorted(getattr(schemas, position))
            if type_name not in known:
                singular = {"components": "component", "traits": "trait", "policies": "policy"}[position]
                fail(f"unknown {singular} type {go_quote(type_name)}; known: {', '.join(known) or '(none)'}")
            document = {"type": type_name, **describe(position, type_name)}
    if output_format == "yaml":
        click.echo(dump_document(document), nl=False)
    else:
        click.echo(json.dumps(document, indent=2, sort_keys=True))


@main.command()
@click.option(
    "--output-dir",
    metavar="DIR",
    type=click.Path(file_okay=False, dir_okay=True),
    default=None,
    help="Write one file per CRD into DIR (created if missing) instead of printing them.",
)
def crd(output_dir: str | None) -> None:
    """Print the CRD manifests (identical to crds/), or write one file per CRD."""
    from pathlib import Path

    from oam_operator.api.crd import render_all, write_crds

    if output_dir is None:
        click.echo(render_all(), nl=False)
        return
    try:
        written = write_crds(Path(output_dir))
    except OSError as error:
        fail(f"cannot write the CRDs to {output_dir}: {error.strerror or error}")
    for path in written:
        click.echo(f"wrote {path}", err=True)


def _cluster_options(command: Callable[..., None]) -> Callable[..., None]:
    """Options shared by ``status`` and ``reconcile`` (kubeconfig, context, namespace, domain)."""
    for option in reversed(
        [
            click.option("-n", "--namespace", metavar="NS", help="Namespace (default: the context's, else default)."),
            click.option("--kubeconfig", metavar="FILE", help="Kubeconfig (default: $KUBECONFIG, ~/.kube/config)."),
            click.option("--context", metavar="CTX", help="Kubeconfig context (default: the current one)."),
            click.option("--domain", metavar="D", default="oam-operator.dev", show_default=True,
                          envvar="OAM_OPERATOR_DOMAIN", help="The operator's domain (annotation prefix)."),
        ]
    ):
        command = option(command)
    return command


def _check_timeout(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from oam_operator.cli.status import check_timeout

    return check_timeout(ctx, param, value)


@main.command()
@click.argument("name")
@_cluster_options
@click.option("--tree", is_flag=True, help="List every bundle's objects with phase and status.")
@click.option("-o", "--output", type=click.Choice(["text", "json", "inventory"]), default="text", show_default=True,
              help="inventory: the inventory as JSON in component-operator-runtime's shape.")
@click.option("--wait", is_flag=True, help="Poll until Ready (exit 0), Error or the timeout (exit 3).")
@click.option("--timeout", default="5m", show_default=True, metavar="DURATION", callback=_check_timeout,
              help="Bound of --wait, e.g. 90s, 5m.")
def status(
    name: str,
    namespace: str | None,
    kubeconfig: str | None,
    context: str | None,
    domain: str,
    tree: bool,
    output: str,
    wait: bool,
    timeout: str,
) -> None:
    """Print an Application's state and bundle tree (exit 0 Ready, 3 not Ready, 1 failure)."""
    from oam_operator.cli.status import run_status

    guarded(lambda: sys.exit(run_status(name, namespace, tree, output, wait, timeout, kubeconfig, context, domain)))


@main.command()
@click.argument("name")
@_cluster_options
@click.option("--wait", is_flag=True, help="Wait until the operator handled the request; print the outcome.")
@click.option("--timeout", default="5m", show_default=True, metavar="DURATION", callback=_check_timeout,
              help="Bound of --wait, e.g. 90s, 5m.")
def reconcile(
    name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str, wait: bool,
    timeout: str,
) -> None:
    """Request an immediate reconcile of an Application (sets <domain>/requested-at).

    With --wait: exit 0 once handled and Ready, 3 on Error or timeout, 1 on failure.
    """
    from oam_operator.cli.status import run_reconcile

    guarded(lambda: sys.exit(run_reconcile(name, namespace, kubeconfig, context, domain, wait, timeout)))


@main.command()
@click.argument("name")
@_cluster_options
def suspend(name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str) -> None:
    """Suspend an Application's reconciliation (sets spec.suspend: true)."""
    from oam_operator.cli.status import run_suspend

    guarded(lambda: sys.exit(run_suspend(name, namespace, kubeconfig, context, True)))


@main.command()
@click.argument("name")
@_cluster_options
def resume(name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str) -> None:
    """Resume a suspended Application (sets spec.suspend: false)."""
    from oam_operator.cli.status import run_suspend

    guarded(lambda: sys.exit(run_suspend(name, namespace, kubeconfig, context, False)))


@main.command()
@click.argument("target", metavar="FILE|NAME")
@_cluster_options
def diff(target: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str) -> None:
    """Show what applying an Application would change: per wave, creates, changes and prunes.

    Server-side dry-run of exactly what the operator sends. Exit 0 no changes, 1 changes, 2 error.
    """
    from oam_operator.cli.diff import EXIT_ERROR, run_diff

    try:
        code = run_diff(target, namespace, kubeconfig, context, domain)
    except Exception as exc:
        click.echo(f"Error: internal error: {type(exc).__name__}: {exc}", err=True)
        code = EXIT_ERROR
    sys.exit(code)
