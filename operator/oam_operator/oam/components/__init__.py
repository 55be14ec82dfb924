"""Built-in component types, one module per type (transform.md §9).

Each type module defines ``register(registrar)``; :func:`register_builtin_components` finds
them all. This build ships ``passthrough``, ``manifests`` and ``crd`` (§9.10); the other types
of the allow-list are refused by the transform as not implemented yet.
"""

from __future__ import annotations

from oam_operator.oam.engine.registry import Registrar, register_modules


def register_builtin_components(registrar: Registrar) -> None:
    register_modules(__name__, __path__, registrar)
