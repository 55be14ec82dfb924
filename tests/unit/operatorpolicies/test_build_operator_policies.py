"""``oam-operator build`` refuses the operator's policy types by default; ``--operator-policies``
validates them offline; ``schema`` publishes them."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from oam_operator.cli import main

APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: web, namespace: shop}
spec:
  components:
    - name: settings
      type: passthrough
      properties:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {k: v}}
  policies:
    - name: after-db
      type: app-dependency
      properties:
        applications: [{name: db}]
    - name: sync
      type: reconciliation
      properties: {interval: 5m}
"""


def invoke(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "app.yaml"
    path.write_text(text)
    result = CliRunner().invoke(main, [a.replace("APP", str(path)) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_build_refuses_by_default_with_the_kurel_message(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, APP, "build", "APP")
    assert (code, out) == (1, "")
    assert err == ('Error: transforming application: no handler for policy type "app-dependency" (policy "after-db")\n'
                   "hint: app-dependency is one of the operator's own policy types (app-dependency, change-window, "
                   "health-checks, override, reconciliation, rollback, rollout, topology); --operator-policies "
                   "validates them offline\n")
    code, out, err = invoke(tmp_path, APP.split("    - name: after-db")[0] + APP.split("applications: [{name: db}]\n")[1],
                            "build", "APP")
    assert (code, out) == (1, "")
    assert err.splitlines()[1].startswith("hint: reconciliation is one of the operator's own policy types")


def test_build_with_operator_policies_validates_and_generates_the_same_objects(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, APP, "build", "APP", "--operator-policies")
    assert (code, err) == (0, "")
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(out)] == ["settings"]
    without = APP.split("  policies:")[0]
    assert invoke(tmp_path, without, "build", "APP")[1] == out
    bad = APP.replace("interval: 5m", "interval: 5s")
    code, out, err = invoke(tmp_path, bad, "build", "APP", "--operator-policies")
    assert (code, out) == (1, "")
    assert err == 'Error: transforming application: policy "sync": interval must be at least 30s\n'


def test_schema_publishes_the_operator_policies(tmp_path: Path) -> None:
    code, out, _ = invoke(tmp_path, APP, "schema", "policy", "app-dependency", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["type"] == "app-dependency"
    assert doc["contract"]["family"] == "app-dependency"
    assert doc["schema"]["required"] == ["applications"]
    assert doc["schema"]["properties"]["applications"]["items"]["required"] == ["name"]
    code, out, _ = invoke(tmp_path, APP, "schema", "policy", "reconciliation", "-o", "json")
    assert sorted(json.loads(out)["schema"]["properties"]) == ["interval", "retryInterval", "suspend", "timeout"]
    code, out, _ = invoke(tmp_path, APP, "schema", "policy", "health-checks", "-o", "json")
    assert json.loads(out)["schema"]["properties"]["checks"]["items"]["required"] == ["apiVersion", "kind", "name"]


def test_the_example_builds_with_operator_policies(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[3] / "examples" / "shop-after-platform.yaml"
    result = CliRunner().invoke(main, ["build", str(example), "--operator-policies"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert {d["kind"] for d in yaml.safe_load_all(result.stdout)} >= {"Deployment", "Service"}
    refused = CliRunner().invoke(main, ["build", str(example)])
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == ('Error: transforming application: no handler for policy type '
                                              '"app-dependency" (policy "after-platform")')


def test_the_tree_with_operator_policies_shows_the_applications_it_waits_for(tmp_path: Path) -> None:
    text = APP.replace("applications: [{name: db}]", "applications: [{name: db}, {name: auth, namespace: platform}]")
    code, out, err = invoke(tmp_path, text, "build", "APP", "--tree", "--operator-policies")
    assert (code, err) == (0, "")
    tree = yaml.safe_load(out)
    assert tree["waitsFor"] == [{"application": "shop/db", "policy": "after-db"},
                                {"application": "platform/auth", "policy": "after-db"}]
    assert tree["bundle"]["name"] == "web"
    without = APP.split("  policies:")[0]
    code, out, _ = invoke(tmp_path, without, "build", "APP", "--tree", "--operator-policies")
    assert code == 0 and "waitsFor" not in yaml.safe_load(out)


def test_the_hint_names_every_operator_policy_type() -> None:
    from oam_operator.cli.build import OPERATOR_POLICY_HINT
    from oam_operator.operatorpolicies import OPERATOR_POLICY_TYPES

    listed = OPERATOR_POLICY_HINT.split("policy types (")[1].split(")")[0].split(", ")
    assert listed == sorted(OPERATOR_POLICY_TYPES)
