"""The ClusterProfile's own Ready condition (docs/multicluster.md#the-clusterprofiles-status).

A refusal of a profile's kubeconfig (missing Secret or key, a kubeconfig that cannot be used)
or a cluster that does not answer shows in the status of each Application using it and, through
this condition, in ``kubectl describe clusterprofiles.oam-operator.dev``. The passes report what they found
(``observe``); a Ready condition is patched onto the profile's status subresource only when
it differs from what the profile already says, so a fleet of passes finding the same answer
writes once. The writes go through the passes' client, fenced by leader election: only the
leader writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.meta import GROUP, VERSION
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

__all__ = ["CONNECTED", "UNREACHABLE", "UNUSABLE", "ProfileStatus", "ready_condition"]

log = logging.getLogger("oam_operator.controller")

CONNECTED = "Connected"
UNUSABLE = "ClusterUnusable"  # the reason of the Applications' refusals too (docs/multicluster.md#refusals)
UNREACHABLE = "ClusterUnreachable"

Observation = tuple[str, str, str]
"""(status "True"/"False", reason, message) of the Ready condition."""


def ready_condition(observation: Observation, previous: Mapping[str, Any] | None, now: str) -> dict[str, Any]:
    """The Ready condition for ``observation``; its transition time is kept while the status stays."""
    status, reason, message = observation
    kept = previous is not None and previous.get("status") == status and previous.get("lastTransitionTime")
    return {"type": "Ready", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": kept or now}


def _current(profile: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    for condition in ((profile or {}).get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition
    return None


class ProfileStatus:
    """Writes the profiles' Ready conditions; thread-safe. ``profiles`` answers a profile as last
    watched (its status included)."""

    def __init__(self, client: ClusterClient, profiles: Callable[[str], Mapping[str, Any] | None]) -> None:
        self.client = client
        self.profiles = profiles
        self._written: dict[str, Observation] = {}  # what this process wrote last, before its event arrives
        self._forbidden = False  # 403 once (a Role without clusterprofiles/status): never tried again
        self._lock = threading.Lock()

    def observe(self, name: str, observation: Observation, *, only_stale: bool = False) -> None:
        """A pass found ``observation`` for profile ``name``: write it unless the profile says so
        already (``only_stale``: only when the profile has a Ready condition, to correct it)."""
        current = _current(self.profiles(name))
        if only_stale and current is None:
            return
        said = None if current is None else (str(current.get("status")), str(current.get("reason")),
                                             str(current.get("message")))
        with self._lock:
            if said == observation or self._written.get(name) == observation or self._forbidden:
                return  # said already, or written and its watch event not seen yet
            self._written[name] = observation
        condition = ready_condition(observation, current, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        try:
            self.client.request("patch", "PATCH", f"/apis/{GROUP}/{VERSION}/clusterprofiles/{name}/status",
                                body={"status": {"conditions": [condition]}},
                                content_type="application/merge-patch+json")
        except ApiError as error:
            with self._lock:
                self._written.pop(name, None)  # tried again by the next pass
                self._forbidden = error.status == 403
            never = " (no more tries: the operator may not patch clusterprofiles.oam-operator.dev/status)"
            log.info("could not write the status of ClusterProfile %s%s: %s", name,
                     never if error.status == 403 else "", error)
