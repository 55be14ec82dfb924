"""Component types that emit objects as written: ``passthrough``, ``manifests`` and ``crd``.

``manifest_source`` reads inline YAML or a URL for ``manifests`` and ``crd``.
"""
