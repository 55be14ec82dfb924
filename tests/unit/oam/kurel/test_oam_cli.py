"""``oam-operator build`` and ``oam-operator schema`` (docs/transform.md#errors-printed-by-build,
docs/transform.md#printing-the-tree,
docs/transform.md#output-stream-and-object-content; docs/operator.md#the-command-line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from oamkit import LAUNCHER, cm, dep, document

from oam_operator.cli import main
from oam_operator.oam import Transformer, new_builtin_transformer

SHOP = document([cm("web"), cm("db"), cm("jobs")], [dep("order", ("web", ["jobs"]))], name="shop", namespace="shop")


def invoke(tmp_path: Path, *args: str, text: str = SHOP) -> tuple[int, str, str]:
    app = tmp_path / "app.yaml"
    app.write_text(text)
    result = CliRunner().invoke(main, [a.replace("APP", str(app)) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_build_prints_objects_in_tree_order(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, "build", "APP")
    assert (code, err) == (0, "")
    docs = out.split("---\n")
    assert [yaml.safe_load(d)["metadata"]["name"] for d in docs] == ["db", "jobs", "web"]
    assert docs[0] == (
        "apiVersion: v1\ndata:\n  k: v\nkind: ConfigMap\nmetadata:\n  labels:\n    oam-operator.dev/component: db\n"
        "  name: db\n  namespace: shop\n"
    )


def test_build_flags(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, "build", "APP", "--no-component-label", "-n", "other")
    assert code == 0
    first = yaml.safe_load(out.split("---\n")[0])
    assert first["metadata"] == {"name": "db", "namespace": "other"}
    code, out, _ = invoke(tmp_path, "build", "APP", "--domain", "example.com")
    assert "example.com/component: db" in out
    code, out, _ = invoke(tmp_path, "build", str(tmp_path))  # a directory means <dir>/app.yaml
    assert code == 0 and out.count("---") == 2


def test_launcher_document_uses_the_launcher_domain(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, "build", "APP", text=document([cm("a")], api_version=LAUNCHER))
    assert code == 0 and "launcher.gokure.dev/component: a" in out


def test_build_tree(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, "build", "APP", "--tree")
    assert code == 0
    assert out == (
        "bundle:\n"
        "  applications: []\n"
        "  children:\n"
        "  - applications:\n"
        "    - name: db\n"
        "      objects:\n"
        "      - v1 ConfigMap shop/db\n"
        "      owner: db\n"
        "    - name: jobs\n"
        "      objects:\n"
        "      - v1 ConfigMap shop/jobs\n"
        "      owner: jobs\n"
        "    children: []\n"
        "    dependsOn: []\n"
        "    name: shop-00\n"
        "  - applications:\n"
        "    - name: web\n"
        "      objects:\n"
        "      - v1 ConfigMap shop/web\n"
        "      owner: web\n"
        "    children: []\n"
        "    dependsOn:\n"
        "    - shop-00\n"
        "    name: shop-01\n"
        "  dependsOn: []\n"
        "  name: shop\n"
        "cluster: local\n"
        "node: shop\n"
    )
    code, out, _ = invoke(tmp_path, "build", "APP", "--tree", text=document([cm("a")]))
    assert yaml.safe_load(out) == {
        "cluster": "local",
        "node": "",
        "bundle": {
            "name": "app",
            "dependsOn": [],
            "children": [],
            "applications": [{"name": "a", "owner": "a", "objects": ["v1 ConfigMap default/a"]}],
        },
    }


def test_build_output_dir(tmp_path: Path) -> None:
    target = tmp_path / "out" / "nested"
    code, out, err = invoke(tmp_path, "build", "APP", "--output-dir", str(target))
    assert (code, out, err) == (0, "", "")
    _, printed, _ = invoke(tmp_path, "build", "APP")
    assert (target / "shop.yaml").read_text() == printed
    code, _, _ = invoke(tmp_path, "build", "APP", "--output-dir", str(target), "-o", "json")
    assert code == 0
    assert json.loads((target / "shop.json").read_text())["kind"] == "List"


def test_build_o_is_the_output_format(tmp_path: Path) -> None:
    """Issue 14: ``-o`` means the format everywhere; ``-o yaml`` never creates a directory."""
    code, out, err = invoke(tmp_path, "build", "APP", "-o", "json")
    assert (code, err) == (0, "")
    listing = json.loads(out)
    _, printed, _ = invoke(tmp_path, "build", "APP", "-o", "yaml")
    assert listing == {"apiVersion": "v1", "kind": "List", "metadata": {},
                       "items": [yaml.safe_load(d) for d in printed.split("---\n")]}
    code, out, _ = invoke(tmp_path, "build", "APP", "--tree", "-o", "json")
    assert code == 0 and "bundle" in json.loads(out)
    code, out, err = invoke(tmp_path, "build", "APP", "-o", str(tmp_path / "out"))
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"Error: Invalid value for '-o' / '--output': '{tmp_path / 'out'}' is not an output format (yaml or json); "
        f"to write files into a directory use --output-dir {tmp_path / 'out'}"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "yaml").exists()


def test_build_with_zero_objects_warns(tmp_path: Path) -> None:
    text = document([{"name": "m", "type": "manifests", "properties": {"inline": "---\n"}}])
    assert invoke(tmp_path, "build", "APP", text=text) == (0, "", "warning: no resources generated\n")


def test_build_prints_a_trait_generating_an_object_twice_as_kurel_does_with_a_warning(tmp_path: Path) -> None:
    """docs/transform.md#duplicate-objects-of-traits: both copies on stdout (kurel's output), the
    operator's refusal as a warning."""
    scaler = {"type": "scaler", "properties": {"minReplicas": 2, "maxReplicas": 4}}
    web = {"name": "web", "type": "worker", "properties": {"image": "ghcr.io/example/web:1.0"},
           "traits": [scaler, scaler]}
    code, out, err = invoke(tmp_path, "build", "APP", text=document([web], namespace="shop"))
    assert code == 0
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(out) if d["kind"] == "HorizontalPodAutoscaler"] == [
        "web-hpa", "web-hpa"]
    assert err == ('warning: component "web" trait "scaler": duplicate HorizontalPodAutoscaler "web-hpa": already '
                   'generated by component "web" trait "scaler" (the operator refuses this Application)\n')


