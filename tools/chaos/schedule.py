"""A seeded schedule of faults: the same seed and duration give the same faults at the same
offsets (which Application or instance a fault hits is drawn when it runs, from the same seed)."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["APP_FAULTS", "PROCESS_FAULTS", "Fault", "plan"]

#: faults a user makes to Applications and their objects
APP_FAULTS = ("spec-edit", "hand-edit", "delete", "recreate", "replace")
APP_WEIGHTS = (4, 4, 1, 1, 2)
#: faults of the processes: the leader's, the proxied instance's network, the control plane's
PROCESS_FAULTS = ("kill-leader", "stop-leader", "cut", "apiserver-restart", "etcd-restart")


@dataclass(frozen=True)
class Fault:
    at: float  # seconds after the run's start
    kind: str


def plan(seed: int, duration: float, app_gap: float, process_gap: float) -> list[Fault]:
    """Faults over ``duration`` seconds: Application faults every ``app_gap`` s on average, process
    faults every ``process_gap`` s on average, each process kind in turn (shuffled per round), so a
    short run sees every kind. Nothing in the last tenth: the run ends with the faults' effects."""
    rng = random.Random(seed)
    end = duration * 0.9
    faults = []
    at = rng.uniform(0, app_gap)
    while at < end:
        faults.append(Fault(round(at, 2), rng.choices(APP_FAULTS, APP_WEIGHTS)[0]))
        at += rng.uniform(0.5, 1.5) * app_gap
    at = rng.uniform(0.3, 0.6) * process_gap
    kinds: list[str] = []
    while at < end:
        if not kinds:
            kinds = list(PROCESS_FAULTS)
            rng.shuffle(kinds)
        faults.append(Fault(round(at, 2), kinds.pop()))
        at += rng.uniform(0.75, 1.25) * process_gap
    return sorted(faults, key=lambda f: f.at)
