"""The command-line surface: the ``oam-operator`` click group and every command's options.

A command's body lives in a module of its own (``build``, ``schema``, ``status``, ``diff``,
``history``), imported
when the command runs; ``run``'s settings options are built on first use. Only ``crd`` and ``run``,
a few lines each, are written here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from oam_operator import __version__
from oam_operator.cli.errors import fail, guarded
from oam_operator.cli.helpformat import SentenceGroup, format_grouped_options


@click.group(cls=SentenceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oam-operator")
def main() -> None:
    """oam-operator: deploy OAM-style Applications onto Kubernetes in ordered waves."""


@main.command()
@click.argument("file")
@click.option("--profile", "profile_path", metavar="FILE",
              help="ClusterProfile document (capabilities; of a fleet Application, the cluster to build for).")
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
              help="Validate the operator's own policy types (app-dependency, change-window, health-checks, override, "
              "reconciliation, rollback, rollout, topology) instead of refusing them.")
@click.option("--definitions", "definitions_dir", metavar="DIR",
              help="ComponentDefinitions and TraitDefinitions (*.yaml in DIR) the Application may use by type.")
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
    definitions_dir: str | None,
) -> None:
    """Print the objects an Application generates (offline)."""
    from oam_operator.cli.build import run_build

    guarded(
        lambda: run_build(
            file, profile_path, namespace, domain, not no_component_label, tree, output_dir, values_path, set_values,
            operator_policies, output_format, definitions_dir,
        )
    )


def _check_output_format(value: str) -> str:
    """``-o`` is the output format, as in kubectl; kurel's ``-o DIR`` is refused with a hint to
    ``--output-dir`` rather than silently creating a directory named like a format."""
    if value in ("yaml", "json"):
        return value
    raise click.BadParameter(
        f"{value!r} is not an output format (yaml or json); to write files into a directory use --output-dir {value}"
    )


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
    from oam_operator.controller.reconcile.settings import Settings, env_var, flag_name, metavar

    params: list[click.Parameter] = []
    for name, info in Settings.model_fields.items():
        flag = flag_name(name)
        help_text = f"{Settings.describe(name)} [default: {_default_text(info.default)}; env {env_var(name)}]"
        takes = metavar(name)
        if takes is None:  # a boolean
            params.append(click.Option([f"{flag}/--no-{flag[2:]}", name], default=None, help=help_text))
        elif name == "namespaces":
            params.append(click.Option([flag, name], multiple=True, metavar=takes, help=help_text))
        else:
            params.append(click.Option([flag, name], default=None, metavar=takes, help=help_text))
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

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The settings under their concern's heading (``settings.GROUPS``), each help whole."""
        from oam_operator.controller.reconcile.settings import GROUPS

        format_grouped_options(ctx, formatter, self.get_params(ctx), GROUPS, first="General")


@main.command(cls=_SettingsCommand)
@click.option("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: in-cluster, else $KUBECONFIG).")
def run(kubeconfig: str | None, **flags: object) -> None:
    """Run the operator.

    Every setting also reads the environment variable shown with it; a flag wins over the
    environment (docs/operator.md#settings).
    """
    import os

    from oam_operator.controller.reconcile.settings import Settings, SettingsError
    from oam_operator.controller.service.main import run_operator

    try:
        settings = Settings.from_sources(flags, os.environ)
    except SettingsError as error:
        fail(str(error))
    combination = settings.combination_error(os.environ)
    if combination is not None:
        fail(str(combination))
    from oam_operator.controller.service.tracing import enabled, tracing_refusal

    if enabled(os.environ) and (refusal := tracing_refusal(os.environ)) is not None:
        fail(refusal)  # docs/operator.md#tracing: before anything connects
    if kubeconfig:
        os.environ["KUBECONFIG"] = kubeconfig  # kopf's login reads it
    run_operator(settings, kubeconfig)


@main.command()
@click.argument("family", metavar="[FAMILY]", required=False)
@click.argument("type_name", metavar="[TYPE]", required=False)
@click.option("-o", "--output", "output_format", type=click.Choice(["table", "json", "yaml"]), default="table",
              show_default=True, help="table: a type's properties, one per row; json|yaml: the JSON Schemas.")
@click.option("--depth", type=click.IntRange(0), default=2, show_default=True, metavar="INT",
              help="Levels of nested properties in the table (0: all).")
@click.option("--definitions", "definitions_dir", metavar="DIR",
              help="Publish the parameters of the ComponentDefinitions and TraitDefinitions in DIR (*.yaml) too.")
