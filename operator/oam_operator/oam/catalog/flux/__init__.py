"""Component types delivered as Flux objects: ``helm`` (alias ``helmchart``) and ``oci``.

``flux_sources`` builds the Flux source objects (shared between consumers by the engine),
``helm_settings`` reads a helm component's properties, ``helm_release`` builds its configs and
``helm_renderer`` is the default ``ChartRenderer`` (the ``helm`` binary).
"""
