"""Built-in trait types and trait lowering rules, one module per type (transform.md §10).

Each type module defines ``register(registrar)``; :func:`register_builtin_traits` finds them
all. Modules without ``register`` are helpers: ``_common`` (sub-application and decoration
building blocks), ``_routing``/``_route_filters`` (shared by ``ingress`` and ``httproute``),
``_workloads`` (pod specs of generated workloads) and ``netpol`` (the traffic-source
NetworkPolicy synthesis of §10.16, called by the transform after every trait is applied).
A trait type of the allow-list that no module registers yet is refused by the transform as
not implemented; ``fluxcd-patches``/``fluxcd-postbuild`` never get a handler and are refused
with the delivery hint (§10.17).
"""

from __future__ import annotations

from oam_operator.oam.engine.registry import Registrar, register_modules


def register_builtin_traits(registrar: Registrar) -> None:
    register_modules(__name__, __path__, registrar)