def schema(family: str | None, type_name: str | None, output_format: str, depth: int,
           definitions_dir: str | None) -> None:
    """Print the properties of the built-in types: schema TYPE, or schema [FAMILY [TYPE]].

    FAMILY is component, trait or policy. The table is what a type takes; -o json prints the
    JSON Schemas and contracts.
    """
    from oam_operator.cli.schema import run_schema

    guarded(lambda: run_schema(family, type_name, output_format, depth, definitions_dir))


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

    With --wait: exit 0 once handled and Ready, 3 on Error or timeout, 1 on failure; a suspended
    Application is refused at once (exit 2, nothing written).
    """
    from oam_operator.cli.status import run_reconcile

    guarded(lambda: sys.exit(run_reconcile(name, namespace, kubeconfig, context, domain, wait, timeout)))


@main.command()
@click.argument("name")
@_cluster_options
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: the last revision's timeline entry with its path.")
def explain(name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
            output: str) -> None:
    """Print the critical path of an Application's last revision: which objects gated each wave and how long.

    From status.timeline (docs/operator.md#explain). Exit 0, or 1 on a failure or no timeline yet.
    """
    from oam_operator.cli.explain import run_explain

    guarded(lambda: sys.exit(run_explain(name, namespace, output, kubeconfig, context)))


@main.group(cls=SentenceGroup)
def health() -> None:
    """Health rules by expression (docs/health.md): the shipped library, tried offline."""


@health.command("test")
@click.argument("kind")
@click.argument("fixture")
@click.option("--rules", "rules_path", metavar="FILE",
              help="Rules that win over the library's: a list, a definition or ClusterProfile (spec.health), or an "
                   "Application (its health-checks policies).")
@click.option("--expect", type=click.Choice(["Current", "InProgress", "Failed"]),
              help="Exit 1 unless every object's verdict is this one.")
def health_test(kind: str, fixture: str, rules_path: str | None, expect: str | None) -> None:
    """Judge the objects of FIXTURE with the rule for KIND (Kind, Kind.group or group/version/Kind).

    Prints each object's verdict and message as the operator would give it. Exit 0, 1 when --expect
    is not met, 2 on a usage error.
    """
    from oam_operator.cli.health import run_health_test

    guarded(lambda: sys.exit(run_health_test(kind, fixture, rules_path, expect)))


@health.command("list")
def health_list() -> None:
    """List the kinds of the shipped library."""
    from oam_operator.cli.health import run_health_list

    guarded(lambda: sys.exit(run_health_list()))


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


class _RevisionNumber(click.ParamType[int, Any]):
    """A revision number: a whole number from 1 (``status.revision`` counts from 1)."""

    name = "revision"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        text = str(value).strip()
        if text.isdigit() and int(text) >= 1:
            return int(text)
        self.fail(f"{value!r} is not a revision number (a whole number from 1)", param, ctx)


_REVISION = _RevisionNumber()
#: The operator's setting, where a profile name may be a standard ClusterProfile
#: (docs/multicluster.md#the-standard-cluster-inventory).
_INVENTORY_NAMESPACES = click.option(
    "--inventory-namespaces", envvar="OAM_OPERATOR_INVENTORY_NAMESPACES", metavar="NS,...",
    help="The operator's inventory namespaces: where standard (multicluster.x-k8s.io) ClusterProfiles are.")


@main.command()
@click.argument("target", metavar="FILE|NAME")
@_cluster_options
@click.option("--revision", type=_REVISION, metavar="N",
              help="Compare the live cluster with what revision N of the Application NAME applied.")
@click.option("--show-bookkeeping", is_flag=True,
              help="Also compare the operator's own annotations (<domain>/owner-id, <domain>/digest).")
@click.option("--operator-namespace", envvar="OAM_OPERATOR_OPERATOR_NAMESPACE", metavar="NS",
              help="The operator's namespace: where a ClusterProfile's kubeconfig Secret is when it names none.")
@_INVENTORY_NAMESPACES
def diff(target: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
         revision: int | None, show_bookkeeping: bool, operator_namespace: str | None,
         inventory_namespaces: str | None) -> None:
    """Show what applying an Application would change: per wave, creates, changes and prunes.

    Server-side dry-run of exactly what the operator sends. Exit 0 no changes, 1 changes, 2 error.
    """
    from oam_operator.cli.diff import EXIT_ERROR, run_diff

    try:
        code = run_diff(target, namespace, kubeconfig, context, domain, revision, show_bookkeeping,
                        operator_namespace, inventory_namespaces)
    except Exception as exc:
        click.echo(f"Error: internal error: {type(exc).__name__}: {exc}", err=True)
        code = EXIT_ERROR
    sys.exit(code)


@main.command()
@click.argument("name")
@_cluster_options
@click.option("--revision", type=_REVISION, metavar="N", help="Print revision N: its facts and its spec.")
@click.option("-o", "--output", type=click.Choice(["text", "yaml", "json"]), default="text", show_default=True,
              help="yaml|json: every revision as data; with --revision, that revision's spec.")
def history(name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
            revision: int | None, output: str) -> None:
    """List an Application's revisions: when, the outcome, the change cause (docs/operator.md#history-and-rollback)."""
    from oam_operator.cli.history import run_history

    guarded(lambda: sys.exit(run_history(name, namespace, revision, output, kubeconfig, context, domain)))


@main.command()
@click.argument("name")
@_cluster_options
@click.option("--to-revision", type=_REVISION, metavar="N",
              help="The revision to go back to (default: the one before the current revision).")
@click.option("--wait", is_flag=True, help="Wait until the rolled-back spec is Ready (exit 0), Error or timed out (3).")
@click.option("--timeout", default="5m", show_default=True, metavar="DURATION", callback=_check_timeout,
              help="Bound of --wait, e.g. 90s, 5m.")
def rollback(name: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
             to_revision: int | None, wait: bool, timeout: str) -> None:
    """Write a recorded revision's spec back as a new generation, as kubectl rollout undo does."""
    from oam_operator.cli.history import run_rollback

    guarded(lambda: sys.exit(run_rollback(name, namespace, to_revision, wait, timeout, kubeconfig, context, domain)))


@main.command()
@_cluster_options
@click.option("-A", "--all-namespaces", is_flag=True, help="Applications of every namespace you may list.")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True, help="Port to listen on.")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Address to listen on (another than 127.0.0.1 makes the UI reachable from elsewhere).")
@click.option("--open", "open_browser", is_flag=True, help="Open the UI in the default web browser.")
def ui(
    namespace: str | None, kubeconfig: str | None, context: str | None, domain: str, all_namespaces: bool,
    port: int, address: str, open_browser: bool,
) -> None:
    """Serve a web view of Applications, their waves and dependencies on this machine (docs/ui.md).

    It acts with your kubeconfig and nothing else; stop it with Ctrl-C.
    """
    from oam_operator.cli.ui import run_ui

    guarded(lambda: sys.exit(run_ui(port, address, open_browser, namespace, all_namespaces, kubeconfig, context,
                                    domain)))


