"""``make demo`` and ``make demo-multi`` in either order, and the next steps they print (issue 44).

The two demos used to share the namespace ``shop``: the second met ``ClusterSwitched`` on the
first one's Application. Now each has its own namespace and both use one operator; the printed
steps run as printed after the printed ``eval`` (kubectl, ``oam-operator`` and the ``kubectl oam``
plugin on ``PATH``, the operator's namespace for ``diff`` of a spoke's Application).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click
import pytest

from oam_operator.cli import main
from oam_operator.cli.plugin import kubectl_oam
from tools import demo, demo_spoke, demo_steps


def test_both_demos_run_the_same_operator_in_namespaces_of_their_own() -> None:
    args = demo.operator_args("/k", 1, 2)
    assert args[1:] == ["run", "--kubeconfig", "/k", "--metrics-port", "1", "--health-port", "2", "--log-format",
                        "text", "--no-leader-election", "--use-operator-identity", "--operator-namespace",
                        "oam-system"]
    assert demo_spoke.NAMESPACE == "shop-spoke"
    assert (demo.demo_namespace(False), demo.demo_namespace(True), demo.demo_namespace(True, "x")) == (
        "shop", "shop-spoke", "x")
    shop = Path(demo.ROOT / "examples" / "shop.yaml")
    hub_docs, spoke_docs = demo.example_documents(shop, False), demo.example_documents(shop, True)
    assert [d["spec"].get("profile") for d in hub_docs if d["kind"] == "Application"] == [None]
    assert [d["spec"].get("profile") for d in spoke_docs if d["kind"] == "Application"] == ["demo-spoke"]


def test_an_application_delivered_elsewhere_is_deleted_first_and_said_so() -> None:
    live = {"metadata": {"namespace": "shop", "name": "shop"}, "spec": {"profile": "demo-spoke"}}
    assert demo.delivered_elsewhere(None, {"spec": {}}) is None
    assert demo.delivered_elsewhere(live, {"spec": {"profile": "demo-spoke"}}) is None
    assert demo.delivered_elsewhere(live, {"spec": {}}) == (
        "Application shop/shop delivers with ClusterProfile demo-spoke; this demo delivers it with the "
        "operator's own cluster: deleting it first (its objects go with it)")
    hub = {"metadata": {"namespace": "shop", "name": "shop"}, "spec": {"components": []}}
    assert demo.delivered_elsewhere(hub, {"spec": {"profile": "demo-spoke"}}) == (
        "Application shop/shop delivers with the operator's own cluster; this demo delivers it with "
        "ClusterProfile demo-spoke: deleting it first (its objects go with it)")


def test_the_env_puts_the_plugin_on_path_and_names_the_operators_namespace() -> None:
    venv_bin = Path(sys.executable).parent
    lines = demo_steps.env_lines("/run/demo/kubeconfig", Path("/cache/bin"), venv_bin)
    assert lines == [
        "export KUBECONFIG=/run/demo/kubeconfig",
        f"export PATH={shlex.quote(f'{venv_bin}:/cache/bin')}:$PATH",
        "export OAM_OPERATOR_OPERATOR_NAMESPACE=oam-system",
    ]
    assert (venv_bin / "kubectl-oam").is_file() and (venv_bin / "oam-operator").is_file()


def _parses(words: list[str]) -> None:
    """Parse a printed command as click would before running it (options and arguments checked)."""
    group: click.Group = kubectl_oam if words[:2] == ["kubectl", "oam"] else main
    name, *rest = words[2:] if group is kubectl_oam else words[1:]
    parent = click.Context(group, info_name=" ".join(words[:2]))
    command = group.get_command(parent, name)
    assert command is not None, words
    command.make_context(name, rest, parent=parent)


@pytest.mark.parametrize("multi", [False, True])
def test_the_printed_steps_include_the_plugin_reconcile_history_and_parse(multi: bool) -> None:
    namespace = demo_spoke.NAMESPACE if multi else "shop"
    steps = demo_steps.next_steps(namespace, ["shop"], "/spoke/kubeconfig" if multi else None)
    commands = [line.split("  # ")[0].strip() for line in steps]
    assert commands[0] == 'eval "$(.venv/bin/python -m tools.demo env)"'
    assert f"kubectl oam status shop -n {namespace} --tree" in commands
    assert f"kubectl oam reconcile shop -n {namespace} --wait" in commands
    assert f"kubectl oam history shop -n {namespace}" in commands
    assert f"oam-operator diff shop -n {namespace}" in commands
    assert ("kubectl --kubeconfig /spoke/kubeconfig get all -n shop-spoke" in commands) is multi
    for command in commands:
        words = shlex.split(command)
        if words[:2] == ["kubectl", "oam"] or words[0] == "oam-operator":
            _parses(words)
    short = [line for line in steps if len(line.split("  # ")[0].strip()) <= demo_steps.ALIGNED]
    assert len({line.index("  # ") for line in short}) == 1  # the comments line up
    assert all(len(line) < 100 for line in short)


def test_the_readme_shows_the_steps_make_demo_prints() -> None:
    readme = (demo.ROOT / "README.md").read_text(encoding="utf-8")
    for line in demo_steps.next_steps("shop", ["shop"], None):
        command = line.split("  # ")[0].strip()
        assert f"\n{command} " in readme, command
