"""Operator instances as host processes (``oam-operator run``), one Lease between them.

Each instance's user agent names it (``POD_NAME``), so the audit log says which one wrote what.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SHORT_LEASE", "Instance", "free_port", "launch", "writer_of"]

ROOT = Path(__file__).resolve().parents[2]
#: lease duration / renew deadline / retry period short enough for a run to see many take-overs
SHORT_LEASE = ("--leader-election-lease-duration", "6s", "--leader-election-renew-deadline", "4s",
               "--leader-election-retry-period", "1s")
AGENT_PREFIX = "oam-operator/"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def writer_of(agent: str) -> str | None:
    """The instance (``POD_NAME``) an audit event's user agent names, or None for another client."""
    if not agent.startswith(AGENT_PREFIX):
        return None
    return agent.rsplit("(", 1)[-1].rstrip(")")


@dataclass
class Instance:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int
    health_port: int
    stopped: bool = False  # SIGSTOPped by the run
    rss: list[tuple[float, int]] = field(default_factory=list)  # (time, bytes) samples

    def alive(self) -> bool:
        return self.process.poll() is None

    def leader_gauge(self) -> float | None:
        try:
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                    f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=2) as response:
                text = response.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("oam_operator_leader{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def sample_rss(self) -> int | None:
        """The process's resident set in bytes (``/proc``), recorded in ``rss``."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    value = int(line.split()[1]) * 1024
                    self.rss.append((time.time(), value))
                    return value
        except OSError:
            return None
        return None

    def logs(self) -> list[dict[str, Any]]:
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)
        self.stopped = True

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.stopped = False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def launch(name: str, kubeconfig: str, namespace: str, log_dir: Path, lease: tuple[str, ...] = SHORT_LEASE,
           extra: tuple[str, ...] = (), ready_timeout: float = 60.0) -> Instance:
    """Start an instance watching ``namespace`` (its Lease there too) and wait until its metrics and
    health endpoints answer; ``RuntimeError`` with the log's tail if it exits first."""
    metrics_port, health_port = free_port(), free_port()
    log_path = log_dir / f"{name}.log"
    args = [str(Path(sys.executable).parent / "oam-operator"), "run", "--kubeconfig", kubeconfig,
            "--namespace", namespace, "--operator-namespace", namespace, "--metrics-port", str(metrics_port),
            "--health-port", str(health_port), "--log-format", "json", "--use-operator-identity",
            "--default-profile", "", *lease, *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAM_OPERATOR_")}
    env["POD_NAME"] = name
    with log_path.open("ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    instance = Instance(name, process, log_path, metrics_port, health_port)
    deadline = time.monotonic() + ready_timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        if instance.leader_gauge() is not None and _healthy(health_port):
            return instance
        if time.monotonic() > deadline:
            instance.stop()
            raise RuntimeError(f"{name} did not serve its metrics and health within {ready_timeout:.0f} s")
        time.sleep(0.25)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return int(response.status) == 200
    except OSError:
        return False
