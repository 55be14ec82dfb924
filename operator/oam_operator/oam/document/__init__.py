"""The document model: what an author writes, read and checked before any handler runs.

``loader`` (YAML with Go yaml.v3's core-schema typing), ``document`` (the ``Application`` and
``ClusterProfile`` models, decoding and validation), ``schema`` (``PropertySchema`` and the
authored-property checks), ``params`` (kurel package parameters: ``kurel.yaml``, ``--values``,
``--set``, ``${param}``) and ``names`` (Kubernetes name rules and generated-name shortening).
Depends on ``formatting`` and ``errors`` only.
"""
