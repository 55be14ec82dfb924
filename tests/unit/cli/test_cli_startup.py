"""The CLI starts fast (issue 14): ``--help`` and ``build`` never import pydantic, kopf or the
Kubernetes client, and ``run --help`` gives every flag its meaning and default.

Timing belongs to ``bench/bench_cli_startup.py``; these tests pin what makes it fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.controller.reconcile.settings import DESCRIPTIONS, Settings, env_var, flag_name

HEAVY = ("pydantic", "kopf", "kubernetes", "urllib3", "prometheus_client")
APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: demo}
spec:
  components:
    - {name: web, type: webservice, properties: {image: "nginx:1.27", port: 80}}
"""


def loaded_after(*argv: str) -> set[str]:
    code = (
        "import sys\n"
        "from oam_operator.cli import main\n"
        f"sys.argv = ['oam-operator', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED:' + ','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("LOADED:"), result.stdout
    return set(filter(None, last.removeprefix("LOADED:").split(",")))


def test_help_and_build_import_nothing_heavy(tmp_path: Path) -> None:
    app = tmp_path / "app.yaml"
    app.write_text(APP)
    assert loaded_after("--help") == set()
    assert loaded_after("build", str(app)) == set()
    assert "pydantic" in loaded_after("run", "--help")  # the check itself can fail


def test_every_setting_has_a_description() -> None:
    assert set(DESCRIPTIONS) == set(Settings.model_fields)
    assert all(text and "\n" not in text and text.endswith(".") for text in DESCRIPTIONS.values())


def test_run_help_shows_meaning_default_and_variable_of_every_flag() -> None:
    result = CliRunner().invoke(main, ["run", "--help"], terminal_width=1000)
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())  # long flag names wrap their help onto the next line
    for name in Settings.model_fields:
        assert f"{flag_name(name)} " in text, name
        assert f"{DESCRIPTIONS[name]} [default: " in text, name
        assert f"; env {env_var(name)}]" in text, name
    assert "--reapply-interval DURATION Re-apply objects in sync this often to undo unseen drift (0: every pass). " \
        "[default: 60m; env OAM_OPERATOR_REAPPLY_INTERVAL]" in text
    assert "--dependent-events / --no-dependent-events Post an Event on each object created, updated or deleted. " \
        "[default: false; env OAM_OPERATOR_DEPENDENT_EVENTS]" in text


def test_status_imports_neither_the_transform_nor_the_reconciler(tmp_path: Path) -> None:
    """``status`` needs the Kubernetes client and the status view, not the transformer, the
    reconciler or the Application models (a third of its start-up before, issue 25)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    modules = ("oam_operator.oam", "oam_operator.oam.engine.transformer", "oam_operator.reconciler.reconciler",
               "oam_operator.reconciler.client", "oam_operator.api.application", "oam_operator.controller")
    code = (
        "import sys\n"
        "from oam_operator.cli import main\n"
        f"sys.argv = ['oam-operator', 'status', 'web', '--kubeconfig', {str(kubeconfig)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED:' + ','.join(m for m in {modules!r} if m in sys.modules))\n"
        "print('CLIENT:' + str('kubernetes' in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    lines = result.stdout.splitlines()
    assert lines[-2] == "LOADED:"
    assert lines[-1] == "CLIENT:True"  # it did get as far as the client


def test_status_with_a_plain_kubeconfig_imports_no_client(tmp_path: Path) -> None:
    """A kubeconfig ``plainkube`` understands is read over ``http.client``: neither the Kubernetes
    client, urllib3 nor pydantic is imported (two thirds of status's start-up before, issue 25)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: c, user: {token: abc}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: c, namespace: shop}}]\n"
    )
    code = (
        "import sys\n"
        "from oam_operator.cli import main\n"
        f"sys.argv = ['oam-operator', 'status', 'web', '--kubeconfig', {str(kubeconfig)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED:' + ','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                            env=env)
    assert result.stdout.splitlines()[-1] == "LOADED:"
    assert result.stderr.startswith("Error: cannot reach the API server at http://127.0.0.1:9: "), result.stderr
