"""Discovery of the built-in handler modules (one module per type).

A built-in type is a module under ``components/`` or ``traits/`` that defines
``register(registrar)``; adding a type means adding its module, nothing else. Modules are
registered in sorted module-name order, so registration (and its errors) is deterministic.
Helper modules without ``register`` (shared workload code, for example) are skipped.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any, Protocol


class Registrar(Protocol):
    """The registration surface a handler module sees (implemented by ``Transformer``)."""

    def register_component(self, type_name: str, handler: Any) -> None: ...

    def register_trait(self, type_name: str, handler: Any) -> None: ...

    def register_trait_lowering(self, rule: Any) -> None: ...

    def register_component_lowering(self, rule: Any) -> None: ...


def register_modules(package: str, search_path: Iterable[str], registrar: Registrar) -> None:
    found = pkgutil.walk_packages(list(search_path), prefix=package + ".")
    for info in sorted(found, key=lambda m: m.name.rsplit(".", 1)[-1]):
        if info.ispkg or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        register = getattr(module, "register", None)
        if callable(register):
            register(registrar)
