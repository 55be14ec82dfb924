"""``oam-operator build`` prints kurel's release order; the bundle tree keeps its own (oam/release_order.py)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from oam_operator.cli import main

APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: shop, namespace: shop}
spec:
  components:
    - name: web
      type: webservice
      properties: {image: "nginx:1.27", port: 80}
      traits:
        - type: configmap
          properties: {name: web-settings, data: {a: b}}
    - name: agent
      type: daemonset
      properties: {image: "agent:1"}
    - name: api
      type: worker
      properties: {image: "api:1"}
      traits:
        - type: configmap
          properties: {name: api-settings, data: {c: d}}
"""


def printed(tmp_path: Path, *args: str, text: str = APP) -> list[tuple[str, str]]:
    app = tmp_path / "app.yaml"
    app.write_text(text)
    result = CliRunner().invoke(main, ["build", str(app), *args])
    assert result.exit_code == 0, result.output
    return [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(result.stdout) if d]


def test_default_tiers_then_components_then_traits(tmp_path: Path) -> None:
    kinds = printed(tmp_path)
    # daemonset first (kurel's default tier infra), then the apps components in document order,
    # then every trait object of those components.
    names = [name for _, name in kinds]
    assert names.index("agent") < names.index("web") < names.index("api")
    assert names.index("api") < names.index("web-settings") < names.index("api-settings")
    assert kinds[-2:] == [("ConfigMap", "web-settings"), ("ConfigMap", "api-settings")]


def test_annotated_tiers_order_the_print(tmp_path: Path) -> None:
    text = APP.replace("    - name: api\n      type: worker\n",
                       "    - name: api\n      type: worker\n      annotations: {oam-operator.dev/tier: services}\n")
    names = [name for _, name in printed(tmp_path, text=text)]
    assert names.index("agent") < names.index("api") < names.index("web")


def test_the_bundle_tree_keeps_each_components_traits_next_to_it(tmp_path: Path) -> None:
    app = tmp_path / "app.yaml"
    app.write_text(APP)
    result = CliRunner().invoke(main, ["build", str(app), "--tree"])
    assert result.exit_code == 0
    tree = yaml.safe_load(result.stdout)["bundle"]["applications"]
    assert [(a["name"], a["owner"]) for a in tree] == [
        ("web", "web"), ("web-settings", "web"), ("agent", "agent"), ("api", "api"), ("api-settings", "api")]
    assert yaml.safe_load(result.stdout)["bundle"]["children"] == []  # no default tier makes a bundle
