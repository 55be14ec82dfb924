"""A definition's test cases, run when it is admitted (docs/definitions.md#test-cases).

A case gives parameters and either the objects expected or the exact error; the first
difference is reported with the case's name and the field path, so the platform team reads
what to fix without running anything.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.definitions.model import TRAIT_KIND, Definition
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote

#: The context every test case renders in.
TEST_CONTEXT = {"componentName": "test", "namespace": "test"}


def run_tests(definition: Definition) -> None:
    """Raise ``OamError`` naming the first failing case and the field path where it differs."""
    for i, case in enumerate(definition.tests):
        where = f"spec.tests[{i}] {go_quote(case.name)}"
        try:
            rendered = rendered_for_test(definition, case.parameters)
        except OamError as exc:
            if case.error is None:
                raise OamError(f"{where}: unexpected error: {exc.message}") from None
            if exc.message != case.error:
                raise OamError(f"{where}: expected error {go_quote(case.error)}, got {go_quote(exc.message)}") from None
            continue
        if case.error is not None:
            raise OamError(f"{where}: expected error {go_quote(case.error)}, got objects")
        difference = first_difference(case.expect, rendered, "expect")
        if difference is not None:
            raise OamError(f"{where}: {difference}")


def rendered_for_test(definition: Definition, parameters: dict[str, Any]) -> list[Any]:
    """The objects, then (for a trait) the patches as ``{apiVersion, kind, patch}`` entries."""
    objects: list[Any] = definition.render(parameters, TEST_CONTEXT, "parameters")
    if definition.kind == TRAIT_KIND:
        objects += [{"apiVersion": a, "kind": k, "patch": p}
                    for a, k, p in definition.render_patches(parameters, TEST_CONTEXT, "parameters")]
    return objects


def first_difference(expected: Any, actual: Any, path: str) -> str | None:
    """``<path>: expected <x>, got <y>`` at the first place the two differ, else ``None``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{path}.{key}: expected {_show(expected[key])}, got nothing"
            if key not in expected:
                return f"{path}.{key}: not expected, got {_show(actual[key])}"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, f"{path}[{i}]")
            if found is not None:
                return found
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{path}: expected {_show(expected)}, got {_show(actual)}"
    return None


def _show(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)
