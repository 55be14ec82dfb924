"""Built-in trait types and trait lowering rules, one module per type (transform.md §10).

Each module defines ``register(registrar)``; :func:`register_builtin_traits` finds them all.
No trait type ships in this build yet: every trait of the allow-list is refused by the
transform as not implemented yet (``fluxcd-patches``/``fluxcd-postbuild`` with the delivery
hint, as they never get a handler).
"""

from __future__ import annotations

from oam_operator.oam.registry import Registrar, register_modules


def register_builtin_traits(registrar: Registrar) -> None:
    register_modules(__name__, __path__, registrar)
