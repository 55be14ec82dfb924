"""``build --definitions`` and ``schema --definitions`` (docs/definitions.md#offline)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from oam_operator.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "definitions"
APP = ROOT / "examples" / "definitions-app.yaml"


def test_build_renders_the_example_with_its_definitions() -> None:
    result = CliRunner().invoke(main, ["build", "--definitions", str(EXAMPLES), str(APP)])
    assert result.exit_code == 0, result.output
    objects = list(yaml.safe_load_all(result.output))
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Deployment", "web"), ("Service", "web"), ("PodDisruptionBudget", "web")]
    deployment = objects[0]
    assert deployment["spec"]["replicas"] == 3
    assert deployment["metadata"]["annotations"] == {"example.com/disruption-budget": "2"}
    assert objects[2]["spec"]["minAvailable"] == 2
    assert {o["metadata"]["namespace"] for o in objects} == {"shop"}


def test_build_refuses_a_definition_whose_case_fails(tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all((EXAMPLES / "web-app.yaml").read_text()))
    documents[0]["spec"]["tests"][0]["expect"][0]["spec"]["replicas"] = 3
    (tmp_path / "defs.yaml").write_text(yaml.safe_dump_all(documents))
    result = CliRunner().invoke(main, ["build", "--definitions", str(tmp_path), str(APP)])
    assert result.exit_code == 1
    assert result.output == (f"Error: reading definitions {str(tmp_path)!r}: ComponentDefinition web-app@v1: "
                             'spec.tests[0] "defaults": expect[0].spec.replicas: expected 3, got 2\n')


def test_without_definitions_a_defined_type_is_unknown() -> None:
    result = CliRunner().invoke(main, ["build", str(APP)])
    assert result.exit_code == 1
    assert 'unknown type "web-app@v1"' in result.output


def test_schema_publishes_a_definitions_parameters() -> None:
    result = CliRunner().invoke(main, ["schema", "--definitions", str(EXAMPLES), "web-app"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[:3] == ["component web-app (v1): properties", "",
                                              "NAME      TYPE     REQUIRED  DEFAULT  DESCRIPTION"]
    assert "image     string   yes                The container image." in result.output
