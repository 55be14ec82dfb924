"""oam-operator: deploys OAM-style Application resources onto Kubernetes in ordered waves.

Rooms (docs/architecture.md#rooms-and-dependency-direction): ``oam`` (the pure transform),
``reconciler`` (the object reconciler), ``controller`` (the kopf driver, its settings, metrics and
logs), ``operatorpolicies`` (the operator's own policy types), ``api`` (the CRD models),
``persisted`` (the stored types), ``common`` (standard-library helpers) and ``cli`` (the command line).
"""

__version__ = "0.1.0"
