"""kurel package parameters (docs/transform.md#package-parameters):
the package, supplied values, resolution, substitution."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from oam_operator.oam import ParseError, ValidationError
from oam_operator.oam.document.params import (
    Package,
    Parameter,
    parse_package,
    parse_set,
    parse_values,
    resolve_parameters,
    substitute,
    yaml_double_quoted,
)
from oam_operator.oam.errors import ParameterError


def package_text(*parameters: dict[str, Any], **envelope: Any) -> str:
    doc: dict[str, Any] = {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "Package",
        "metadata": {"name": "simple", "version": "1.0.0"},
        "spec": {"parameters": list(parameters)},
    }
    doc.update(envelope)
    return yaml.safe_dump(doc, sort_keys=False)


def pkg(*parameters: Parameter) -> Package:
    return Package("launcher.gokure.dev/v1alpha1", "Package", "p", parameters=list(parameters))


# ---------------------------------------------------------------------------------------------
# The package (docs/transform.md#package-parameters)


def test_parse_package() -> None:
    text = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Package
metadata: {name: simple, version: 1.0, description: A package}
spec:
  parameters:
    - name: image
      type: string
      required: true
    - name: replicas
      type: integer
      default: 1
      description: Pod count
"""
    package = parse_package(text)
    assert (package.name, package.version, package.description) == ("simple", "1.0", "A package")
    assert package.parameters == [
        Parameter("image", "string", required=True),
        Parameter("replicas", "integer", default=1, description="Pod count"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            package_text({"name": "a", "type": "string", "secret": True, "alias": "b"}),
            'parse error in Package at line 11: kurel parameter: unsupported field "alias" (allowed: default, description, name, required, type)',
        ),
        (package_text(spec={"params": []}), 'parse error in Package at line 7: unknown field "params" in spec'),
        (
            package_text(metadata={"name": "a", "labels": {}}),
            'parse error in Package at line 5: unknown field "labels" in metadata',
        ),
        (
            package_text({"name": "a", "type": "string", "required": "yes"}),
            "parse error in Package at line 10: parameters[0].required: expected a boolean, got string",
        ),
        ("", "parse error in Package: no documents found"),
    ],
)
def test_package_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_package(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            package_text(apiVersion="v1"),
            'unsupported apiVersion "v1", expected "oam-operator.dev/v1alpha1" or "launcher.gokure.dev/v1alpha1"',
        ),
        (package_text(kind="Application"), 'expected kind Package, got "Application"'),
        (package_text(metadata={"version": "1"}), "metadata.name is required"),
        (package_text({"type": "string"}), "parameters[0].name is required"),
        (
            package_text({"name": "a", "type": "string"}, {"name": "a", "type": "integer"}),
            'duplicate parameter name "a"',
        ),
        (
            package_text({"name": "a", "type": "int"}),
            'parameter "a" has invalid type "int"; supported types: string, integer, boolean',
        ),
        (package_text({"name": "a"}), 'parameter "a" has invalid type ""; supported types: string, integer, boolean'),
        (
            package_text({"name": "a", "type": "integer", "default": "ten"}),
            'parameter "a" has default "ten" which is not a valid integer',
        ),
        (
            package_text({"name": "a", "type": "boolean", "default": "yes"}),
            'parameter "a" has default "yes" which is not a valid boolean (use true or false)',
        ),
        (
            package_text({"name": "a", "type": "integer", "default": 1.5}),
            'parameter "a" has fractional default 1.5; integer parameters require whole numbers',
        ),
        (
            package_text({"name": "a", "type": "integer", "default": True}),
            'parameter "a" (type integer) has default of type bool; expected a whole number',
        ),
        (
            package_text({"name": "a", "type": "integer", "default": [1]}),
            'parameter "a" (type integer) has default of type []interface {}; expected a whole number',
        ),
        (
            package_text({"name": "a", "type": "boolean", "default": 1}),
            'parameter "a" (type boolean) has default of type int; expected true or false',
        ),
        (
            package_text({"name": "a", "type": "string", "default": {"k": "v"}}),
            'parameter "a" (type string) has default of type map[string]interface {}; expected a string scalar value',
        ),
    ],
)
def test_package_validation(text: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_package(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "parameter",
    [
        {"name": "a", "type": "integer", "default": "${b}"},
        {"name": "a", "type": "integer", "default": 2.0},
        {"name": "a", "type": "integer", "default": "-3"},
        {"name": "a", "type": "boolean", "default": "T"},
        {"name": "a", "type": "string", "default": 5},
        {"name": "a", "type": "string", "default": None},
    ],
)
def test_package_accepts_defaults_that_fit(parameter: dict[str, Any]) -> None:
    assert parse_package(package_text(parameter)).parameters == [Parameter(**parameter)]  # kept as written


# ---------------------------------------------------------------------------------------------
# Supplied values (docs/transform.md#package-parameters)


def test_values_file() -> None:
    assert parse_values("image: x\nreplicas: 2\n", "v.yaml") == {"image": "x", "replicas": 2}
    assert parse_values("", "v.yaml") == {}
    assert parse_values("# nothing\n", "v.yaml") == {}
    with pytest.raises(ValidationError) as info:
        parse_values("- a\n", "v.yaml")
    assert str(info.value) == 'values file "v.yaml" must be a YAML mapping (key: value pairs), got []interface {}'
    with pytest.raises(ValidationError) as info:
        parse_values("plain\n", "v.yaml")
    assert str(info.value) == 'values file "v.yaml" must be a YAML mapping (key: value pairs), got string'
    with pytest.raises(ValidationError) as info:
        parse_values("a: [\n", "v.yaml")
    assert str(info.value).startswith('parsing values file "v.yaml": line 2: ')


def test_set_flags() -> None:
    assert parse_set(["a=1", "b=x=y", "a=2", "c="]) == {"a": "2", "b": "x=y", "c": ""}
    with pytest.raises(ValidationError) as info:
        parse_set(["a=1", "image"])
    assert str(info.value) == '--set "image": expected key=value format'


# ---------------------------------------------------------------------------------------------
# Resolution (docs/transform.md#package-parameters)


def test_coercion_promotes_supplied_values() -> None:
    package = pkg(Parameter("n", "integer"), Parameter("b", "boolean"), Parameter("s", "string"))
    assert resolve_parameters(package, {"n": "42", "b": "t", "s": 1.5}) == {"n": 42, "b": True, "s": "1.5"}
    assert resolve_parameters(package, {"n": 3.0, "b": False, "s": True}) == {"n": 3, "b": False, "s": "true"}
    assert resolve_parameters(package, {"n": "-7", "b": "0", "s": 10}) == {"n": -7, "b": False, "s": "10"}


@pytest.mark.parametrize(
    ("supplied", "message"),
    [
        ({"n": "4.0"}, 'parameter "n" (type integer): "4.0" is not a valid integer'),
        ({"n": " 4"}, 'parameter "n" (type integer): " 4" is not a valid integer'),
        ({"n": "1_000"}, 'parameter "n" (type integer): "1_000" is not a valid integer'),
        ({"n": 2.5}, 'parameter "n" (type integer): 2.5 is not a valid integer (fractional values are not allowed)'),
        ({"n": True}, 'parameter "n" (type integer): cannot coerce bool to integer'),
        ({"n": None}, 'parameter "n" (type integer): cannot coerce <nil> to integer'),
        ({"n": [1]}, 'parameter "n" (type integer): cannot coerce []interface {} to integer'),
        ({"b": "yes"}, 'parameter "b" (type boolean): "yes" is not a valid boolean (use true or false)'),
        ({"b": 1}, 'parameter "b" (type boolean): cannot coerce int to boolean'),
        ({"s": None}, 'parameter "s" (type string): null is not a valid string value'),
        ({"s": {"a": 1}}, 'parameter "s" (type string): got map[string]interface {}, expected a string scalar value'),
        ({"zz": 1, "n": "x"}, 'parameter "n" (type integer): "x" is not a valid integer'),
        ({"a": 1, "zz": 1}, 'parameter "a" is not declared in kurel.yaml'),
        ({}, 'required parameter "r" is not set; provide it with --values or --set'),
    ],
)
def test_resolution_errors(supplied: dict[str, Any], message: str) -> None:
    package = pkg(
        Parameter("n", "integer"),
        Parameter("b", "boolean"),
        Parameter("s", "string"),
        Parameter("r", "string", required=True),
    )
    if "r" not in supplied and supplied:
        supplied = {**supplied, "r": "x"}
    with pytest.raises(ParameterError) as info:
        resolve_parameters(package, supplied)
    assert str(info.value) == message


def test_defaults_resolve_in_declaration_order_and_may_reference_values() -> None:
    package = pkg(
        Parameter("registry", "string", default="registry.local"),
        Parameter("image", "string", default="${registry}/app:${tag}"),
        Parameter("tag", "string", required=True),
        Parameter("replicas", "integer", default=2),
        Parameter("max", "integer", default="${replicas}"),
        Parameter("debug", "boolean", default="false"),
        Parameter("ha", "boolean", default="${debug}"),
        Parameter("count", "integer", default=3.0),
    )
    assert resolve_parameters(package, {"tag": "v1"}) == {
        "tag": "v1",
        "registry": "registry.local",
        "image": "registry.local/app:v1",
        "replicas": 2,
        "max": 2,
        "debug": False,
        "ha": False,
        "count": 3,
    }


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (
            [Parameter("a", "string", default="${b}"), Parameter("b", "string", default="x")],
            'default for parameter "a" references "b" which has no value yet; only earlier parameters may be referenced in defaults',
        ),
        (
            [Parameter("a", "string", default="x"), Parameter("n", "integer", default="${a}0")],
            'default for parameter "n" resolved to "x0" which is not a valid integer',
        ),
        (
            [Parameter("a", "string", default="maybe"), Parameter("b", "boolean", default="${a}")],
            'default for parameter "b" resolved to "maybe" which is not a valid boolean (use true or false)',
        ),
    ],
)
def test_default_resolution_errors(parameters: list[Parameter], message: str) -> None:
    with pytest.raises(ParameterError) as info:
        resolve_parameters(pkg(*parameters), {})
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# Substitution (docs/transform.md#package-parameters)

