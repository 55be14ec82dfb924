"""Building blocks shared by the built-in traits (docs/transform.md#common-trait-rules,
docs/transform.md#trait-handlers).

A trait adds sub-applications (objects after the component's own, docs/transform.md#order-of-objects) or decorates the
component by wrapping its config. The wrapper forwards every optional method of the wrapped
config (``service_port``, ``backend_service_name``, …) so later traits and the engine still see
what the component offers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from oam_operator.oam.engine.handlers import ComponentConfig, Object
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

Decoration = Callable[[list[Object]], None]


class FixedObjects:
    """A trait sub-application whose objects are known when the trait is applied."""

    def __init__(self, objects: list[Object]) -> None:
        self.objects = objects

    def generate(self, app: TreeApplication) -> list[Object]:
        return self.objects


class Decorated:
    """A component config whose generated objects are modified after the wrapped config made them.

    Decorators chain in trait order: the wrapper of the first trait is innermost, so its
    modification is applied first (docs/transform.md#trait-handlers).
    """

    def __init__(self, inner: ComponentConfig, decoration: Decoration) -> None:
        self.inner = inner
        self.decoration = decoration

    def generate(self, app: TreeApplication) -> list[Object]:
        objects = self.inner.generate(app)
        self.decoration(objects)
        return objects

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes the wrapper lacks: the wrapped config's optional methods.
        if name in ("inner", "decoration"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def decorate(app: TreeApplication, decoration: Decoration) -> None:
    app.config = Decorated(app.config, decoration)


def app_labels(component: str) -> dict[str, str]:
    return {"app": component}


def metadata(name: str, namespace: str | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return meta


def sub_application_name(props: dict[str, Any], component: str, suffix: str) -> str:
    """``name`` if set, else ``C-<suffix>-<scope>`` with a ``scope``, else ``C-<suffix>``
    (docs/transform.md#common-trait-rules)."""
    name = props.get("name")
    if isinstance(name, str) and name:
        return name
    scope = props.get("scope")
    if isinstance(scope, str) and scope:
        return f"{component}-{suffix}-{scope}"
    return f"{component}-{suffix}"


def whole_number(value: Any) -> int | None:
    """An integer, or a finite float without fraction (YAML ``8080.0``); ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def port_number(value: Any) -> int | None:
    """A port number in 1–65535, else ``None``."""
    port = whole_number(value)
    return port if port is not None and 1 <= port <= 65535 else None


def stringify_map(value: dict[str, Any]) -> dict[str, str]:
    """Values rendered as Go's ``%v`` does (annotations, ConfigMap data, labels;
    docs/transform.md#certificates-secrets-and-configuration)."""
    return {str(k): go_value(v) for k, v in value.items()}


def refuse_rendering_keys(trait_type: str, rendering: dict[str, Any], allowed: Iterable[str]) -> None:
    """A rendering may hold only the trait's declared rendering keys (docs/transform.md#evaluating-a-profile)."""
    declared = sorted(allowed)
    for key in sorted(rendering):
        if key not in declared:
            listed = ", ".join(declared) or "(none)"
            raise ValidationError(f"{trait_type} rendering: unsupported field {go_quote(key)} (allowed: {listed})")
