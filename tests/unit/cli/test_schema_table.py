"""``oam-operator schema TYPE`` prints a table of the type's properties, as ``vela show`` does
(issue 44: 1,582 lines of JSON Schema for webservice); ``-o json`` keeps the JSON Schema."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.cli.schematable import render_table, rows_of
from oam_operator.oam.document.schema import PropertySchema


def schema(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["schema", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


def test_a_type_without_its_family_prints_its_properties_as_a_table() -> None:
    code, out, err = schema("placement")
    assert (code, err) == (0, "")
    assert out == (
        "policy placement (v1alpha1): properties\n"
        "\n"
        "NAME       TYPE    REQUIRED  DEFAULT  DESCRIPTION\n"
        "component  string  yes                Name of the component whose tier classification is being\n"
        "                                      overridden.\n"
        "tier       string  yes                Deployment tier to place the component in, overriding\n"
        "                                      automatic classification. Valid: infra, services, apps.\n"
    )
    assert schema("policy", "placement") == (code, out, err)


def test_webservice_is_a_table_of_a_readable_length() -> None:
    code, out, _ = schema("webservice")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "component webservice (v1alpha1): properties"
    assert lines[2].split() == ["NAME", "TYPE", "REQUIRED", "DEFAULT", "DESCRIPTION"]
    assert any(line.startswith("image ") and " string " in line and " yes " in line for line in lines)
    assert any(line.startswith("  name ") for line in lines)  # env's items' name, under env
    assert len(lines) < 250 and max(map(len, lines)) <= 100
    assert " ".join(lines[-2:]).endswith("are not shown: --depth 0 shows every one, -o json the JSON Schema.")
    full = schema("webservice", "--depth", "0")[1]
    assert "are not shown" not in full and len(full.splitlines()) > len(lines)


def test_the_json_schema_is_behind_o_json() -> None:
    code, out, _ = schema("webservice", "-o", "json")
    document = json.loads(out)
    assert code == 0 and document["type"] == "webservice"
    assert document["schema"]["properties"]["image"]["type"] == "string"


def test_without_a_type_it_lists_the_types() -> None:
    code, out, _ = schema("trait")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == ["TYPE", "FAMILY", "PROPERTIES"]
    assert any(line.split()[:2] == ["ingress", "trait"] for line in lines)
    assert lines[-1] == "oam-operator schema TYPE prints a type's properties; -o json their JSON Schemas."


def test_an_unknown_type_is_refused_with_a_suggestion() -> None:
    code, out, err = schema("webservis")
    assert (code, out) == (1, "")
    assert err.startswith('Error: unknown family or type "webservis" (valid: app-dependency, certificate, ')
    assert err.endswith('webservice, worker); did you mean "webservice"?\n')


def test_rows_fold_array_elements_and_indent_nested_properties() -> None:
    fields = {
        "ports": PropertySchema(type="array", description="Ports.", items=PropertySchema(
            type="object", properties={"port": PropertySchema(type="integer", required=True, description="Port.")})),
        "mode": PropertySchema(type="string", default="a", enum=["a", "b"], description="Mode."),
    }
    assert render_table("t", rows_of(fields), 80) == (
        "t\n\n"
        "NAME    TYPE      REQUIRED  DEFAULT  DESCRIPTION\n"
        "mode    string              a        Mode. Valid: a, b.\n"
        "ports   []object                     Ports.\n"
        "  port  integer   yes                Port.\n"
    )
    assert render_table("t", rows_of(fields), 80, depth=1).endswith(
        "\n1 nested properties below level 1 are not shown: --depth 0 shows every one, -o\njson the JSON Schema.\n")
