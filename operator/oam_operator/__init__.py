"""oam-operator: deploys OAM-style Application resources onto Kubernetes in ordered waves.

Subpackages (docs/architecture.md#rooms-and-dependency-direction): ``oam`` (the pure transform), ``reconciler`` (the
object
reconciler), ``controller`` (the kopf driver), ``api`` (the CRD models).
"""

__version__ = "0.1.0"
