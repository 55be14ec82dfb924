"""``make demo-multi``'s hub objects (tools/demo_spoke.py): the Secret holds the spoke's kubeconfig
unchanged, the ClusterProfile names it, and only the example's Applications get the profile."""

from __future__ import annotations

import base64
from pathlib import Path

from tools.demo_spoke import OPERATOR_NAMESPACE, PROFILE, SECRET, connection, pointed_at_spoke, spoke_name


def test_the_connection_names_the_spokes_kubeconfig_secret(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "spoke.kubeconfig"
    kubeconfig.write_text('{"apiVersion": "v1", "kind": "Config", "current-context": "spoke"}')
    namespace, secret, profile = connection(str(kubeconfig))
    assert namespace["metadata"] == {"name": OPERATOR_NAMESPACE}
    assert secret["metadata"] == {"name": SECRET, "namespace": OPERATOR_NAMESPACE}
    assert base64.b64decode(secret["data"]["value"]) == kubeconfig.read_bytes()
    assert profile["kind"] == "ClusterProfile" and profile["metadata"] == {"name": PROFILE}
    assert profile["spec"] == {"kubeConfig": {"secretRef": {"name": SECRET}}}


def test_only_the_examples_applications_are_pointed_at_the_spoke(tmp_path: Path) -> None:
    example = tmp_path / "example.yaml"
    example.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        "apiVersion: oam-operator.dev/v1alpha1\nkind: Application\nmetadata: {name: a}\n"
        "spec:\n  components: []\n---\n")
    configmap, app = pointed_at_spoke(example)
    assert "spec" not in configmap
    assert app["spec"] == {"components": [], "profile": PROFILE}


def test_the_spoke_belongs_to_its_hub() -> None:
    assert spoke_name("demo-0123abcd") == "demo-0123abcd-spoke"


def test_the_shop_example_goes_to_the_spoke() -> None:
    shop = Path(__file__).resolve().parents[3] / "examples" / "shop.yaml"
    apps = [d for d in pointed_at_spoke(shop) if d["kind"] == "Application"]
    assert [a["metadata"]["name"] for a in apps] == ["shop"]
    assert apps[0]["spec"]["profile"] == PROFILE
