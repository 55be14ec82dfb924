"""The local Kubernetes control plane for tests and the demo (docs/devcluster.md)."""

from .devcluster import (
    Binaries,
    BinariesMissing,
    ClusterHandle,
    ControlPlane,
    DevclusterError,
    StartupError,
    attach,
    find_binaries,
    reap_stale,
    start,
)

__all__ = [
    "Binaries",
    "BinariesMissing",
    "ClusterHandle",
    "ControlPlane",
    "DevclusterError",
    "StartupError",
    "attach",
    "find_binaries",
    "reap_stale",
    "start",
]
