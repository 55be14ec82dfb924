"""The controller is built complete before kopf runs (docs/operator.md#running-on-kopf): the cluster
id is read first, waiting for the API server; the runtime has every part from construction; watch
threads wake the loops through the event loop kopf is then given."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.runtime import Runtime, read_cluster_id
from oam_operator.controller.service.wakeups import Wakeups
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import PermanentApiError, TransientApiError


class Answers:
    """A client whose reads fail with ``failures`` in turn, then answer the kube-system Namespace."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.paths: list[str] = []

    def request(self, verb: str, method: str, path: str, **_: Any) -> dict[str, Any]:
        self.paths.append(path)
        if self.failures:
            raise self.failures.pop(0)
        return {"metadata": {"name": "kube-system", "uid": "0f6c-cluster"}}


def test_the_cluster_id_is_read_again_until_the_api_server_answers(caplog: pytest.LogCaptureFixture) -> None:
    down = TransientApiError("connection refused", status=0, reason="ConnectionError", verb="read")
    refused = PermanentApiError("namespaces \"kube-system\" is forbidden", status=403, reason="Forbidden", verb="read")
    client = Answers(down, down, refused, down, down, down, down)
    waits: list[float] = []
    with caplog.at_level(logging.WARNING, logger="oam_operator.controller"):
        assert read_cluster_id(client, sleep=waits.append) == "0f6c-cluster"  # type: ignore[arg-type]
    assert client.paths == ["/api/v1/namespaces/kube-system"] * 8
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert [record.getMessage() for record in caplog.records][2] == (
        f"could not read the cluster id: {refused}")


def test_a_runtime_has_every_part_when_built() -> None:
    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    client = ClusterClient(ApiClient(configuration))
    runtime = Runtime(Settings(cluster_id="c"), client, None)
    assert runtime.env.cluster_id == "c" and runtime.env.targets == runtime.remotes.target
    assert runtime.owned is not None and runtime.env.cached_reads is runtime.owned
    assert runtime.grants.scopes == ("",)  # every namespace, not started: no thread yet
    off = Runtime(Settings(cluster_id="c", readiness_watch=False), client, None)
    assert off.owned is None and off.env.watched is None  # a setting, not a missing start()
    with pytest.raises(ValueError, match=r"^the cluster id is needed: --cluster-id, or read by Runtime.create$"):
        Runtime(Settings(), client, None)


def test_a_watch_thread_wakes_a_loop_through_the_event_loop() -> None:
    loop = asyncio.new_event_loop()
    wakeups = Wakeups(loop)

    async def woken() -> list[str]:
        order: list[str] = []
        first, second = wakeups.event("u1"), wakeups.event("u2")
        threading.Thread(target=wakeups.from_thread, args=("u1",)).start()
        await asyncio.wait_for(first.wait(), 5)
        order.append("u1")
        assert not second.is_set()
        threading.Thread(target=wakeups.all_from_thread).start()
        await asyncio.wait_for(second.wait(), 5)
        order.append("u2")
        wakeups.forget("u1")
        assert not wakeups.event("u1").is_set()  # forgotten: a new event
        return order

    try:
        assert loop.run_until_complete(woken()) == ["u1", "u2"]
    finally:
        loop.close()