PACKAGE = pkg(
    Parameter("image", "string"),
    Parameter("replicas", "integer"),
    Parameter("debug", "boolean"),
    Parameter("version", "string"),
    Parameter("unset", "string"),
)
VALUES = {"image": "registry/app:v1", "replicas": 2, "debug": True, "version": "123"}


def test_whole_placeholders_take_the_typed_value() -> None:
    text = 'a: "${image}"\nb: ${replicas}\nc: ${debug}\nd: ${version}\ne: ["${replicas}", "${debug}"]\n'
    assert yaml.safe_load(substitute(text, PACKAGE, VALUES)) == {
        "a": "registry/app:v1",
        "b": 2,
        "c": True,
        "d": "123",
        "e": [2, True],
    }


def test_inline_placeholders_make_strings() -> None:
    text = "a: x-${replicas}-${debug}\nb: '${image} and ${version}'\nc: |\n  image ${image}\n  n ${replicas}\nd: 1\n"
    out = substitute(text, PACKAGE, VALUES)
    assert yaml.safe_load(out) == {
        "a": "x-2-true",
        "b": "registry/app:v1 and 123",
        "c": "image registry/app:v1\nn 2\n",
        "d": 1,
    }
    assert out.count("\n") == text.count("\n")  # lines stay where they were