@main.command()
@click.argument("target", metavar="FILE|NAME")
@_cluster_options
@click.option("--service-account", metavar="SA",
              help="The account to bind (default: spec.serviceAccountName, else default).")
@click.option("--profile", "profile_path", metavar="FILE", help="ClusterProfile document (default: the cluster's).")
@click.option("-o", "--output", "output_format", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True)
@click.option("--url-sources/--no-url-sources", default=True, envvar="OAM_OPERATOR_URL_SOURCES", show_default=True,
              help="Read URL sources, as the operator does (its --url-sources).")
@click.option("--url-source-allowed-networks", "allowed_networks", metavar="CIDRS", multiple=True,
              envvar="OAM_OPERATOR_URL_SOURCE_ALLOWED_NETWORKS",
              help="Internal networks URL sources may reach, as the operator's setting (comma-separated, repeatable).")
@click.option("--helm-binary", default="helm", show_default=True, envvar="OAM_OPERATOR_HELM_BINARY",
              help="The program that renders delivery: template charts.")
@click.option("--allow-cross-namespace-objects", "cross_namespace", is_flag=True,
              envvar="OAM_OPERATOR_ALLOW_CROSS_NAMESPACE_OBJECTS",
              help="The operator allows objects in other namespaces: it then reads and creates target namespaces.")
@_INVENTORY_NAMESPACES
def rbac(target: str, namespace: str | None, kubeconfig: str | None, context: str | None, domain: str,
         service_account: str | None, profile_path: str | None, output_format: str, url_sources: bool,
         allowed_networks: tuple[str, ...], helm_binary: str, cross_namespace: bool,
         inventory_namespaces: str | None) -> None:
    """Print the Roles and bindings an Application's ServiceAccount needs for what the operator does with it."""
    from oam_operator.cli.rbac import operator_settings, run_rbac

    guarded(lambda: run_rbac(target, namespace, service_account, profile_path, output_format, kubeconfig, context,
                             domain, operator_settings(url_sources, allowed_networks, helm_binary, cross_namespace),
                             inventory_namespaces))


SHELLS = ("bash", "zsh", "fish")


@main.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script of oam-operator.

    Source it, or install it where the shell loads completions (docs/operator.md#shell-completion).
    """
    from oam_operator.cli.plugin import completion_script

    click.echo(completion_script(shell), nl=False)
