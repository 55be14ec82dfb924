"""Operator instances as host processes (``oam-operator run``), one Lease between them.

Each instance's user agent names it (``POD_NAME``), so the audit log says which one wrote what.
The process itself is ``tools.operatorprocess.OperatorProcess``, the one harness; an instance adds
the memory samples the report plots.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.operatorprocess import OperatorProcess

__all__ = ["SHORT_LEASE", "Instance", "launch", "writer_of"]

#: lease duration / renew deadline / retry period short enough for a run to see many take-overs
SHORT_LEASE = ("--leader-election-lease-duration", "6s", "--leader-election-renew-deadline", "4s",
               "--leader-election-retry-period", "1s")
AGENT_PREFIX = "oam-operator/"


def writer_of(agent: str) -> str | None:
    """The instance (``POD_NAME``) an audit event's user agent names, or None for another client."""
    if not agent.startswith(AGENT_PREFIX):
        return None
    return agent.rsplit("(", 1)[-1].rstrip(")")


@dataclass
class Instance(OperatorProcess):
    """An operator process of the run, with its resident-set samples."""

    rss: list[tuple[float, int]] = field(default_factory=list)  # (time, bytes) samples

    def sample_rss(self) -> int | None:
        """The process's resident set in bytes (``/proc``), recorded in ``rss``."""
        value = self.rss_bytes()
        if value is not None:
            self.rss.append((time.time(), value))
        return value


def launch(name: str, kubeconfig: str, namespace: str, log_dir: Path, lease: tuple[str, ...] = SHORT_LEASE,
           extra: tuple[str, ...] = (), ready_timeout: float = 60.0) -> Instance:
    """Start an instance watching ``namespace`` (its Lease there too) and wait until its metrics and
    health endpoints answer; ``NotServing`` (a ``RuntimeError``) with the log's tail if it exits
    first or does not serve in time (then it is stopped)."""
    instance = Instance.start(log_dir / f"{name}.log", kubeconfig=kubeconfig, namespaces=[namespace],
                              operator_namespace=namespace, name=name, append=True,
                              extra=["--use-operator-identity", "--default-profile", "", *lease, *extra])
    return instance.wait_serving(ready_timeout)
