"""``kubectl oam``: the command line as a kubectl plugin, and shell completion (docs/operator.md#kubectl-plugin).

kubectl runs ``kubectl-oam`` from ``PATH`` with every word after ``oam`` (kubectl refuses its own
flags before a plugin's name), so the plugin is the same commands under the name ``kubectl oam``:
``-n``/``--namespace``, ``--context`` and ``--kubeconfig`` are each command's own options, as in
kubectl, and may also come before the command (``kubectl oam -n shop status web``), as users of
krew plugins type them. The operator's own commands (``run``, ``crd``) stay with ``oam-operator``.

kubectl completes a plugin's words by running ``kubectl_complete-oam`` with the words typed after
``oam``, the last one the word being completed, and reads Cobra's answer: one candidate per line
(a tab, then its help), then ``:<directive>`` (4: no file names). ``oam-operator completion SHELL``
prints the script that completes ``oam-operator`` itself in bash, zsh or fish.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click
from click.shell_completion import ShellComplete, get_completion_class

from oam_operator import __version__
from oam_operator.cli.commands import SHELLS
from oam_operator.cli.commands import main as oam_operator
from oam_operator.cli.helpformat import SentenceGroup

__all__ = ["SHELLS", "complete", "completion_script", "completions", "kubectl_oam"]

PLUGIN_COMMANDS = ("build", "diff", "explain", "history", "rbac", "reconcile", "resume", "rollback", "schema", "status",
                   "suspend", "ui")
NO_FILE_COMPLETION = 4  # Cobra's ShellCompDirectiveNoFileComp
_CLUSTER_FLAGS = ("namespace", "context", "kubeconfig")


@click.group(cls=SentenceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubectl oam")
@click.option("-n", "--namespace", metavar="NS", help="Namespace of every command that takes one.")
@click.option("--context", metavar="CTX", help="Kubeconfig context (default: the current one).")
@click.option("--kubeconfig", metavar="FILE", help="Kubeconfig (default: $KUBECONFIG, ~/.kube/config).")
@click.pass_context
def kubectl_oam(ctx: click.Context, namespace: str | None, context: str | None, kubeconfig: str | None) -> None:
    """kubectl oam: OAM-style Applications, their waves and their objects, from kubectl."""
    given = {"namespace": namespace, "context": context, "kubeconfig": kubeconfig}
    before = {key: value for key, value in given.items() if value is not None}
    if before:  # flags given before the command are its defaults; its own flags still win
        ctx.default_map = {name: dict(before) for name in PLUGIN_COMMANDS}


for _name in PLUGIN_COMMANDS:
    kubectl_oam.add_command(oam_operator.commands[_name])


def completion_script(shell: str) -> str:
    """The completion script of ``oam-operator`` for ``shell`` (bash, zsh or fish)."""
    completer = get_completion_class(shell)
    if completer is None:  # click knows each of SHELLS
        from oam_operator.oam.formatting.choices import unknown_value

        raise click.BadParameter(unknown_value("shell", shell, SHELLS))
    script: str = completer(oam_operator, {}, "oam-operator", "_OAM_OPERATOR_COMPLETE").source()
    return script if script.endswith("\n") else script + "\n"


def completions(words: Sequence[str]) -> list[tuple[str, str]]:
    """(candidate, help) for the last of ``words`` (the words typed after ``kubectl oam``)."""
    *args, incomplete = list(words) or [""]
    found = ShellComplete(kubectl_oam, {}, "kubectl oam", "").get_completions(args, incomplete)
    return [(item.value, item.help or "") for item in found]


def complete() -> None:
    """``kubectl_complete-oam``: kubectl's plugin completion (module docstring)."""
    for value, help_text in completions(sys.argv[1:]):
        click.echo(f"{value}\t{help_text}" if help_text else value)
    click.echo(f":{NO_FILE_COMPLETION}")


def main() -> None:
    """``kubectl-oam``."""
    kubectl_oam(prog_name="kubectl oam")
