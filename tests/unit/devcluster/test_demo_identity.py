"""``make demo`` belongs to its checkout (issue 14): its cluster name and the operator's code identity."""

from __future__ import annotations

from pathlib import Path

from tools.demo import NAME, ROOT, checkout_name, code_fingerprint, demo_crds, outcome


def test_each_checkout_has_its_own_demo_name() -> None:
    assert checkout_name(ROOT) == NAME
    assert NAME.startswith("demo-") and len(NAME) == len("demo-") + 8
    assert checkout_name(Path("/work/a")) != checkout_name(Path("/work/b"))
    assert checkout_name(Path("/work/a")) == checkout_name(Path("/work/a"))


def test_the_code_fingerprint_follows_the_operators_sources(tmp_path: Path) -> None:
    (tmp_path / "operator" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    module = tmp_path / "operator" / "pkg" / "mod.py"
    module.write_text("x = 1\n")
    first = code_fingerprint(tmp_path)
    assert code_fingerprint(tmp_path) == first
    module.write_text("x = 2\n")
    assert code_fingerprint(tmp_path) != first
    (tmp_path / "operator" / "pkg" / "notes.txt").write_text("not code")
    assert code_fingerprint(tmp_path) == code_fingerprint(tmp_path)


def test_the_demo_waits_for_a_pass_of_the_current_generation() -> None:
    def app(generation: int, observed: int, state: str, ready: str) -> dict[str, object]:
        return {"metadata": {"generation": generation},
                "status": {"observedGeneration": observed, "state": state,
                           "conditions": [{"type": "Ready", "status": ready}]}}

    assert outcome(app(2, 1, "Error", "False")) is None  # the last run's Error: not this generation's
    assert outcome(app(2, 1, "Ready", "True")) is None
    assert outcome(app(2, 2, "Processing", "False")) is None
    assert outcome(app(2, 2, "Error", "False")) is False
    assert outcome(app(2, 2, "Ready", "True")) is True
    assert outcome({}) is None


def test_the_demos_crds_carry_the_readmes_helm_release() -> None:
    listing = demo_crds()
    names = [crd["metadata"]["name"] for crd in listing["items"]]
    assert names == ["applications.oam-operator.dev", "clusterprofiles.oam-operator.dev",
                     "notifications.oam-operator.dev"]
    for crd in listing["items"]:
        assert crd["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert crd["metadata"]["annotations"] == {"meta.helm.sh/release-name": "oam-operator",
                                                  "meta.helm.sh/release-namespace": "oam-system"}
    readme = (ROOT / "README.md").read_text()
    assert "helm install oam-operator deploy/helm/oam-operator --namespace oam-system" in readme