def test_build_errors_are_one_line_with_the_step_prefix(tmp_path: Path) -> None:
    app = str(tmp_path / "app.yaml")
    missing = str(tmp_path / "missing.yaml")
    cases = [
        (("build", missing), f'Error: reading application file "{missing}": open {missing}: no such file or directory\n', SHOP),
        (("build", "APP"), f'Error: parsing application file "{app}": spec.components must contain at least one component\n', document([])),
        (("build", "APP"), f'Error: parsing application file "{app}": parse error in Application at line 1: mapping values are not allowed in this context\n', "a: b: c\n"),
        (("build", "APP"), 'Error: transforming application: policy "order": references unknown component "ghost"\n', document([cm("a")], [dep("order", ("ghost", ["a"]))])),
        (("build", "APP"), 'Error: transforming application: policy "p" (type "placement"): properties: unsupported field "teir" (allowed: component, tier); did you mean "tier"?\n', document([cm("a")], [{"name": "p", "type": "placement", "properties": {"teir": "x"}}])),
        (("build", "APP", "--profile", missing), f'Error: reading profile file "{missing}": open {missing}: no such file or directory\n', SHOP),
        (("build", "APP"), 'Error: generating manifests: manifests component "m": manifest source: reading "https://127.0.0.1:9/x": ', document([{"name": "m", "type": "manifests", "properties": {"url": "https://127.0.0.1:9/x"}}])),
    ]  # fmt: skip
    for args, expected, text in cases:
        code, out, err = invoke(tmp_path, *args, text=text)
        assert code == 1, args
        assert out == ""
        assert err.startswith(expected), err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_build_profile_errors(tmp_path: Path) -> None:
    profile = tmp_path / "cluster.yaml"
    profile.write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {name: p}\nspec: {gitopsEngine: argo}\n"
    )
    code, out, err = invoke(tmp_path, "build", "APP", "--profile", str(profile))
    assert (code, out) == (1, "")
    assert (
        err == f'Error: parsing profile file "{profile}": unknown gitopsEngine "argo" (valid: fluxcd)\n'
    )
    profile.write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {name: p}\nspec: {capabilities: {}}\n"
    )
    assert invoke(tmp_path, "build", "APP", "--profile", str(profile))[0] == 0


