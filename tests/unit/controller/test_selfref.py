"""An Application that includes itself, or one that contains it, is refused with a message."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.reconcile.selfref import self_reference

LABEL = "oam-operator.dev/component"


def app(name: str, namespace: str | None = None, component: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if component is not None:
        meta["labels"] = {LABEL: component}
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": meta, "spec": spec}


def passthrough(obj: dict[str, Any]) -> dict[str, Any]:
    return {"name": "inner", "type": "passthrough", "properties": {"object": obj}}


def test_an_application_that_creates_itself_is_refused() -> None:
    assert self_reference("shop", "a", [app("a", "shop", component="me")], LABEL) == (
        'Application shop/a includes itself: component "me" creates Application shop/a')
    assert self_reference("shop", "a", [app("a", component="me")], LABEL) is not None  # namespace defaults


def test_an_application_that_contains_it_is_refused() -> None:
    outer = app("b", "shop", component="wrap", components=[passthrough(app("a"))])
    assert self_reference("shop", "a", [outer], LABEL) == (
        'Application shop/a contains itself: component "wrap" creates Application shop/b, '
        "which contains Application shop/a")
    deeper = app("b", "shop", component="wrap",
                 components=[passthrough(app("c", components=[passthrough(app("a", "shop"))]))])
    assert self_reference("shop", "a", [deeper], LABEL) is not None


def test_other_applications_pass() -> None:
    objects = [app("a", "other"), app("b", "shop", components=[passthrough(app("a", "elsewhere"))]),
               {"apiVersion": "example.com/v1", "kind": "Application", "metadata": {"name": "a"}},
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]
    assert self_reference("shop", "a", objects, LABEL) is None
