"""``kubectl oam`` run by the real kubectl (docs/operator.md#kubectl-plugin): kubectl finds the
plugin on ``PATH``, passes it kubectl's own flags, and completes its words through
``kubectl_complete-oam``. The Applications and their status are written as in
test_status_cli.py (no operator runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.cli.test_status_cli import Apps, apps, crds, custom, processing_status  # noqa: F401
from tools.devcluster import ClusterHandle, find_binaries
from tools.devcluster.pytest_plugin import require_cluster

BIN = Path(sys.executable).parent


def kubectl(*args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess[str]:
    """The devcluster's kubectl with only the virtual environment's scripts (and the system's) on PATH."""
    found = find_binaries().kubectl
    if found is None or not (BIN / "kubectl-oam").exists():
        message = "kubectl (make devcluster) and kubectl-oam (pip install -e .) are needed"
        if require_cluster():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    env = {key: value for key, value in os.environ.items() if key not in ("KUBECONFIG", "OAM_OPERATOR_DOMAIN")}
    env["PATH"] = os.pathsep.join([str(BIN), "/usr/bin", "/bin"])
    for key in ("NO_PROXY", "no_proxy"):  # the local API server is never behind a proxy
        env[key] = ",".join(filter(None, [env.get(key), "127.0.0.1", "localhost"]))
    if kubeconfig is not None:
        env["KUBECONFIG"] = kubeconfig
    return subprocess.run([str(found), *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_kubectl_lists_the_plugin() -> None:
    result = kubectl("plugin", "list", "--name-only")
    assert result.returncode == 0, result.stderr
    assert "kubectl-oam" in result.stdout.split()


def test_kubectl_oam_status_takes_kubectls_flags_after_and_before_the_command(
        cluster: ClusterHandle, apps: Apps, namespace: str) -> None:  # noqa: F811 (the fixture)
    generation = apps.create("shop")["metadata"]["generation"]
    apps.write_status("shop", processing_status(namespace, generation))
    after = kubectl("oam", "status", "shop", "-n", namespace, "--kubeconfig", cluster.kubeconfig)
    assert (after.returncode, after.stderr) == (3, "")
    assert after.stdout.splitlines()[0] == (
        f"Application {namespace}/shop  State: Processing  Ready: Unknown  Revision: 3  Objects: 5/8 ready")
    before = kubectl("oam", "-n", namespace, "status", "shop", kubeconfig=cluster.kubeconfig)
    assert (before.returncode, before.stdout, before.stderr) == (3, after.stdout, "")


def test_the_context_flag_selects_the_kubeconfigs_context(
        cluster: ClusterHandle, apps: Apps, namespace: str) -> None:  # noqa: F811 (the fixture)
    apps.create("shop")
    result = kubectl("oam", "status", "shop", "-n", namespace, "--context", "no-such-context",
                     kubeconfig=cluster.kubeconfig)
    assert result.returncode == 1
    assert "no-such-context" in result.stderr


def test_kubectl_completes_the_plugins_commands_and_flags() -> None:
    commands = kubectl("__complete", "oam", "st")
    assert commands.returncode == 0, commands.stderr
    assert commands.stdout.splitlines()[0].split("\t")[0] == "status"
    assert commands.stdout.splitlines()[-1] == ":4"
    flags = kubectl("__complete", "oam", "status", "shop", "--kube")
    assert [line.split("\t")[0] for line in flags.stdout.splitlines()] == ["--kubeconfig", ":4"]
