"""The engine of the transform: dispatch to handlers, lowering, ordering, the bundle tree.

``handlers`` (the interfaces and base classes a catalog type implements), ``registry`` (how
built-in types declare themselves), ``transformer`` (registries, dispatch and ``transform()``),
``lowering`` (lowering rules: one type rewritten into others), ``capabilities`` (capability
resolution at a trait), ``ordering`` (dependency + tier graph → levels → groups), ``sources``
(generated Flux sources shared by components), ``labels`` and ``object_names`` (what every
generated object carries and what the API server would refuse), ``tree`` (the bundle tree
handed back) and ``release_order`` (the order ``build`` prints objects in). Knows no
component or trait type by name: those live in ``catalog``.
"""
