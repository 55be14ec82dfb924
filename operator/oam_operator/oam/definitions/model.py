"""A ComponentDefinition or TraitDefinition read into a compiled, renderable form
(docs/definitions.md#the-format).

Reading compiles everything: the parameter schema, every ``${…}`` of the objects and patches.
So a definition that is read has no syntax or type error left, and its test cases
(``testcases.py``) run against exactly what an Application will use.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.dns1123 import dns1123_label_errors
from oam_operator.oam.definitions.celenv import Environment
from oam_operator.oam.definitions.parameters import effective_values, read_parameters
from oam_operator.oam.definitions.template import Template
from oam_operator.oam.document.schema import PropertySchema, check_object
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.health.rules import HealthRule, HealthRuleError, read_rules

COMPONENT_KIND = "ComponentDefinition"
TRAIT_KIND = "TraitDefinition"
VERSION_PATTERN = re.compile(r"^v[1-9][0-9]*$")
#: The most ``${…}`` a definition's objects and patches may hold (docs/definitions.md#limits).
MAX_EXPRESSIONS = 1000
SPEC_KEYS = ("description", "health", "objects", "parameters", "patches", "tests", "type", "version")


class DefinitionError(OamError):
    """A definition refused when read, or a render it refuses."""


@dataclass(frozen=True)
class Patch:
    """A trait's JSON merge patch (RFC 7386) of the component's objects of one apiVersion and kind."""

    api_version: str
    kind: str
    template: Template


@dataclass(frozen=True)
class TestCase:
    name: str
    parameters: dict[str, Any]
    expect: list[dict[str, Any]] | None
    error: str | None


@dataclass(frozen=True)
class Definition:
    kind: str
    type: str
    version: str
    description: str
    parameters: dict[str, PropertySchema]
    objects: list[Template]
    patches: list[Patch] = field(default_factory=list)
    tests: list[TestCase] = field(default_factory=list)
    #: Health by expression for the kinds it renders (docs/health.md#sources).
    health: list[HealthRule] = field(default_factory=list)
    #: SHA-256 of the spec's canonical JSON: part of the digest of each Application using it
    #: (docs/definitions.md#changing-a-definition).
    digest: str = ""

    @property
    def reference(self) -> str:
        """``<type>@<version>``, how an Application pins it."""
        return f"{self.type}@{self.version}"

    def values(self, authored: Mapping[str, Any], path: str) -> dict[str, Any]:
        """The CEL variables of ``parameters.*`` after checking ``authored`` against the schema."""
        checked = check_object(self.parameters, False, dict(authored), path, True)
        return {f"parameters.{k}": v for k, v in effective_values(self.parameters, checked).items()}

    def render(self, authored: Mapping[str, Any], context: Mapping[str, str], path: str) -> list[dict[str, Any]]:
        """The added objects for ``authored`` parameters and ``context`` (appName, componentName, namespace)."""
        data = {**self.values(authored, path), **{f"context.{k}": v for k, v in context.items()}}
        return [t.render(data, f"objects[{i}]") for i, t in enumerate(self.objects)]

    def render_patches(self, authored: Mapping[str, Any], context: Mapping[str, str], path: str) -> list[
            tuple[str, str, Any]]:
        data = {**self.values(authored, path), **{f"context.{k}": v for k, v in context.items()}}
        return [(p.api_version, p.kind, p.template.render(data, f"patches[{i}].patch"))
                for i, p in enumerate(self.patches)]


def read_definition(obj: Mapping[str, Any]) -> Definition:
    """Read and compile a definition resource, or ``DefinitionError`` naming the field."""
    kind = obj.get("kind")
    if kind not in (COMPONENT_KIND, TRAIT_KIND):
        raise DefinitionError(f"kind: expected {COMPONENT_KIND} or {TRAIT_KIND}, got {go_quote(str(kind))}")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise DefinitionError("spec: required")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise DefinitionError(f"spec: unknown field {go_quote(unknown[0])}")
    type_name = spec.get("type")
    if not isinstance(type_name, str) or not type_name:
        raise DefinitionError("spec.type: required")
    errors = dns1123_label_errors(type_name)
    if errors:
        raise DefinitionError(f"spec.type: {go_quote(type_name)} is not a DNS-1123 label: {'; '.join(errors)}")
    version = spec.get("version")
    if not isinstance(version, str) or not VERSION_PATTERN.match(version):
        raise DefinitionError(f"spec.version: must be v1, v2, …, got {go_quote(str(version))}")
    name = (obj.get("metadata") or {}).get("name")
    if name != f"{type_name}.{version}":
        raise DefinitionError(
            f"metadata.name: must be {go_quote(type_name + '.' + version)} (<spec.type>.<spec.version>), "
            f"got {go_quote(str(name))}"
        )
    expressions = json.dumps([spec.get("objects"), spec.get("patches")]).count("${")
    if expressions > MAX_EXPRESSIONS:  # before compiling them: admission answers within its timeout
        raise DefinitionError(f"spec: {expressions} expressions, over the limit of {MAX_EXPRESSIONS}")
    parameters = read_parameters(spec.get("parameters"))
    env = Environment.for_parameters(parameters)
    objects = _list(spec, "objects")
    patches_raw = _list(spec, "patches")
    if kind == COMPONENT_KIND and patches_raw:
        raise DefinitionError("spec.patches: only a TraitDefinition patches objects")
    if kind == COMPONENT_KIND and not objects:
        raise DefinitionError("spec.objects: a ComponentDefinition needs at least one object")
    if kind == TRAIT_KIND and not objects and not patches_raw:
        raise DefinitionError("spec: a TraitDefinition needs objects or patches")
    templates = [Template.compile(_object(o, f"spec.objects[{i}]"), env, f"spec.objects[{i}]")
                 for i, o in enumerate(objects)]
    patches = [_patch(p, env, f"spec.patches[{i}]") for i, p in enumerate(patches_raw)]
    try:
        health = read_rules(spec.get("health"), "spec.health", f"{kind} {go_quote(str(name))}")
    except HealthRuleError as error:
        raise DefinitionError(error.message) from None
    return Definition(
        kind=kind,
        type=type_name,
        version=version,
        description=str(spec.get("description", "")),
        parameters=parameters,
        objects=templates,
        patches=patches,
        tests=[_test(t, f"spec.tests[{i}]") for i, t in enumerate(_list(spec, "tests"))],
        health=health,
        digest=hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest(),
    )


def _list(spec: Mapping[str, Any], key: str) -> list[Any]:
    value = spec.get(key) or []
    if not isinstance(value, list):
        raise DefinitionError(f"spec.{key}: expected a list")
    return value


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DefinitionError(f"{path}: expected an object")
    for key in ("apiVersion", "kind"):
        if not isinstance(value.get(key), str) or "${" in value[key]:
            raise DefinitionError(f"{path}.{key}: required, and literal (no ${{…}})")
    return value


def _patch(value: Any, env: Environment, path: str) -> Patch:
    if not isinstance(value, dict) or not isinstance(value.get("patch"), dict):
        raise DefinitionError(f"{path}: expected apiVersion, kind and patch (a map)")
    _object(value, path)
    return Patch(value["apiVersion"], value["kind"], Template.compile(value["patch"], env, f"{path}.patch"))


def _test(value: Any, path: str) -> TestCase:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        raise DefinitionError(f"{path}.name: required")
    expect, error = value.get("expect"), value.get("error")
    if (expect is None) == (error is None):
        raise DefinitionError(f"{path}: exactly one of expect (objects) or error (a message)")
    if expect is not None and not isinstance(expect, list):
        raise DefinitionError(f"{path}.expect: expected a list of objects")
    parameters = value.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise DefinitionError(f"{path}.parameters: expected a map")
    return TestCase(value["name"], parameters, expect, error if error is None else str(error))
