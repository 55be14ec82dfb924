"""``oam-operator build`` with kurel packages (``--values``, ``--set``) and generated sources (``--tree``)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner
from oamkit.packages import cm, dep, document, helm

from oam_operator.cli import main

APP = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: simple
spec:
  components:
  - name: w
    type: passthrough
    properties:
      object:
        apiVersion: example.com/v1
        kind: Widget
        spec:
          image: "${image}"
          replicas: ${replicas}
          label: v-${replicas}
          version: ${version}
          debug: ${debug}
"""

KUREL = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: simple
spec:
  parameters:
  - name: image
    type: string
    required: true
  - name: replicas
    type: integer
    default: 1
  - name: version
    type: string
    default: "1.0"
  - name: debug
    type: boolean
    default: false
"""


def build(tmp_path: Path, *args: str, app: str = APP, kurel: str | None = KUREL) -> tuple[int, str, str]:
    (tmp_path / "app.yaml").write_text(app)
    if kurel is not None:
        (tmp_path / "kurel.yaml").write_text(kurel)
    result = CliRunner().invoke(main, ["build", *[a.replace("DIR", str(tmp_path)) for a in args]])
    return result.exit_code, result.stdout, result.stderr


def widget_spec(out: str) -> dict[str, object]:
    spec: dict[str, object] = yaml.safe_load(out)["spec"]
    return spec


def test_values_file_and_set_flags_with_type_promotion(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("image: registry/app:v1\nreplicas: 2\n")
    code, out, err = build(tmp_path, "DIR/app.yaml", "--values", "DIR/values.yaml", "--no-component-label")
    assert (code, err) == (0, "")
    assert widget_spec(out) == {
        "image": "registry/app:v1",
        "replicas": 2,
        "label": "v-2",
        "version": "1.0",
        "debug": False,
    }
    assert "  replicas: 2\n" in out and '  version: "1.0"\n' in out
    code, out, err = build(
        tmp_path,
        "DIR",
        "--values",
        "DIR/values.yaml",
        "--set",
        "replicas=5",
        "--set",
        "debug=true",
        "--set",
        "version=1.10",
    )
    assert (code, err) == (0, "")
    assert widget_spec(out) == {
        "image": "registry/app:v1",
        "replicas": 5,
        "label": "v-5",
        "version": "1.10",
        "debug": True,
    }


def test_package_errors_carry_their_prefix(tmp_path: Path) -> None:
    package = tmp_path / "kurel.yaml"
    assert build(tmp_path, "DIR/app.yaml") == (
        1,
        "",
        'Error: resolving parameters: required parameter "image" is not set; provide it with --values or --set\n',
    )
    assert build(tmp_path, "DIR/app.yaml", "--set", "image=x", "--set", "replicas=two")[2] == (
        'Error: resolving parameters: parameter "replicas" (type integer): "two" is not a valid integer\n'
    )
    assert build(tmp_path, "DIR/app.yaml", "--set", "image=x", "--set", "tag=1")[2] == (
        'Error: resolving parameters: parameter "tag" is not declared in kurel.yaml\n'
    )
    assert build(tmp_path, "DIR/app.yaml", "--set", "image=x", app=APP.replace("${debug}", "${dbg}"))[2] == (
        'Error: resolving parameters: undeclared parameter "dbg" referenced in application template\n'
    )
    assert (
        build(tmp_path, "DIR/app.yaml", "--set", "image", app=APP)[2]
        == 'Error: --set "image": expected key=value format\n'
    )
    assert build(tmp_path, "DIR/app.yaml", kurel=KUREL.replace("integer", "int"))[2] == (
        f'Error: parsing package file "{package}": parameter "replicas" has invalid type "int"; supported types: '
        "string, integer, boolean\n"
    )
    assert build(tmp_path, "DIR/app.yaml", kurel=KUREL + "extra: 1\n")[2] == (
        f'Error: parsing package file "{package}": parse error in Package at line 19: unknown field "extra" in document\n'
    )


def test_values_file_errors(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("- image\n")
    assert build(tmp_path, "DIR/app.yaml", "--values", str(values))[2] == (
        f'Error: values file "{values}" must be a YAML mapping (key: value pairs), got []interface {{}}\n'
    )
    missing = tmp_path / "nope.yaml"
    assert build(tmp_path, "DIR/app.yaml", "--values", str(missing))[2] == (
        f'Error: reading values file "{missing}": open {missing}: no such file or directory\n'
    )
    values.write_text("")
    assert build(tmp_path, "DIR/app.yaml", "--values", str(values), "--set", "image=i")[0] == 0


def test_values_and_set_need_a_package(tmp_path: Path) -> None:
    message = f'Error: --values and --set require a kurel.yaml package descriptor in "{tmp_path}"\n'
    assert build(tmp_path, "DIR/app.yaml", "--set", "a=b", kurel=None) == (1, "", message)
    assert build(tmp_path, "DIR", "--values", "DIR/v.yaml", kurel=None) == (1, "", message)


def test_without_a_package_placeholders_stay_as_written(tmp_path: Path) -> None:
    code, out, _ = build(tmp_path, "DIR/app.yaml", kurel=None, app=APP.replace("${replicas}", "'${replicas}'"))
    assert code == 0
    assert widget_spec(out)["image"] == "${image}"
    assert widget_spec(out)["replicas"] == "${replicas}"


def test_parse_errors_after_substitution_point_at_the_template_line(tmp_path: Path) -> None:
    # a multi-line block scalar is substituted above the faulty line: the line number still holds
    app = APP.replace('          image: "${image}"\n', "          image: |\n            ${image}\n            more\n")
    app += "  bogus: 1\n"
    code, _, err = build(tmp_path, "DIR/app.yaml", "--set", "image=i", app=app)
    assert code == 1
    assert (
        err
        == f'Error: parsing application file "{tmp_path / "app.yaml"}": parse error in Application at line 21: unknown field "bogus" in spec\n'
    )


def test_helm_build_prints_the_source_then_the_release(tmp_path: Path) -> None:
    code, out, _ = build(tmp_path, "DIR/app.yaml", kurel=None, app=document([helm("metrics")], name="monitoring"))
    assert code == 0
    assert [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out)] == [
        ("HelmRepository", "metrics"),
        ("HelmRelease", "metrics"),
    ]


def test_tree_shows_the_application_bundle_sources_before_its_groups(tmp_path: Path) -> None:
    app = document([helm("a"), helm("b"), cm("web")], [dep("d", "web", ["a"])], name="shop")
    code, out, err = build(tmp_path, "DIR/app.yaml", "--tree", kurel=None, app=app)
    assert (code, err) == (0, "")
    assert (
        out
        == """\
bundle:
  applications:
  - name: shop-source-d3f34901c4
    objects:
    - source.toolkit.fluxcd.io/v1 HelmRepository default/shop-source-d3f34901c4
    owner: ""
  children:
  - applications:
    - name: a
      objects:
      - helm.toolkit.fluxcd.io/v2 HelmRelease default/a
      owner: a
    - name: b
      objects:
      - helm.toolkit.fluxcd.io/v2 HelmRelease default/b
      owner: b
    children: []
    dependsOn: []
    name: shop-00
  - applications:
    - name: web
      objects:
      - v1 ConfigMap default/web
      owner: web
    children: []
    dependsOn:
    - shop-00
    name: shop-01
  dependsOn: []
  name: shop
cluster: local
node: shop
"""
    )
