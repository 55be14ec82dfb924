"""What the operator process does with leader election (docs/operator.md#leader-election).

``Leadership`` runs the election of this instance (``leaderelection.Elector``) in threads of its
own, so that neither kopf's event loop nor the passes can delay a renewal:

- the **election loop** calls ``Elector.tick`` when it says (every retry period; a standby also
  at the moment the lease it watches expires);
- a **watch of the Lease** tells a standby at once that the leader released it (a rollout's
  hand-over then takes one request, not a retry period) and keeps its view current;
- a **watchdog** notices, within a quarter of a second, that the renew deadline passed even
  while the election loop is stuck in a request to an unreachable API server.

The kopf layer (``handlers.py``) awaits ``wait_leading`` before every pass, and the pass requests
are fenced by ``leading`` (``fence.py``). A standby keeps kopf running — liveness, the admission
webhook, the watches and caches it will need — and reconciles nothing.

**A leader that loses the Lease stands by again** without a restart: the fence has already
refused its requests (by the clock); ``on_lost`` then waits until every running pass has ended
and drops what the process remembers that another leader may have changed meanwhile (the last
status each pass wrote, backoffs, what the watch cache holds as this instance's own writes:
``Runtime.stand_down``);
only then does the election loop compete for the Lease again (``Elector.stand_by``). The passes
after the next acquisition start from fresh reads. A pass running in a worker thread is never
cancelled: it ends by itself, every request refused, before the instance may lead again.
On SIGTERM the leader instead finishes its passes, then ``release`` clears the Lease's holder.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from oam_operator.reconciler.errors import ApiError

from .leaderelection import Elector, LeaseTimings, Role
from .leaseclient import ClusterLeaseApi

__all__ = ["Leadership", "identity", "predecessor_of"]

log = logging.getLogger("oam_operator.controller")

WATCHDOG_INTERVAL = 0.25  # seconds between checks of the renew deadline
WATCH_TIMEOUT = 300.0  # seconds a watch of the Lease stays open before it is started again


def identity(environ: Mapping[str, str] | None = None) -> str:
    """The holder identity: the Pod's name (``POD_NAME``, else ``HOSTNAME``, else the host name),
    its UID when the chart gives it (``POD_UID``), and a random suffix, so a restarted container
    never mistakes its predecessor's Lease for its own (docs/operator.md#leader-election)."""
    env = os.environ if environ is None else environ
    base = env.get("POD_NAME") or env.get("HOSTNAME") or socket.gethostname()
    pod_uid = env.get("POD_UID")
    return f"{base}_{pod_uid + '_' if pod_uid else ''}{secrets.token_hex(4)}"


def predecessor_of(own: str, environ: Mapping[str, str] | None = None) -> Callable[[str], bool]:
    """Whether a holder is an earlier run of this same container: the same Pod name and UID, another
    suffix. The kubelet starts a container again only once its previous run has exited, so such a
    holder is dead and its Lease may be taken at once, not after it expires (a crash or an OOM kill
    costs no lease duration). Without ``POD_UID`` (a process outside a Pod, where one host may run
    several) nothing is a predecessor."""
    env = os.environ if environ is None else environ
    pod_uid = env.get("POD_UID")
    if not pod_uid or f"_{pod_uid}_" not in own:
        return lambda holder: False
    prefix = own[:own.rindex("_") + 1]  # <pod name>_<pod uid>_

    def predecessor(holder: str) -> bool:
        return holder != own and holder.startswith(prefix) and "_" not in holder[len(prefix):]

    return predecessor


