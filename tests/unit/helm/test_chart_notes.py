"""NOTES.txt tells the user to delete every Application before uninstalling
(docs/chart.md#the-helm-chart)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tools.devcluster.helm import CHART, run_helm


def notes(helm: Path, home: Path, tmp_path: Path, *flags: str) -> str:
    """NOTES.txt rendered through `tpl` in a copy of the chart (`helm template` skips NOTES.txt)."""
    chart = tmp_path / "chart"
    shutil.copytree(CHART, chart)
    shutil.copy(CHART / "templates" / "NOTES.txt", chart / "notes-probe.txt")
    (chart / "templates" / "notes-probe.yaml").write_text('notes: {{ tpl (.Files.Get "notes-probe.txt") . | toJson }}\n')
    result = run_helm(helm, ["template", "oam", str(chart), "-n", "oam-system",
                             "--show-only", "templates/notes-probe.yaml", *flags], home)
    text: str = yaml.safe_load(result.stdout)["notes"]
    return text


def test_notes_default(helm: Path, helm_home: Path, tmp_path: Path) -> None:
    text = notes(helm, helm_home, tmp_path)
    assert "BEFORE YOU UNINSTALL: delete every Application first" in text
    assert "kubectl get oapp -A" in text
    assert "kubectl delete oapp --all -A" in text
    assert "Watching: every namespace" in text
    assert "RBAC:     full" in text
    assert 'service/oam-oam-operator-metrics, port "metrics" (8080)' in text


def test_notes_least_privilege_namespaced(helm: Path, helm_home: Path, tmp_path: Path) -> None:
    text = notes(helm, helm_home, tmp_path, "--set", "rbac.mode=leastPrivilege", "--set", "rbac.namespaced=true",
                 "--set", "operator.watchNamespaces={a,b}")
    assert "Watching: a, b" in text
    assert "leastPrivilege, namespace-scoped" in text
    assert " ".join(text.split()).count("Identity: Applications act as the ServiceAccount in their "
                                        "spec.serviceAccountName, which every Application must set "
                                        "(--require-service-account).") == 1


def test_notes_say_which_identity_applications_act_as(helm: Path, helm_home: Path, tmp_path: Path) -> None:
    """issue 25: the identity of each mode, and the command printing the Role it needs."""

    def identity(*flags: str) -> str:
        text = " ".join(notes(helm, helm_home, tmp_path / str(len(flags)) / "_".join(flags), *flags).split())
        start = text.index("Identity: ")
        return text[start:text.index("(an Application refused", start)]

    assert identity() == (
        'Identity: Applications act as their spec.serviceAccountName, else the ServiceAccount "default" of their '
        "own namespace, which may do nothing until the namespace's owner grants it. Grant that account what an "
        "Application's objects need: `oam-operator rbac app.yaml` prints the Role and RoleBinding ")
    assert identity("--set", "operator.useOperatorIdentity=true").startswith(
        'Identity: Applications act as their spec.serviceAccountName, else the operator\'s own ServiceAccount '
        '"oam-oam-operator" (operator.useOperatorIdentity: every tenant gets its rights).')
    assert identity("--set", "operator.defaultServiceAccount=").startswith(
        "Identity: Applications act as the ServiceAccount in their spec.serviceAccountName, which every "
        'Application must set (operator.defaultServiceAccount is "").')
    assert identity("--set", "operator.requireServiceAccount=true").startswith(
        "Identity: Applications act as the ServiceAccount in their spec.serviceAccountName, which every "
        "Application must set (--require-service-account).")
