"""Secrets a component gets from elsewhere: the ``certificate`` and ``external-secret`` traits.

``cert_private_key`` (a Certificate's ``privateKey`` block), ``es_data``/``es_target``/
``es_wiring`` (what an ExternalSecret fetches, the Secret it produces and how that is wired
into the workload), ``named_ref`` (``{name, kind}`` references with a default kind) and
``envvar_names`` (Kubernetes' ``IsEnvVarName``).
"""
