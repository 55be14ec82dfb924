"""``oam-operator rbac FILE`` (docs/operator.md#not-permitted-and-the-role-it-needs): the Role and
RoleBinding offline, the README's example Role is its output for examples/shop.yaml, exact refusals."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from click.testing import CliRunner

from oam_operator.cli import main

ROOT = Path(__file__).resolve().parents[3]
APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: demo, namespace: team-a}
spec:
  serviceAccountName: deployer
  components:
    - {name: web, type: webservice, properties: {image: "nginx:1.27", port: 80}}
"""


def rbac(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["rbac", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_webservice_needs_its_deployment_service_and_serviceaccount(tmp_path: Path) -> None:
    app = tmp_path / "app.yaml"
    app.write_text(APP)
    code, out, err = rbac(str(app))
    assert (code, err) == (0, "")
    role, binding = yaml.safe_load_all(out)
    verbs = ["get", "list", "create", "update", "patch", "delete"]
    assert role == {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": "oam-demo", "namespace": "team-a"},
                    "rules": [{"apiGroups": [""], "resources": ["serviceaccounts", "services"], "verbs": verbs},
                              {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": verbs}]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "deployer", "namespace": "team-a"}]
    code, out, _ = rbac(str(app), "-n", "team-b", "--service-account", "other", "-o", "json")
    listing = yaml.safe_load(out)
    assert code == 0 and [item["kind"] for item in listing["items"]] == ["Role", "RoleBinding"]
    assert listing["items"][1]["subjects"] == [{"kind": "ServiceAccount", "name": "other", "namespace": "team-b"}]


def test_the_readmes_example_role_is_what_the_command_prints_for_the_shop() -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```yaml\n(apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n.*?)```", readme, re.S)
    assert block is not None
    example = yaml.safe_load(block.group(1))
    code, out, _ = rbac(str(ROOT / "examples" / "shop.yaml"), "-n", "shop", "--service-account", "shop-deployer")
    role = next(iter(yaml.safe_load_all(out)))
    assert code == 0 and example == role


def test_refusals_are_exact(tmp_path: Path) -> None:
    no_namespace = tmp_path / "app.yaml"
    no_namespace.write_text(APP.replace("metadata: {name: demo, namespace: team-a}", "metadata: {name: demo}"))
    assert rbac(str(no_namespace)) == (
        1, "", f"Error: {no_namespace}: the Application names no namespace; give it with -n NAMESPACE\n")
    profile = tmp_path / "profile.yaml"
    profile.write_text("kind: Application\n")
    not_app = tmp_path / "other.yaml"
    not_app.write_text("kind: ConfigMap\n")
    assert rbac(str(not_app)) == (1, "", f"Error: {not_app}: not an Application document\n")
    assert rbac(str(no_namespace), "-n", "x", "--profile", str(not_app)) == (
        1, "", f"Error: {not_app}: not a ClusterProfile document\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(APP.replace("type: webservice", "type: nosuchtype"))
    code, out, err = rbac(str(broken))
    assert (code, out) == (1, "") and err.startswith("Error: transforming the Application: ")
