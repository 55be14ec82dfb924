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


CHART = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: sealed, namespace: team-a}
spec:
  serviceAccountName: deployer
  components:
    - name: controller
      type: manifests
      properties:
        inline: |
          apiVersion: apiextensions.k8s.io/v1
          kind: CustomResourceDefinition
          metadata: {name: sealedsecrets.bitnami.com}
          spec:
            group: bitnami.com
            scope: Namespaced
            names: {plural: sealedsecrets, kind: SealedSecret}
            versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
          ---
          apiVersion: rbac.authorization.k8s.io/v1
          kind: ClusterRole
          metadata: {name: secrets-unsealer}
          rules: [{apiGroups: [""], resources: [secrets], verbs: [get]}]
          ---
          apiVersion: rbac.authorization.k8s.io/v1
          kind: ClusterRoleBinding
          metadata: {name: sealed-secrets-controller}
          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: secrets-unsealer}
          subjects: [{kind: ServiceAccount, name: sealed-secrets-controller, namespace: kube-system}]
          ---
          apiVersion: v1
          kind: ServiceAccount
          metadata: {name: sealed-secrets-controller, namespace: kube-system}
"""


def test_a_chart_with_crds_and_cluster_roles_gets_escalate_bind_the_guards_list_and_its_namespaces(
        tmp_path: Path) -> None:
    app = tmp_path / "app.yaml"
    app.write_text(CHART)
    code, out, err = rbac(str(app), "--allow-cross-namespace-objects")
    assert (code, err) == (0, "")
    comments = " ".join(line[2:] for line in out.splitlines() if line.startswith("# "))
    assert "has `escalate` on that role" in comments and "holds the bound role's rights, or has `bind`" in comments
    assert "The cluster-wide `list` of custom resources is the deletion guard's" in comments
    assert "reads each target namespace and creates it when it is missing" in comments
    documents = [d for d in yaml.safe_load_all(out) if d]
    assert [(d["kind"], d["metadata"].get("namespace")) for d in documents] == [
        ("Role", "kube-system"), ("RoleBinding", "kube-system"), ("ClusterRole", None), ("ClusterRoleBinding", None)]
    rules = documents[2]["rules"]
    named = [rule for rule in rules if "resourceNames" in rule]
    assert named == [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"], "resourceNames": ["kube-system"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"],
         "resourceNames": ["secrets-unsealer"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["escalate"],
         "resourceNames": ["secrets-unsealer"]}]
    assert {"apiGroups": ["bitnami.com"], "resources": ["sealedsecrets"], "verbs": ["list"]} in rules
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["create"]} in rules
    code, out, err = rbac(str(app), "-o", "json")
    assert code == 0 and err.startswith("note: The Application creates RBAC roles or bindings.")


def test_url_sources_are_read_with_the_operators_settings(tmp_path: Path) -> None:
    import http.server
    import threading

    manifest = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(manifest)))
            self.end_headers()
            self.wfile.write(manifest)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/objects.yaml"
        app = tmp_path / "app.yaml"
        app.write_text(APP.replace('- {name: web, type: webservice, properties: {image: "nginx:1.27", port: 80}}',
                                   f"- {{name: remote, type: manifests, properties: {{url: '{url}'}}}}"))
        code, out, err = rbac(str(app))
        assert (code, out) == (1, "")
        assert err == (f'Error: transforming the Application: manifests component "remote": manifest source: '
                       f'reading "{url}": refused to connect to 127.0.0.1: a loopback address (URL sources may reach '
                       "only public addresses); the operator allows internal networks listed in "
                       "--url-source-allowed-networks\n")
        code, out, err = rbac(str(app), "--url-source-allowed-networks", "127.0.0.0/8")
        assert (code, err) == (0, "")
        assert next(iter(yaml.safe_load_all(out)))["rules"][0]["resources"] == ["configmaps"]
        code, out, err = rbac(str(app), "--no-url-sources")
        assert code == 1 and "URL sources are disabled" in err
        assert rbac(str(app), "--url-source-allowed-networks", "ten") == (
            1, "", 'Error: --url-source-allowed-networks: "ten" is not an IP network such as 10.0.0.0/8 or '
                   "127.0.0.1\n")
    finally:
        server.shutdown()