class Leadership:
    """This process's part in the election for one Lease; thread-safe."""

    def __init__(self, elector: Elector, lease: str, *, on_lost: Callable[[], None],
                 on_role: Callable[[bool], None] | None = None, watch: ClusterLeaseApi | None = None) -> None:
        self.elector = elector
        self.lease = lease  # namespace/name, for logs and the health answer
        self.on_lost = on_lost
        self.on_role = on_role
        self.watch_api = watch
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._led = threading.Event()
        self._first_round = threading.Event()  # the first election round ended (``first_round``)
        self._losing = threading.Lock()  # one loss handled at a time (the watchdog's or the loop's)
        self.losses = 0  # Leases lost by this process (each stood by again)
        self._listeners: list[Callable[[], object]] = []
        self.became_leader_at: float | None = None

    @classmethod
    def create(cls, client: Any, namespace: str, name: str, timings: LeaseTimings, *,
               on_lost: Callable[[], None], on_role: Callable[[bool], None] | None = None) -> Leadership:
        api = ClusterLeaseApi(client, namespace, name)
        own = identity()
        elector = Elector(api, own, timings, clock=time.monotonic, predecessor=predecessor_of(own))
        return cls(elector, f"{namespace}/{name}", on_lost=on_lost, on_role=on_role, watch=api)

    # -- what the operator asks -----------------------------------------------------------------

    def leading(self) -> bool:
        """The fence (``fence.py``): this instance holds the Lease within its renew deadline, now."""
        return self.elector.leading()

    def on_leading(self, listener: Callable[[], object]) -> None:
        """Call ``listener`` (from an election thread) each time this instance starts leading."""
        self._listeners.append(listener)

    def first_round(self, timeout: float) -> bool:
        """Wait until the first election round ended (this instance leads, with its listeners
        called, or stands by), ``timeout`` seconds at most; whether it did."""
        return self._first_round.wait(timeout)

    def describe(self) -> dict[str, Any]:
        """The health endpoint's answer: which role this instance has and who leads."""
        role = self.elector.role
        shown = "leader" if self.leading() else ("lost" if role is Role.LEADER else role.value)  # past its deadline
        return {"role": shown, "lease": self.lease,
                "identity": self.elector.identity, "holder": self.elector.holder(),
                "error": self.elector.last_error, "losses": self.losses}

    # -- running --------------------------------------------------------------------------------

    def start(self) -> None:
        for target, name in ((self._elect, "election"), (self._watchdog, "watchdog"), (self._watch, "lease-watch")):
            if target == self._watch and self.watch_api is None:
                continue
            threading.Thread(target=target, name=f"oam-leader-{name}", daemon=True).start()
        log.info("leader election started", extra={"fields": {"lease": self.lease,
                                                               "identity": self.elector.identity}})

    def release(self) -> bool:
        """Stop electing and, when leading, give the Lease up (after the last pass ended)."""
        self._stop.set()
        self._wake.set()
        released = self.elector.release()
        self._publish()
        if released:
            log.info("released the Lease", extra={"fields": {"lease": self.lease}})
        return released

    def _elect(self) -> None:
        reported: str | None = None
        while not self._stop.is_set():
            role, delay = self.elector.tick()
            self._publish()
            self._first_round.set()
            error = self.elector.last_error
            if error is not None and error != reported:  # once per distinct failure, not per retry
                log.warning("leader election: the Lease API failed; trying again every retry period",
                            extra={"fields": {"lease": self.lease, "error": error}})
            reported = error
            if role is Role.LOST:
                self._lose()  # waits for the watchdog's handling of the same loss, if it came first
                if self._stop.is_set():
                    return
                self.elector.stand_by()
                log.info("standing by again after losing the Lease",
                         extra={"fields": {"lease": self.lease, "identity": self.elector.identity}})
                continue
            if role is Role.RELEASED:
                return
            self._wake.wait(min(delay, self.elector.timings.retry_period) if math.isfinite(delay) else None)
            self._wake.clear()

    def _watchdog(self) -> None:
        while not self._stop.wait(WATCHDOG_INTERVAL):
            if self._led.is_set() and not self.leading() and self.elector.role is not Role.RELEASED:
                self._lose()
                self._wake.set()  # the election loop stands by as soon as its request returns

    def _watch(self) -> None:
        """Follow the Lease; wake the election loop when it was released (or, while leading, taken)."""
        assert self.watch_api is not None
        retry = self.elector.timings.retry_period
        while not self._stop.is_set():
            record = self.elector.observed
            try:
                for lease in self.watch_api.watch(record.resource_version if record else "", WATCH_TIMEOUT):
                    if self._stop.is_set():
                        return
                    seen = self.elector.observe(lease or None)
                    if seen is not None and (seen.holder == "" or (self._led.is_set()
                                                                   and seen.holder != self.elector.identity)):
                        self._wake.set()
            except ApiError as error:
                log.debug("watch of the Lease ended: %s", error)
            self._stop.wait(retry)

    def _publish(self) -> None:
        leading = self.leading()
        if leading and not self._led.is_set():
            self._led.set()
            self.became_leader_at = time.monotonic()
            log.info("became the leader", extra={"fields": {"lease": self.lease, "identity": self.elector.identity}})
            for listener in self._listeners:
                listener()
        if self.on_role is not None:
            self.on_role(leading)

    def _lose(self) -> None:
        """Stop leading and let the operator stop and forget (``on_lost``), once per loss."""
        with self._losing:
            # Handled already, or never led; or the caller saw the loss before the other thread
            # handled it and this instance has led afresh since: that leadership is not lost.
            if not self._led.is_set() or self.elector.leading():
                return
            self.elector.lose()
            if self.on_role is not None:
                self.on_role(False)
            log.error("leader election lost: the Lease was not renewed within the renew deadline or another "
                      "instance holds it; stopping every pass, then standing by again", extra={"fields": {
                          "lease": self.lease, "identity": self.elector.identity, "holder": self.elector.holder(),
                          "error": self.elector.last_error}})
            self.on_lost()
            self.losses += 1
            self._led.clear()
