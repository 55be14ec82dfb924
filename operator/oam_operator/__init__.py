"""oam-operator: deploys OAM-style Application resources onto Kubernetes in ordered waves.

Subpackages (DESIGN.md §3): ``oam`` (the pure transform), ``reconciler`` (the object
reconciler), ``controller`` (the kopf driver), ``api`` (the CRD models).
"""

__version__ = "0.1.0"