def test_keys_comments_and_unknown_syntax_are_left_alone() -> None:
    text = "${image}: 1  # ${nope}\nb: $image\nc: ${}\nd: plain\n"
    assert substitute(text, PACKAGE, VALUES) == text


def test_aliases_and_nested_values() -> None:
    text = 'a: &x\n  - ${replicas}\n  - {k: "${image}"}\nb: *x\n'
    assert yaml.safe_load(substitute(text, PACKAGE, VALUES)) == {
        "a": [2, {"k": "registry/app:v1"}],
        "b": [2, {"k": "registry/app:v1"}],
    }


def test_substituted_strings_are_quoted_safely() -> None:
    tricky = 'a "quoted" \\ value: #x\n\ttab \x01 \x7f é'
    out = substitute("v: ${image}\n", pkg(Parameter("image", "string")), {"image": tricky})
    assert yaml.safe_load(out) == {"v": tricky}
    assert yaml.safe_load("v: " + yaml_double_quoted("null")) == {"v": "null"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: ${nope}\n", 'undeclared parameter "nope" referenced in application template'),
        ('a: [x, "pre-${unset}"]\n', 'parameter "unset" has no value; set it with --values or --set'),
        ("a: ${image}\nb: ${unset} ${nope}\n", 'parameter "unset" has no value; set it with --values or --set'),
    ],
)
def test_substitution_errors(text: str, message: str) -> None:
    with pytest.raises(ParameterError) as info:
        substitute(text, PACKAGE, VALUES)
    assert str(info.value) == message


def test_invalid_yaml_is_left_for_the_parser() -> None:
    assert substitute("a: [${image}\n", PACKAGE, VALUES) == "a: [${image}\n"
