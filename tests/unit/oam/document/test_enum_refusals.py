"""One wording for a value outside a set, across the whole catalog (issue 44,
docs/transform.md#refusing-a-value-outside-a-set).

Every enum of every built-in component, trait and policy schema refuses a near miss with
``<path>: unknown <name> "<v>" (valid: …); did you mean "<x>"?`` and a far one without the
suggestion. Before, the same mistake read ``value infras not in allowed set [infra services apps]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from oam_operator.oam import new_builtin_transformer
from oam_operator.oam.document.schema import PropertySchema, check_value
from oam_operator.oam.errors import PropertyError
from oam_operator.oam.formatting.choices import closest, unknown_value
from oam_operator.operatorpolicies import register_operator_policies


def _enums(node: PropertySchema, path: str) -> Iterator[tuple[str, PropertySchema]]:
    if node.enum is not None:
        yield path, node
    for key, child in sorted((node.properties or {}).items()):
        yield from _enums(child, f"{path}.{key}")
    if node.items is not None:
        yield from _enums(node.items, f"{path}[0]")


def _catalog() -> list[Any]:
    schemas = register_operator_policies(new_builtin_transformer()).handler_schemas()
    params = []
    for family in ("components", "traits", "policies"):
        for type_name, fields in sorted(getattr(schemas, family).items()):
            for key, node in sorted(fields.items()):
                for path, enum_node in _enums(node, f"properties.{key}"):
                    params.append(pytest.param(path, enum_node, id=f"{family}/{type_name}/{path}"))
    return params


CATALOG = _catalog()


def _noun(path: str) -> str:
    last = path.rsplit(".", 1)[-1]
    return "value" if last.endswith("]") else last


def _refusal(node: PropertySchema, value: Any, path: str) -> str:
    with pytest.raises(PropertyError) as refused:
        check_value(node, value, path)
    return str(refused.value)


def test_the_catalog_has_enums_to_check() -> None:
    paths = {param.id for param in CATALOG}
    assert len(paths) >= 20
    assert "policies/placement/properties.tier" in paths
    assert "components/cronjob/properties.restartPolicy" in paths


@pytest.mark.parametrize(("path", "node"), CATALOG)
def test_a_near_miss_is_refused_with_the_valid_values_and_a_suggestion(path: str, node: PropertySchema) -> None:
    assert node.enum is not None
    valid = ", ".join(str(v) for v in node.enum)
    first = node.enum[0]
    if isinstance(first, str):
        near = first.upper() if first != first.upper() else first.lower()
        assert _refusal(node, near, path) == (
            f'{path}: unknown {_noun(path)} "{near}" (valid: {valid}); did you mean "{first}"?')
        far = "zz-not-one-of-them"
        assert _refusal(node, far, path) == f'{path}: unknown {_noun(path)} "{far}" (valid: {valid})'
    else:
        outside = max(node.enum) + 1
        assert _refusal(node, outside, path) == f"{path}: unknown {_noun(path)} {outside} (valid: {valid})"


@pytest.mark.parametrize(("value", "valid", "expected"), [
    ("infras", ("infra", "services", "apps"), "infra"),
    ("Webservice", ("webservice", "worker"), "webservice"),  # case only: always
    ("edge", ("infra", "services", "apps"), None),
    ("ingres", ("ingress", "httproute"), "ingress"),
    (3, (1, 2), None),  # numbers are not suggested
])
def test_the_suggestion_is_the_close_one_only(value: Any, valid: tuple[Any, ...], expected: Any) -> None:
    assert closest(value, valid) == expected


def test_the_wording() -> None:
    assert unknown_value("tier", "infras", ["infra", "services", "apps"]) == (
        'unknown tier "infras" (valid: infra, services, apps); did you mean "infra"?')
    assert unknown_value("statusCode", 300, [301, 302]) == "unknown statusCode 300 (valid: 301, 302)"
    assert unknown_value("kind", 'a"b', ["x"]) == 'unknown kind "a\\"b" (valid: x)'  # quoted as Go quotes
