"""Traffic into a component: the ``ingress`` and ``httproute`` traits and the ``expose`` rule.

``backends`` resolves the backend Service shared by both routing traits, ``route_filters``
checks HTTPRoute filters and timeouts; ``expose`` is a lowering rule whose merged properties
become one ``ingress`` or ``httproute`` (``expose_lowering``), with its capability rendering
checked once per profile (``expose_rendering``).
"""