def test_package_file_errors_and_package_flags_without_a_package(tmp_path: Path) -> None:
    (tmp_path / "kurel.yaml").write_text("kind: Package\n")
    code, out, err = invoke(tmp_path, "build", "APP")
    assert (code, out) == (1, "")
    assert err == (
        f'Error: parsing package file "{tmp_path / "kurel.yaml"}": unsupported apiVersion "", expected '
        '"oam-operator.dev/v1alpha1" or "launcher.gokure.dev/v1alpha1"\n'
    )
    (tmp_path / "kurel.yaml").unlink()
    code, _, err = invoke(tmp_path, "build", "APP", "--values", "v.yaml")
    assert (code, err) == (1, f'Error: --values and --set require a kurel.yaml package descriptor in "{tmp_path}"\n')


def test_schema_command(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, "schema", "-o", "json")
    assert code == 0
    index = json.loads(out)
    assert sorted(index) == ["components", "policies", "traits"]
    # The transform's two plus the operator's own (operator/oam_operator/operatorpolicies).
    assert sorted(index["policies"]) == ["app-dependency", "change-window", "dependency", "health-checks", "override",
                                         "placement", "reconciliation", "rollback", "rollout", "topology"]
    assert sorted(index["components"]) == new_builtin_transformer().component_types()
    assert sorted(index["traits"]) == new_builtin_transformer().trait_types()
    placement = index["policies"]["placement"]
    assert placement["contract"] == {
        "family": "placement",
        "version": "v1alpha1",
        "requiredCapabilityKeys": [],
        "deprecated": False,
        "deprecationMessage": "",
    }
    assert placement["schema"]["required"] == ["component", "tier"]
    assert placement["schema"]["properties"]["tier"]["enum"] == ["infra", "services", "apps"]
    code, out, _ = invoke(tmp_path, "schema", "policy", "dependency", "-o", "yaml")
    doc = yaml.safe_load(out)
    assert doc["type"] == "dependency"
    assert doc["schema"]["properties"]["rules"]["items"]["required"] == ["component", "dependsOn"]
    code, out, _ = invoke(tmp_path, "schema", "component", "-o", "json")
    assert sorted(json.loads(out)) == new_builtin_transformer().component_types()
    code, out, err = invoke(tmp_path, "schema", "trait", "no-such-trait")
    known = ", ".join(new_builtin_transformer().trait_types()) or "(none)"
    assert (code, out, err) == (1, "", f'Error: unknown trait type "no-such-trait" (valid: {known})\n')
    code, out, err = invoke(tmp_path, "schema", "widget", "x")
    assert (code, err) == (1, 'Error: unknown family "widget" (valid: component, trait, policy)\n')


def test_schema_command_with_no_types_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A transformer without handlers: the "(none)" form does not depend on what this build ships.
    monkeypatch.setattr("oam_operator.oam.new_builtin_transformer", Transformer)
    code, out, err = invoke(tmp_path, "schema", "trait", "ingress")
    assert (code, out, err) == (1, "", 'Error: unknown trait type "ingress" (valid: none)\n')
