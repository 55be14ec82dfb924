"""The operator as a host process (``oam-operator run``): the one harness of the e2e tests, the
benchmarks, the chaos runs and the demo.

- ``free_port``: a free TCP port outside the kernel's ephemeral range, for the metrics and health
  servers (and whatever else a caller serves locally);
- ``run_command``: the ``oam-operator run`` command line from keyword arguments, so every caller
  spells the flags the same way;
- ``OperatorProcess``: the started process with its log file and ports, what it serves (metrics,
  ``/healthz``, leadership) and what its JSON log says, and the signals a test sends it.

The process's environment has no ``OAM_OPERATOR_*`` variable: settings come from the command line
only, whatever the caller's shell exports.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

__all__ = ["ROOT", "NotServing", "OperatorProcess", "free_port", "installed_launcher", "run_command",
           "source_launcher"]

ROOT = Path(__file__).resolve().parents[1]
#: the log messages of a finished pass, whatever its outcome
PASS_MESSAGES = frozenset({"pass finished", "pass failed"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

MetricKey = tuple[str, frozenset[tuple[str, str]]]


def free_port() -> int:
    """A TCP port nobody listens on right now, on any address, chosen outside the kernel's
    ephemeral range.

    Why outside: a port the kernel hands out for ``bind(0)`` comes from the same range as the
    local ports of outgoing connections, so between this pick and the operator's bind any client
    connection (the operator's own, to the API server) may take it, and the operator's health or
    metrics server then fails with "address already in use". Below the range only another
    listener can take it. Falls back to the kernel's pick when no port below the range is free.
    """
    low = _ephemeral_range()[0]
    candidates = list(range(_LOWEST_PICKED_PORT, low)) if low > _LOWEST_PICKED_PORT else []
    random.shuffle(candidates)
    for port in candidates[:200]:
        with socket.socket() as sock:
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        return int(sock.getsockname()[1])


#: the lowest port ``free_port`` picks: above the well-known and most registered services' ports
_LOWEST_PICKED_PORT = 20000


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range of local ports for outgoing connections (Linux's default when unreadable)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def installed_launcher() -> list[str]:
    """The ``oam-operator`` script beside this interpreter: the checkout's operator, installed
    into the virtual environment."""
    return [str(Path(sys.executable).parent / "oam-operator")]


def source_launcher() -> list[str]:
    """This interpreter running ``oam_operator.cli.main``: whichever ``oam_operator`` comes first
    on ``PYTHONPATH`` (another release's ``operator/``, say) rather than the installed one."""
    return [sys.executable, "-c",
            "import sys; from oam_operator.cli import main; sys.argv[0] = 'oam-operator'; main()"]


def run_command(*, kubeconfig: str, metrics_port: int, health_port: int, namespaces: Iterable[str] = (),
                operator_namespace: str | None = None, log_format: str | None = "json",
                extra: Iterable[str] = (), launcher: Sequence[str] | None = None) -> list[str]:
    """``<launcher> run --kubeconfig … [--namespace …] [--operator-namespace …] --metrics-port …
    --health-port … [--log-format …] <extra>``.

    ``launcher`` defaults to ``installed_launcher()``; ``log_format=None`` leaves the operator's
    default. ``extra`` comes last, so a flag there overrides one before it (click keeps the last).
    """
    args = [*(launcher if launcher is not None else installed_launcher()), "run", "--kubeconfig", kubeconfig]
    for namespace in namespaces:
        args += ["--namespace", namespace]
    if operator_namespace is not None:
        args += ["--operator-namespace", operator_namespace]
    args += ["--metrics-port", str(metrics_port), "--health-port", str(health_port)]
    if log_format is not None:
        args += ["--log-format", log_format]
    return [*args, *extra]


def operator_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without ``OAM_OPERATOR_*`` variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAM_OPERATOR_")}
    env.update(extra or {})
    return env


def _opener() -> urllib.request.OpenerDirector:
    """No proxy: the servers are on 127.0.0.1, and a proxy from the environment must not see them."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


class NotServing(RuntimeError):
    """The operator exited, or did not serve what was waited for in time (the log's tail in the message)."""


@dataclass
class OperatorProcess:
    """One ``oam-operator run`` process: its ``Popen``, log file, ports and command line.

    ``name`` is its ``POD_NAME`` when the caller set one (the user agent carries it, so an audit
    log tells the processes apart; the Lease holder starts with it). ``paused`` is True between
    ``pause()`` and ``resume()``.
    """

    process: subprocess.Popen[bytes]
    log_path: Path
    metrics_port: int
    health_port: int
    args: list[str]
    name: str = ""
    paused: bool = False

    # -- starting -------------------------------------------------------------------------------

    @classmethod
    def start(cls, log_path: Path, *, kubeconfig: str, namespaces: Iterable[str] = (),
              operator_namespace: str | None = None, log_format: str | None = "json", extra: Iterable[str] = (),
              launcher: Sequence[str] | None = None, name: str = "", env: Mapping[str, str] | None = None,
              cwd: Path = ROOT, append: bool = False) -> Self:
        """Pick two free ports, assemble the command line (``run_command``) and spawn it.

        ``name`` becomes ``POD_NAME``; ``env`` is added to the filtered environment (``PYTHONPATH``
        of another release, say). Nothing is waited for: see ``wait_serving``.
        """
        metrics_port, health_port = free_port(), free_port()
        args = run_command(kubeconfig=kubeconfig, metrics_port=metrics_port, health_port=health_port,
                           namespaces=namespaces, operator_namespace=operator_namespace, log_format=log_format,
                           extra=extra, launcher=launcher)
        return cls.spawn(args, log_path, metrics_port, health_port, name=name, env=env, cwd=cwd, append=append)

    @classmethod
    def spawn(cls, args: Sequence[str], log_path: Path, metrics_port: int, health_port: int, *, name: str = "",
              env: Mapping[str, str] | None = None, cwd: Path = ROOT, append: bool = False,
              detach: bool = False, keep_settings: bool = False) -> Self:
        """Spawn ``args`` (a ``run_command``) with stdout and stderr in ``log_path`` (appended to with
        ``append``), no ``OAM_OPERATOR_*`` variable in its environment, in ``cwd``.

        ``detach``: stdin from /dev/null and a session of its own, so it outlives the caller;
        ``keep_settings``: this process's ``OAM_OPERATOR_*`` variables are passed on after all. Both
        for the demo's operator, which is the user's: their settings apply to it.
        """
        variables = {**os.environ, **(env or {})} if keep_settings else operator_environment(env)
        if name:
            variables["POD_NAME"] = name
        with log_path.open("ab" if append else "wb") as log:
            process = subprocess.Popen(list(args), stdout=log, stderr=subprocess.STDOUT, env=variables, cwd=cwd,
                                       stdin=subprocess.DEVNULL if detach else None, start_new_session=detach)
        return cls(process, log_path, metrics_port, health_port, list(args), name)

    # -- the process ----------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def exited(self) -> str | None:
        """``None`` while it runs; else what to report: its exit code and the log's tail."""
        if self.process.poll() is None:
            return None
        return f"{self.name or 'the operator'} exited with {self.process.returncode}:\n{self.log_tail()}"

    def rss_bytes(self, field: str = "VmRSS") -> int | None:
        """A memory figure of ``/proc/<pid>/status`` in bytes (``VmHWM``: the peak); ``None`` once gone."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            return None
        return None

    # -- signals --------------------------------------------------------------------------------

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send ``sig`` (after SIGCONT, in case it is paused) and wait up to ``timeout`` s, then SIGKILL;
        the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.paused = False
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def pause(self) -> None:
        """SIGSTOP: the process holds its connections and its Lease but does nothing."""
        self.process.send_signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        self.process.send_signal(signal.SIGCONT)
        self.paused = False

    # -- what it serves -------------------------------------------------------------------------

    def metrics_text(self, timeout: float = 5) -> str:
        """The Prometheus text of ``/metrics``; ``OSError`` when it does not answer."""
        with _opener().open(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=timeout) as response:
            return str(response.read().decode())

    def metrics(self, timeout: float = 5) -> dict[MetricKey, float]:
        """Every sample of ``/metrics``: ``(sample name, frozenset of labels) -> value``."""
        from prometheus_client.parser import text_string_to_metric_families

        values: dict[MetricKey, float] = {}
        for family in text_string_to_metric_families(self.metrics_text(timeout)):
            for sample in family.samples:
                values[(sample.name, frozenset(sample.labels.items()))] = float(sample.value)
        return values

    def api_requests(self, methods: Iterable[str] | None = None, timeout: float = 5) -> float:
        """The operator's own count of its API requests (``oam_operator_api_requests_total``), of
        ``methods`` only when given."""
        wanted = None if methods is None else frozenset(methods)
        return sum(value for (name, labels), value in self.metrics(timeout).items()
                   if name == "oam_operator_api_requests_total"
                   and (wanted is None or dict(labels)["method"] in wanted))

    def write_requests(self) -> float:
        """The API requests that write (POST, PUT, PATCH, DELETE)."""
        return self.api_requests(WRITE_METHODS)

    def leader_gauge(self) -> float | None:
        """``oam_operator_leader`` (1 leading, 0 standing by); ``None`` while metrics do not answer."""
        try:
            samples = self.metrics(timeout=2)
        except OSError:
            return None
        return next((value for (name, _), value in samples.items() if name == "oam_operator_leader"), None)

    def leads(self) -> bool:
        return self.leader_gauge() == 1.0

    def health(self) -> tuple[int, dict[str, Any]]:
        """``/healthz``'s status and JSON body; ``OSError`` when it does not answer (or answers an error)."""
        with _opener().open(f"http://127.0.0.1:{self.health_port}/healthz", timeout=5) as response:
            return int(response.status), json.loads(response.read())

    def healthy(self) -> bool:
        """``/healthz`` answers 200 within 2 s."""
        try:
            with _opener().open(f"http://127.0.0.1:{self.health_port}/healthz", timeout=2) as response:
                return int(response.status) == 200
        except OSError:
            return False

    def leadership(self) -> dict[str, Any]:
        """What ``/healthz`` says of leader election: ``role``, ``losses`` and more."""
        leadership: dict[str, Any] = self.health()[1]["leadership"]
        return leadership

    def serving(self, *, leader_gauge: bool = True, health: bool = True) -> bool:
        """Its metrics carry the leader gauge (election has begun) and/or ``/healthz`` answers 200."""
        return (not leader_gauge or self.leader_gauge() is not None) and (not health or self.healthy())

    def wait_for(self, predicate: Callable[[], object], timeout: float, what: str, step: float = 0.25) -> None:
        """Poll ``predicate`` until it is truthy; ``NotServing`` as soon as the process exits, or
        after ``timeout`` s (then it is stopped)."""
        deadline = time.monotonic() + timeout
        while True:
            exited = self.exited()
            if exited is not None:
                raise NotServing(exited)
            if predicate():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise NotServing(f"timed out after {timeout:.0f} s waiting for {what}:\n{self.log_tail()}")
            time.sleep(step)

    def wait_serving(self, timeout: float = 60, *, leader_gauge: bool = True, health: bool = True) -> Self:
        """``wait_for`` ``serving``; the health server starts after the metrics one, so a caller
        that waited for both may ask either next."""
        self.wait_for(lambda: self.serving(leader_gauge=leader_gauge, health=health), timeout,
                      f"{self.name or 'the operator'}'s " + " and ".join(
                          [*(["metrics"] if leader_gauge else []), *(["health"] if health else [])]))
        return self

    # -- what it logs ---------------------------------------------------------------------------

    def logs(self) -> list[dict[str, Any]]:
        """The JSON entries of its log (``--log-format json``); other lines (a traceback, Python's
        warnings) are skipped."""
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    def passes(self, namespace: str | None = None, name: str | None = None) -> list[dict[str, Any]]:
        """The log entries of its finished passes (``pass finished``, ``pass failed``), of one
        namespace or Application when given."""
        return [entry for entry in self.logs() if entry.get("msg") in PASS_MESSAGES
                and (namespace is None or entry.get("namespace") == namespace)
                and (name is None or entry.get("name") == name)]
