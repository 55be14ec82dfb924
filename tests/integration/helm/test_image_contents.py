"""What the built image holds (docs/image.md): exactly the locked distributions plus the project,
a working helm, bytecode compiled at build time, the numeric non-root user, the OCI labels, and
nothing written when it runs on a read-only root filesystem. The image is ``make image``'s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.integrationkit import podman

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def image(operator_image: str) -> str:
    return operator_image


def run(image: str, *command: str, entrypoint: str | None = None) -> str:
    """Run in a throw-away container as the chart does: read-only, UID 65532, no capabilities."""
    flags = ["--rm", "--network", "none", "--read-only", "--user", "65532:65532", "--cap-drop", "ALL",
             "--tmpfs", "/tmp:rw,mode=1777"]
    if entrypoint is not None:
        flags += ["--entrypoint", entrypoint]
    return podman("run", *flags, image, *command, timeout=180).stdout


def locked_names() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and line[0].isalnum() and "==" in line:
            names.add(line.split("==")[0].lower().replace("_", "-"))
    return names


def test_the_image_runs_the_operator_cli(image: str) -> None:
    assert run(image, "--version").strip() == "oam-operator, version 0.1.0"
    shop = (ROOT / "examples" / "shop.yaml").read_text()
    built = podman("run", "--rm", "-i", "--network", "none", "--read-only", "--user", "65532:65532", image,
                   "build", "/dev/stdin", timeout=120, input_text=shop).stdout
    assert "kind: Deployment" in built


def test_the_image_holds_exactly_the_locked_distributions(image: str) -> None:
    script = ("import importlib.metadata as m, json; "
              "print(json.dumps(sorted({d.metadata['Name'].lower().replace('_', '-') for d in m.distributions()})))")
    installed = set(json.loads(run(image, "-c", script, entrypoint="/opt/oam-operator/bin/python")))
    assert installed == (locked_names() - {"setuptools", "wheel", "pip"}) | {"oam-operator"}


def test_bytecode_is_compiled_and_nothing_is_written_at_run_time(image: str) -> None:
    script = (
        "import glob, os, subprocess, sys; site = glob.glob('/opt/oam-operator/lib/python3*/site-packages')[0]; "
        "before = {p: os.stat(p).st_mtime for p in glob.glob(site + '/**', recursive=True)}; "
        "subprocess.run(['oam-operator', 'build', '--help'], check=True, capture_output=True); "
        "import oam_operator.controller.service.main, oam_operator.reconciler.reconciler; "
        "after = {p: os.stat(p).st_mtime for p in glob.glob(site + '/**', recursive=True)}; "
        "print(before == after, bool(glob.glob(site + '/oam_operator/cli/__pycache__/commands.*.pyc')), "
        "os.path.exists(site + '/kubernetes/aio'), len(glob.glob(site + '/kubernetes/**/*.py', recursive=True)), "
        "os.path.exists(site + '/kubernetes/client/api_client.pyc'))"
    )
    # Unchanged files; the project compiled; no asyncio client; the kubernetes client as bytecode only.
    assert run(image, "-c", script, entrypoint="/opt/oam-operator/bin/python").split() == [
        "True", "True", "False", "0", "True"]


def test_helm_is_in_the_image(image: str) -> None:
    from tools.devcluster.helm import helm_version

    version = helm_version()
    assert run(image, "version", "--short", entrypoint="helm").startswith(f"v{version}")


def test_user_entrypoint_and_labels(image: str) -> None:
    config = json.loads(podman("image", "inspect", image).stdout)[0]
    assert config["Config"]["User"] == "65532:65532"
    assert config["Config"]["Entrypoint"] == ["oam-operator"] and config["Config"]["Cmd"] == ["run"]
    labels = config["Config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == "0.1.0"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert len(labels["org.opencontainers.image.revision"]) == 40
    assert set(config["Config"]["ExposedPorts"]) == {"8080/tcp", "8081/tcp"}
    assert run(image, "-c", "import os; print(os.getuid(), os.getgid())",
               entrypoint="/opt/oam-operator/bin/python").split() == ["65532", "65532"]


def test_the_image_issues_the_webhooks_certificate(image: str) -> None:
    """The admission webhook's self-signed certificate needs ``cryptography`` (locked) in the image."""
    script = ("from datetime import datetime, UTC; from oam_operator.controller.service.webhookcerts import issue, problem; "
              "now = datetime.now(UTC); hosts = ['oam-webhook.oam-system.svc', '127.0.0.1']; "
              "print(problem(issue(hosts, now), hosts, now))")
    assert run(image, "-c", script, entrypoint="/opt/oam-operator/bin/python").strip() == "None"
