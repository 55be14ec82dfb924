"""``build --profile P`` of a fleet Application prints what P's cluster Application applies there
(docs/multicluster.md#one-cluster-offline): the overrides selecting P merged, P's labels read from
the profile file, and the exact refusal for a profile the topology does not select."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.cli.fleetbuild import NotSelected, cluster_document, not_selected_message
from oam_operator.oam.errors import PolicyError

APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata: {name: shop, namespace: shop}
spec:
  components:
    - name: settings
      type: passthrough
      properties:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {key: base}}
  policies:
    - name: fleet
      type: topology
      properties: {clusterSelector: {matchLabels: {env: prod}}}
    - name: eu
      type: override
      properties:
        clusterSelector: {matchLabels: {region: eu}}
        components:
          - name: settings
            properties: {object: {data: {key: eu}}}
    - name: named
      type: override
      properties:
        clusters: [us-east]
        components:
          - name: settings
            properties: {object: {data: {key: us}}}
"""

PROFILE = """\
apiVersion: oam-operator.dev/v1alpha1
kind: ClusterProfile
metadata: {{name: {name}, labels: {labels}, uid: x, resourceVersion: "3"}}
spec:
  kubeConfig: {{secretRef: {{name: {name}}}}}
  allowedNamespaces: [shop]
status: {{conditions: []}}
"""


def build(tmp_path: Path, name: str, labels: str, app: str = APP) -> tuple[int, str, str]:
    (tmp_path / "app.yaml").write_text(app)
    (tmp_path / "profile.yaml").write_text(PROFILE.format(name=name, labels=labels))
    result = CliRunner().invoke(main, ["build", str(tmp_path / "app.yaml"), "--profile", str(tmp_path / "profile.yaml")])
    return result.exit_code, result.stdout, result.stderr


def data_of(stdout: str) -> dict[str, str]:
    (configmap,) = list(yaml.safe_load_all(stdout))
    data: dict[str, str] = configmap["data"]
    return data


def test_the_overrides_selecting_the_profile_by_label_are_merged(tmp_path: Path) -> None:
    code, out, err = build(tmp_path, "eu-west", "{env: prod, region: eu}")
    assert (code, err) == (0, "")
    assert data_of(out) == {"key": "eu"}


def test_an_override_naming_the_profile_is_merged(tmp_path: Path) -> None:
    code, out, _ = build(tmp_path, "us-east", "{env: prod}")
    assert code == 0 and data_of(out) == {"key": "us"}


def test_a_selected_profile_without_overrides_gets_the_components_as_they_are(tmp_path: Path) -> None:
    code, out, _ = build(tmp_path, "ap-south", "{env: prod}")
    assert code == 0 and data_of(out) == {"key": "base"}


def test_a_profile_the_topology_does_not_select_is_refused_with_its_labels(tmp_path: Path) -> None:
    code, out, err = build(tmp_path, "lab", "{env: test, region: eu}")
    assert (code, out) == (1, "")
    assert err == ('Error: ClusterProfile lab (labels: env=test,region=eu) is not selected by the topology '
                   'policy "fleet": the Application delivers nothing to it\n')


def test_an_application_without_topology_builds_as_before(tmp_path: Path) -> None:
    plain = APP.split("  policies:")[0]
    code, out, _ = build(tmp_path, "lab", "{env: test}", plain)
    assert code == 0 and data_of(out) == {"key": "base"}


def test_the_cluster_document_is_the_cluster_applications_spec_without_its_profile() -> None:
    document = yaml.safe_load(APP)
    made = cluster_document(document, "eu-west", {"env": "prod", "region": "eu"}, "oam-operator.dev")
    assert made is not None
    assert made["metadata"] == document["metadata"]
    assert "policies" not in made["spec"] and "profile" not in made["spec"]
    assert made["spec"]["components"][0]["properties"]["object"]["data"] == {"key": "eu"}
    assert cluster_document({"spec": {"components": []}}, "eu-west", {}, "oam-operator.dev") is None


def test_not_selected_names_no_labels_as_none() -> None:
    assert not_selected_message("p", "fleet", {}) == (
        'ClusterProfile p (labels: none) is not selected by the topology policy "fleet": '
        "the Application delivers nothing to it")
    with pytest.raises(NotSelected):
        cluster_document(yaml.safe_load(APP), "p", {}, "oam-operator.dev")


def test_an_override_that_does_not_parse_is_refused_not_dropped() -> None:
    document = yaml.safe_load(APP)
    document["spec"]["policies"][1]["properties"]["components"][0]["name"] = "nope"
    with pytest.raises(PolicyError, match='policy "eu": components\\[0\\]: "nope" is not a component'):
        cluster_document(document, "eu-west", {"env": "prod", "region": "eu"}, "oam-operator.dev")


STANDARD = """\
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata: {name: eu-west, namespace: fleet-system, labels: {env: prod, region: eu}}
spec: {clusterManager: {name: ocm}}
status:
  accessProviders: [{name: secretreader, cluster: {server: "https://eu-west:6443"}}]
"""


def test_a_standard_profile_document_selects_by_its_labels_and_has_no_capabilities(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(APP)
    (tmp_path / "profile.yaml").write_text(STANDARD)
    result = CliRunner().invoke(main, ["build", str(tmp_path / "app.yaml"), "--profile", str(tmp_path / "profile.yaml")])
    assert (result.exit_code, result.stderr) == (0, "")
    assert data_of(result.stdout) == {"key": "eu"}
    (tmp_path / "profile.yaml").write_text(STANDARD.replace("env: prod", "env: test"))
    result = CliRunner().invoke(main, ["build", str(tmp_path / "app.yaml"), "--profile", str(tmp_path / "profile.yaml")])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ('Error: ClusterProfile eu-west (labels: env=test,region=eu) is not selected by the '
                             'topology policy "fleet": the Application delivers nothing to it\n')


def test_a_topology_namespace_is_where_the_profiles_objects_are_built(tmp_path: Path) -> None:
    app = APP.replace("{clusterSelector: {matchLabels: {env: prod}}}",
                      "{clusterSelector: {matchLabels: {env: prod}}, namespace: team-b}")
    code, out, err = build(tmp_path, "eu-west", "{env: prod, region: eu}", app)
    assert (code, err) == (0, "")
    (configmap,) = list(yaml.safe_load_all(out))
    assert configmap["metadata"]["namespace"] == "team-b"  # as the cluster Application renders it (fleetns.py)
