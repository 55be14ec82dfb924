"""Definitions: the CEL environment, templates, reading, test cases and the transform's use of them
(docs/definitions.md)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.celenv import Environment, ExpressionError, static_cost
from oam_operator.oam.definitions.model import DefinitionError, read_definition
from oam_operator.oam.definitions.parameters import read_parameters
from oam_operator.oam.definitions.template import split
from oam_operator.oam.definitions.testcases import run_tests
from oam_operator.oam.document.document import application_from_object
from oam_operator.oam.engine.transformer import TransformContext, new_builtin_transformer
from oam_operator.oam.errors import OamError

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "definitions"


def component(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "topic",
        "version": "v1",
        "parameters": {"partitions": {"type": "integer", "default": 3}, "name": {"type": "string"}},
        "objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "${context.componentName}"},
                     "data": {"partitions": "${string(parameters.partitions)}", "label": "p-${parameters.partitions}"}}],
    }
    base.update(spec)
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ComponentDefinition",
            "metadata": {"name": f"{base['type']}.{base['version']}"}, "spec": base}


def env() -> Environment:
    return Environment.for_parameters(read_parameters({"n": {"type": "integer"}, "s": {"type": "string"}}))


def test_a_whole_value_keeps_its_type_and_an_embedded_one_becomes_text() -> None:
    rendered = read_definition(component()).render({"partitions": 5}, {"componentName": "c", "namespace": "ns"}, "p")
    assert rendered == [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                         "data": {"partitions": "5", "label": "p-5"}}]


def test_split_keeps_braces_and_quotes_inside_an_expression() -> None:
    assert split("a-${ {'k': '}'}['k'] }-b") == [("a-", False), (" {'k': '}'}['k'] ", True), ("-b", False)]


def test_a_type_error_is_refused_with_its_position() -> None:
    with pytest.raises(ExpressionError) as caught:
        env().compile("parameters.n + parameters.s")
    assert caught.value.message == "1:14: found no matching overload for '_+_' applied to '(int, string)'"


def test_a_syntax_error_is_refused_with_its_position() -> None:
    with pytest.raises(ExpressionError) as caught:
        env().compile("parameters.n +")
    assert caught.value.message.startswith("1:15: Syntax error: mismatched input '<EOF>'")


def test_an_undeclared_parameter_is_refused_naming_the_field() -> None:
    bad = component(objects=[{"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "${parameters.partition}"}}])
    with pytest.raises(OamError) as caught:
        read_definition(bad)
    assert caught.value.message == "spec.objects[0].data.x: 1:11: undeclared reference to 'parameters.partition' (in container '')"


def test_a_runaway_expression_is_over_the_cost_limit() -> None:
    source = "[1,2].map(a, [1,2].map(b, [1,2].map(c, a+b+c)))"
    with pytest.raises(ExpressionError) as caught:
        env().compile(source)
    assert caught.value.message == "expression cost 47047047000 exceeds the limit of 1000000"


def test_chained_macros_add_and_nested_ones_multiply() -> None:
    chained = "['a', ''].filter(x, x != '').map(x, x.upperAscii())"
    assert static_cost(chained) == len(chained) * 2000
    assert env().compile(chained).evaluate({}) == ["A"]
    assert static_cost("[1].map(a, [2].map(b, a + b))") == 29 * 1_001_000


def test_a_macro_name_inside_a_string_literal_costs_nothing() -> None:
    assert env().compile("'.map(.map(.map(' + parameters.s").evaluate({"parameters.n": 1, "parameters.s": "x"}) \
        == ".map(.map(.map(x"


def test_an_invalid_parameter_schema_is_refused() -> None:
    with pytest.raises(OamError) as caught:
        read_definition(component(parameters={"n": {"type": "int"}}))
    assert caught.value.message == 'spec.parameters.n.type: must be one of array, boolean, integer, number, object, string, got "int"'


def test_the_name_must_be_type_dot_version() -> None:
    obj = component()
    obj["metadata"]["name"] = "topic"
    with pytest.raises(DefinitionError) as caught:
        read_definition(obj)
    assert caught.value.message == 'metadata.name: must be "topic.v1" (<spec.type>.<spec.version>), got "topic"'


def test_a_failing_case_names_the_case_and_the_field_path() -> None:
    case = {"name": "five", "parameters": {"partitions": 5},
            "expect": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "test"},
                        "data": {"partitions": "6", "label": "p-5"}}]}
    with pytest.raises(OamError) as caught:
        run_tests(read_definition(component(tests=[case])))
    assert caught.value.message == 'spec.tests[0] "five": expect[0].data.partitions: expected "6", got "5"'


def test_an_expected_error_must_match_exactly() -> None:
    case = {"name": "wrong-type", "parameters": {"partitions": "many"}, "error": "nope"}
    with pytest.raises(OamError) as caught:
        run_tests(read_definition(component(tests=[case])))
    assert caught.value.message == ('spec.tests[0] "wrong-type": expected error "nope", got '
                                    '"parameters.partitions: expected integer, got string (many)"')


def test_the_example_definitions_pass_their_own_cases() -> None:
    catalog = DefinitionCatalog()
    catalog.load_directory(EXAMPLES)
    for definition in catalog.definitions():
        run_tests(definition)
    assert [d.reference for d in catalog.definitions()] == ["web-app@v1", "pod-disruption@v1"]


def test_a_builtin_type_name_is_refused() -> None:
    transformer = new_builtin_transformer()
    catalog = DefinitionCatalog(set(transformer.component_types()), set(transformer.trait_types()))
    with pytest.raises(DefinitionError) as caught:
        catalog.put(read_definition(component(type="webservice")))
    assert caught.value.message == 'spec.type: "webservice" is a built-in component type'


def transform(components: list[dict[str, Any]], catalog: DefinitionCatalog) -> list[dict[str, Any]]:
    transformer = new_builtin_transformer()
    transformer.definitions = catalog
    app = application_from_object({"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                                   "metadata": {"name": "a", "namespace": "team"},
                                   "spec": {"components": copy.deepcopy(components)}}, open_types=True)
    return transformer.transform(app, TransformContext()).objects()


def test_versions_coexist_unpinned_means_the_highest() -> None:
    catalog = DefinitionCatalog()
    catalog.put(read_definition(component()))
    v2 = component(version="v2")
    v2["spec"]["objects"][0]["data"]["label"] = "v2-${parameters.partitions}"
    catalog.put(read_definition(v2))
    pinned = transform([{"name": "t", "type": "topic@v1"}], catalog)
    latest = transform([{"name": "t", "type": "topic"}], catalog)
    assert pinned[0]["data"]["label"] == "p-3"
    assert latest[0]["data"]["label"] == "v2-3"
    assert latest[0]["metadata"]["namespace"] == "team"


def test_an_unknown_type_names_the_missing_definition() -> None:
    with pytest.raises(OamError) as caught:
        transform([{"name": "t", "type": "kafka-topic"}], DefinitionCatalog())
    assert caught.value.message == 'component "t": no definition for component type "kafka-topic"'


def test_timestamps_durations_and_types_render_as_text() -> None:
    compiled = env()
    assert compiled.compile('timestamp("2024-01-02T03:04:05Z")').evaluate({}) == "2024-01-02T03:04:05Z"
    assert compiled.compile('duration("90s")').evaluate({}) == "90s"
    assert compiled.compile("type(1)").evaluate({}) == "INT"
    assert compiled.compile("{1: b'ab'}").evaluate({}) == {"1": "ab"}


def test_a_parameter_name_must_be_a_cel_identifier() -> None:
    with pytest.raises(OamError) as caught:
        read_definition(component(parameters={"min-available": {"type": "string"}}))
    assert caught.value.message == 'spec.parameters: "min-available" is not a CEL identifier (letters, digits, _)'


def test_too_many_expressions_are_refused_before_compiling() -> None:
    many = component(objects=[{"apiVersion": "v1", "kind": "ConfigMap",
                               "data": {f"k{i}": "${parameters.name}" for i in range(1500)}}])
    with pytest.raises(DefinitionError) as caught:
        read_definition(many)
    assert caught.value.message == "spec: 1500 expressions, over the limit of 1000"


def test_health_rules_are_read_with_the_definition_as_source_and_refused_with_their_position() -> None:
    rule = {"apiVersion": "example.dev/v1", "kind": "Widget", "current": "status.ready"}
    definition = read_definition(component(health=[rule]))
    assert [(r.kind, r.source) for r in definition.health] == [("Widget", 'ComponentDefinition "topic.v1"')]
    with pytest.raises(DefinitionError) as refused:
        read_definition(component(health=[{**rule, "failed": "status.phase = 'x'"}]))
    assert refused.value.message == "spec.health[0].failed: 1:14: Syntax error: token recognition error at: '= '"
    changed = read_definition(component(health=[{**rule, "current": "status.done"}]))
    assert changed.digest != definition.digest  # its Applications run again (docs/health.md#sources)
