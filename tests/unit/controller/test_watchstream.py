"""The shared watch follower (controller/service/watchstream.py): versions, events, ERROR, stop."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, cast

import pytest

from oam_operator.controller.service.watchstream import follow, follow_once, listed_version
from oam_operator.reconciler.client import ClusterClient


def _event(type_: str, name: str, version: str) -> dict[str, Any]:
    return {"type": type_, "object": {"metadata": {"name": name, "resourceVersion": version}}}


class ScriptedWatches:
    """Answers each watch request with the next scripted list of events; records the queries."""

    def __init__(self, *requests: list[dict[str, Any]]) -> None:
        self.requests = list(requests)
        self.queries: list[list[tuple[str, str]]] = []

    def watch(self, path: str, *, query: Any = ()) -> Iterator[dict[str, Any]]:
        assert path == "/api/v1/namespaces/ns/secrets"
        self.queries.append(list(query))
        yield from self.requests.pop(0)


def _client(watches: ScriptedWatches) -> ClusterClient:
    return cast(ClusterClient, watches)


def test_one_request_reports_changes_moves_the_version_on_bookmarks_and_returns_where_to_resume() -> None:
    watches = ScriptedWatches([_event("ADDED", "a", "11"), _event("BOOKMARK", "", "15"), _event("DELETED", "a", "17"),
                               _event("BOOKMARK", "", "20")])
    seen: list[tuple[str, str]] = []

    def record(type_: str, obj: Mapping[str, Any]) -> None:
        seen.append((type_, obj["metadata"]["name"]))

    resumed = follow_once(_client(watches), "/api/v1/namespaces/ns/secrets", [("fieldSelector", "metadata.name=a")],
                          "10", threading.Event(), record)

    assert (resumed, seen) == ("20", [("ADDED", "a"), ("DELETED", "a")])
    assert watches.queries == [[("fieldSelector", "metadata.name=a"), ("resourceVersion", "10"),
                                ("allowWatchBookmarks", "true"), ("timeoutSeconds", "300")]]


def test_an_error_event_asks_for_a_new_list(caplog: pytest.LogCaptureFixture) -> None:
    gone = {"type": "ERROR", "object": {"code": 410, "reason": "Expired", "message": "too old resource version: 3 (9)"}}
    watches = ScriptedWatches([_event("MODIFIED", "a", "4"), gone])

    with caplog.at_level("INFO", logger="oam_operator.controller"):
        resumed = follow_once(_client(watches), "/api/v1/namespaces/ns/secrets", [], "3", threading.Event(),
                              lambda *_: None)

    assert resumed is None
    assert caplog.messages == ["relisting /api/v1/namespaces/ns/secrets after 410 Expired: too old resource version: 3 (9)"]


def test_follow_resumes_each_request_from_the_last_version_until_an_error() -> None:
    watches = ScriptedWatches([_event("ADDED", "a", "5")] * 3, [_event("MODIFIED", "a", "8")], [{"type": "ERROR", "object": {}}])
    seen: list[str] = []

    follow(_client(watches), "/api/v1/namespaces/ns/secrets", [], "1", threading.Event(),
           lambda type_, obj: seen.append(obj["metadata"]["resourceVersion"]))

    assert seen == ["5", "5", "5", "8"]
    assert [dict(query)["resourceVersion"] for query in watches.queries] == ["1", "5", "8"]


def test_a_stop_ends_the_request_after_the_event_in_hand() -> None:
    stopped = threading.Event()
    watches = ScriptedWatches([_event("ADDED", "a", "2"), _event("ADDED", "b", "3")])

    def stop_on_first(type_: str, obj: Mapping[str, Any]) -> None:
        stopped.set()

    follow(_client(watches), "/api/v1/namespaces/ns/secrets", [], "1", stopped, stop_on_first)

    assert len(watches.queries) == 1 and watches.requests == []


def test_the_listed_version_is_the_pages_resource_version() -> None:
    assert listed_version({"metadata": {"resourceVersion": "42"}, "items": []}) == "42"
    assert listed_version({"items": []}) == ""
