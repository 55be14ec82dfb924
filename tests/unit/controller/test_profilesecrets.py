"""The kubeconfig Secrets kept by their watches (docs/multicluster.md#secret-watches): once a
Secret's watch has listed it, reading it costs no request; its events replace the copy and
wake its users; a forbidden watch falls back to a GET per read. The hub is a fake answering
``request()`` and ``watch()`` from a dictionary and a queue of events (the real watch: the
integration test tests/integration/multicluster/test_remote_connections.py)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from oam_operator.controller.service.profilesecrets import SecretWatches
from oam_operator.reconciler.errors import PermanentApiError

PATH = "/api/v1/namespaces/oam-system/secrets"
WAIT = 30.0  # seconds a synchronisation may take at most (a safety net, not a measured time)


def secret(version: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "oam-system", "name": "spoke", "uid": "u1", "resourceVersion": version},
            "data": {"value": "eA=="}}


class FakeHub:
    def __init__(self, stored: dict[str, Any] | None, *, watchable: bool = True) -> None:
        self.stored = stored
        self.watchable = watchable
        self.requests: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.following = threading.Event()  # set when a watch request starts: the LIST is stored

    def request(self, verb: str, method: str, path: str, *, query: Any = (), **_: Any) -> dict[str, Any]:
        self.requests.append((verb, path, tuple(query)))
        if verb == "list":
            if not self.watchable:
                raise PermanentApiError("403 Forbidden", status=403, reason="Forbidden", verb=verb)
            assert path == PATH and ("fieldSelector", "metadata.name=spoke") in query
            return {"metadata": {"resourceVersion": "100"}, "items": [self.stored] if self.stored else []}
        if self.stored is None:
            raise PermanentApiError("404 Not Found", status=404, reason="NotFound", verb=verb)
        return self.stored

    def watch(self, path: str, *, query: Any = (), **_: Any) -> Iterator[dict[str, Any]]:
        assert path == PATH and ("fieldSelector", "metadata.name=spoke") in query
        self.following.set()
        while (event := self.events.get(timeout=WAIT)) is not None:
            yield event


@pytest.fixture
def changes() -> list[tuple[str, str]]:
    return []


def started(hub: FakeHub, changes: list[tuple[str, str]], changed: threading.Event) -> SecretWatches:
    def on_change(namespace: str, name: str) -> None:
        changes.append((namespace, name))
        changed.set()

    watches = SecretWatches(hub, on_change)  # type: ignore[arg-type]
    assert watches.secret("oam-system", "spoke") == hub.stored  # not listed yet: a GET
    assert hub.following.wait(WAIT)
    return watches


def test_a_listed_secret_is_read_without_requests(changes: list[tuple[str, str]]) -> None:
    hub = FakeHub(secret("1"))
    watches = started(hub, changes, threading.Event())
    try:
        before = list(hub.requests)
        assert sorted(verb for verb, _, _ in before) == ["list", "read"]  # the first GET, and the watch's LIST
        for _ in range(3):
            assert watches.secret("oam-system", "spoke") == secret("1")
        assert hub.requests == before  # no-op passes read nothing
        assert watches.watching() == 1 and changes == []
    finally:
        watches.stop()
        hub.events.put(None)


def test_a_rotation_replaces_the_copy_and_wakes_its_users(changes: list[tuple[str, str]]) -> None:
    hub = FakeHub(secret("1"))
    changed = threading.Event()
    watches = started(hub, changes, changed)
    try:
        hub.events.put({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "101"}}})
        hub.events.put({"type": "MODIFIED", "object": secret("2")})
        assert changed.wait(WAIT)
        assert changes == [("oam-system", "spoke")]
        assert watches.secret("oam-system", "spoke") == secret("2")
        changed.clear()
        hub.events.put({"type": "DELETED", "object": secret("3")})
        assert changed.wait(WAIT)
        assert changes == [("oam-system", "spoke")] * 2
        assert watches.secret("oam-system", "spoke") is None
        assert [verb for verb, _, _ in hub.requests].count("read") == 1  # only the first, before the LIST
    finally:
        watches.stop()
        hub.events.put(None)


def test_a_secret_missing_at_the_list_is_none_and_its_creation_wakes(changes: list[tuple[str, str]]) -> None:
    hub = FakeHub(None)
    changed = threading.Event()
    watches = started(hub, changes, changed)
    try:
        assert watches.secret("oam-system", "spoke") is None
        hub.events.put({"type": "ADDED", "object": secret("5")})
        assert changed.wait(WAIT)
        assert watches.secret("oam-system", "spoke") == secret("5")
    finally:
        watches.stop()
        hub.events.put(None)


def test_a_forbidden_watch_reads_the_secret_each_time() -> None:
    hub = FakeHub(secret("1"), watchable=False)
    watches = SecretWatches(hub)  # type: ignore[arg-type]
    try:
        for _ in range(3):
            assert watches.secret("oam-system", "spoke") == secret("1")
        reads = [path for verb, path, _ in hub.requests if verb == "read"]
        assert reads == [f"{PATH}/spoke"] * 3
        assert watches.watching() == 0
    finally:
        watches.stop()
