"""``oam-operator diff`` against a live Application (issue 14): in sync, drift, creates and prunes.

The operator reconciles an Application to Ready; the diff then has nothing to say. A hand edit
of one object shows as a change with a unified diff of the field; a FILE that drops one component
and adds another shows the create in its wave and the prune. Exit codes as ``kubectl diff``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from e2ekit import GROUP, VERSION, Kube, configmap_component


def diff(kube: Kube, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), "diff", *args, "-n", kube.namespace,
                           "--kubeconfig", kube.cluster.kubeconfig],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def test_diff_in_sync_drift_creates_and_prunes(start_operator: Any, kube: Kube, tmp_path: Path) -> None:
    start_operator(kube.namespace)
    components = [configmap_component("alpha"), configmap_component("beta")]
    # Report: the operator leaves the hand edit below (Correct would undo it within seconds), and
    # diff shows it (docs/operator.md#drift).
    kube.apply_app("app", {"components": components, "drift": "Report"})
    kube.wait_ready("app")

    result = diff(kube, "app")
    assert (result.returncode, result.stdout, result.stderr) == (0, "no changes\n", "")

    kube.core.patch_namespaced_config_map("beta", kube.namespace, {"data": {"key": "edited"}})
    result = diff(kube, "app")
    assert (result.returncode, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Wave app:", f"  change ConfigMap {kube.namespace}/beta"]
    assert "    -  key: edited" in lines and "    +  key: beta" in lines
    assert f"    --- live/ConfigMap/{kube.namespace}/beta" in lines
    assert kube.core.read_namespaced_config_map("beta", kube.namespace).data == {"key": "edited"}  # dry run only

    changed = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": "app"},
               "spec": {"components": [configmap_component("alpha"), configmap_component("gamma")],
                        "drift": "Report"}}
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(changed))
    result = diff(kube, str(path))
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == (
        f"Wave app:\n  create ConfigMap {kube.namespace}/gamma\nPrune:\n  prune ConfigMap {kube.namespace}/beta\n"
    )
    assert kube.core.list_namespaced_config_map(kube.namespace, field_selector="metadata.name=gamma").items == []

    bad = diff(kube, "missing")
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == f'Error: application "missing" not found in namespace "{kube.namespace}"\n'


def test_diff_runs_the_operators_checks_and_accepts_its_policies(kube: Kube, tmp_path: Path) -> None:
    """Issue 26: diff transforms with the operator's one composition root, so the operator's own
    policies are accepted, and refuses with the words the status would carry."""
    policies = [
        {"name": "after-db", "type": "app-dependency", "properties": {"applications": [{"name": "db"}]}},
        {"name": "sync", "type": "reconciliation", "properties": {"interval": "5m"}},
        {"name": "health", "type": "health-checks",
         "properties": {"checks": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "alpha"}]}},
    ]
    document = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": "app"},
                "spec": {"components": [configmap_component("alpha")], "policies": policies}}
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(document))
    result = diff(kube, str(path))
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout == f"Wave app:\n  create ConfigMap {kube.namespace}/alpha\n"

    document["spec"]["components"] = [{"name": "web", "type": "webservise", "properties": {"image": "nginx:1"}}]
    path.write_text(yaml.safe_dump(document))
    refused = diff(kube, str(path))
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        'Error: component "web": unknown type "webservise" (valid: crd, cronjob, daemonset, helm, helmchart, '
        'manifests, oci, passthrough, postgresql, statefulset, webservice, worker); did you mean "webservice"?\n')


def test_diff_hides_the_bookkeeping_annotations_unless_asked(start_operator: Any, kube: Kube, tmp_path: Path) -> None:
    """docs/operator.md#the-command-line: a changed object also gets a new digest annotation (the
    hash of its manifest); its hunk is left out unless ``--show-bookkeeping``."""
    start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("alpha")]})
    kube.wait_ready("app")
    changed = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": "app"},
               "spec": {"components": [configmap_component("alpha", {"key": "changed"})]}}
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(changed))
    hidden, shown = diff(kube, str(path)), diff(kube, str(path), "--show-bookkeeping")
    for result in (hidden, shown):
        assert (result.returncode, result.stderr) == (1, "")
        lines = result.stdout.splitlines()
        assert lines[:2] == ["Wave app:", f"  change ConfigMap {kube.namespace}/alpha"]
        assert "    -  key: alpha" in lines and "    +  key: changed" in lines
    assert "oam-operator.dev/digest" not in hidden.stdout
    digest = [line for line in shown.stdout.splitlines() if "oam-operator.dev/digest" in line]
    assert len(digest) == 2 and digest[0].startswith("    -") and digest[1].startswith("    +")
