"""How a built-in type declares itself: a decorator on its handler class.

``@component("webservice")``, ``@trait("ingress")`` and ``@trait_lowering("expose")`` record the
class and the type names it claims (and set them as the class's ``TYPES``, which
:class:`~oam_operator.oam.engine.handlers.BuiltinType` answers ``can_handle`` from). The catalog
imports its type modules explicitly, so the set of built-in types is written down in one place
(``oam.catalog``) rather than found by walking packages and probing modules. Registration runs
in sorted (position, type) order, so it — and any error it raises — is deterministic; a class
that claims several types (``helm``/``helmchart``) gets one instance shared by all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

__all__ = ["Declaration", "Registrar", "component", "declared", "register_declared", "trait", "trait_lowering"]

T = TypeVar("T", bound=type)


class Registrar(Protocol):
    """The registration surface of the engine (implemented by ``Transformer``)."""

    def register_component(self, type_name: str, handler: Any) -> None: ...

    def register_trait(self, type_name: str, handler: Any) -> None: ...

    def register_trait_lowering(self, rule: Any) -> None: ...

    def register_component_lowering(self, rule: Any) -> None: ...


@dataclass(frozen=True)
class Declaration:
    """One declared built-in: where it registers, the types it claims and its class."""

    position: str  # "component", "trait" or "trait-lowering"
    type_names: tuple[str, ...]
    cls: type


_DECLARED: list[Declaration] = []


def _declare(position: str, type_names: tuple[str, ...]) -> Callable[[T], T]:
    if not type_names:
        raise TypeError(f"a {position} declaration needs at least one type name")

    def decorate(cls: T) -> T:
        setattr(cls, "TYPES", type_names)  # noqa: B010 (T is any class; BuiltinType declares the attribute)
        _DECLARED.append(Declaration(position, type_names, cls))
        return cls

    return decorate


def component(*type_names: str) -> Callable[[T], T]:
    """Declare a component handler class for ``type_names``."""
    return _declare("component", type_names)


def trait(type_name: str) -> Callable[[T], T]:
    """Declare a trait handler class for ``type_name``."""
    return _declare("trait", (type_name,))


def trait_lowering(type_name: str) -> Callable[[T], T]:
    """Declare a trait lowering rule class for ``type_name``."""
    return _declare("trait-lowering", (type_name,))


def declared() -> list[Declaration]:
    """Every declaration made so far, in registration order."""
    return sorted(_DECLARED, key=lambda d: (d.position, d.type_names))


def register_declared(registrar: Registrar) -> None:
    """Register one instance of every declared class with ``registrar``."""
    for declaration in declared():
        instance = declaration.cls()
        if declaration.position == "trait-lowering":
            registrar.register_trait_lowering(instance)
            continue
        for type_name in declaration.type_names:
            if declaration.position == "component":
                registrar.register_component(type_name, instance)
            else:
                registrar.register_trait(type_name, instance)
