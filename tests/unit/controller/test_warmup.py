"""The start-up's warm-up (controller/service/warmup.py, docs/operator.md#a-quiet-restart): the
health library is built and every kind's type looked up once, in a thread of its own; a failed
lookup stops nothing."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.reconcile.health import library
from oam_operator.controller.service.ownedwatch import WatchedKind
from oam_operator.controller.service.warmup import warm_up
from oam_operator.reconciler.errors import TransientApiError

KINDS = (WatchedKind("apps", "v1", "deployments", "Deployment"), WatchedKind("batch", "v1", "jobs", "Job"),
         WatchedKind("", "v1", "configmaps", "ConfigMap"))


class Lookups:
    """A client whose discovery records each lookup; ``batch/v1`` fails as an API server being restarted would."""

    def __init__(self) -> None:
        self.looked_up: list[tuple[str, str]] = []

    def resource_for(self, api_version: str, kind: str) -> Any:
        self.looked_up.append((api_version, kind))
        if api_version == "batch/v1":
            raise TransientApiError("connection error: refused", status=0, reason="ConnectionError")
        return None


def test_every_kind_is_looked_up_once_in_a_thread_of_its_own_and_a_failure_stops_nothing() -> None:
    library.cache_clear()
    client = Lookups()
    thread = warm_up(client, KINDS)  # type: ignore[arg-type]
    assert (thread.name, thread.daemon) == ("warm-up", True)
    thread.join(10)
    assert not thread.is_alive()
    assert client.looked_up == [("apps/v1", "Deployment"), ("batch/v1", "Job"), ("v1", "ConfigMap")]
    assert library.cache_info().currsize == 1  # built: the first pass finds it
