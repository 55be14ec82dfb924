"""The lean finalizer patch gives exactly kopf's ops, for a fraction of the work
(controller/service/kopftuning.py)."""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kopf._cogs.structs import finalizers, patches

from oam_operator.controller.service.kopftuning import _KOPFS, lean_json_patch

FINALIZER = "oam-operator.dev"


def application(finalizers_now: list[str] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42", "generation": 3,
        "annotations": {"oam-operator.dev/requested-at": "now"},
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:spec": {"f:components": {}}}},
                          {"manager": "oam-operator", "operation": "Update", "subresource": "status",
                           "fieldsV1": {"f:status": {"f:conditions": {}}}}],
    }
    if finalizers_now is not None:
        metadata["finalizers"] = finalizers_now
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": metadata,
            "spec": {"components": [{"name": f"c{i}", "type": "passthrough", "properties": {"object": {"i": i}}}
                                    for i in range(12)]},
            "status": {"state": "Processing", "conditions": [{"type": "Ready", "status": "False"}]}}


CASES = {
    "add to none": (None, finalizers.block_deletion),
    "add beside another": (["other.dev"], finalizers.block_deletion),
    "already there": ([FINALIZER], finalizers.block_deletion),
    "remove the only one": ([FINALIZER], finalizers.allow_deletion),
    "remove one of two": (["other.dev", FINALIZER], finalizers.allow_deletion),
    "remove twice listed": ([FINALIZER, "other.dev", FINALIZER], finalizers.allow_deletion),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_ops_are_kopfs_and_the_body_is_untouched(case: str) -> None:
    existing, transformation = CASES[case]
    body = application(existing)
    original = copy.deepcopy(body)
    patch = patches.Patch(fns=[functools.partial(transformation, finalizer=FINALIZER)])
    assert lean_json_patch(patch, body) == _KOPFS(patch, body)
    assert body == original


def test_a_merge_part_or_another_transformation_goes_to_kopfs_method() -> None:
    body = application(None)
    merged = patches.Patch({"metadata": {"labels": {"a": "b"}}},
                           fns=[functools.partial(finalizers.block_deletion, finalizer=FINALIZER)])
    assert lean_json_patch(merged, body) == _KOPFS(merged, body)

    def wider(raw: dict[str, Any]) -> None:
        raw["status"] = {"state": "Ready"}

    other = patches.Patch(fns=[wider])
    assert lean_json_patch(other, body) == [{"op": "remove", "path": "/status/conditions"},
                                            {"op": "replace", "path": "/status/state", "value": "Ready"}]
    assert lean_json_patch(patches.Patch(), body) == []


def test_install_points_kopfs_watch_decoding_at_the_fast_codec() -> None:
    from kopf._cogs.clients import api

    from oam_operator.controller.service.kopftuning import FastJson, install
    from oam_operator.reconciler import jsoncodec

    install()
    assert api.json is FastJson and api.json.loads is jsoncodec.loads
    assert patches.Patch.as_json_patch is lean_json_patch
    assert api.json.loads(b'{"type": "ADDED", "object": {"kind": "Application"}}') == {
        "type": "ADDED", "object": {"kind": "Application"}}


def test_every_listed_or_watched_object_reaches_kopf_with_its_managed_fields_held_as_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from kopf._cogs.clients import watching

    from oam_operator.controller.service import kopftuning

    listed = object()  # kopf's bookmark, passed through as it is
    events = [listed, {"type": None, "object": application(None)}, {"type": "MODIFIED", "object": application(None)}]
    asked: list[dict[str, Any]] = []

    async def kopfs_watch(**kwargs: Any) -> Any:
        asked.append(kwargs)
        for event in events:
            yield event

    monkeypatch.setattr(kopftuning, "_KOPFS_WATCH", kopfs_watch)
    kopftuning.install()
    assert watching.infinite_watch is kopftuning.lean_watch

    async def consume() -> list[Any]:
        return [event async for event in watching.infinite_watch(settings="s", resource="r", namespace=None)]

    seen = asyncio.run(consume())
    assert asked == [{"settings": "s", "resource": "r", "namespace": None}]
    assert seen[0] is listed and len(seen) == 3
    for event in seen[1:]:
        managed = event["object"]["metadata"]["managedFields"]
        assert managed == [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1",
                            "fieldsV1": '{"f:spec":{"f:components":{}}}'}]


@contextlib.asynccontextmanager
async def _served(handler: Any) -> AsyncIterator[int]:
    """A local HTTP server answering GETs of the Applications with ``handler``; yields its port."""
    from aiohttp import web

    server = web.Application()
    server.router.add_get("/apis/oam-operator.dev/v1alpha1/applications", handler)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


def test_kopfs_gets_a_list_page_decoded_by_the_fast_codec(monkeypatch: pytest.MonkeyPatch) -> None:
    """kopf's first LIST (pages of Applications) comes through ``api.get``: a real HTTP response
    from a local server, decoded by ``jsoncodec.loads``, not aiohttp's default ``json.loads``."""
    import asyncio

    import aiohttp
    from aiohttp import web
    from kopf._cogs.clients import api

    from oam_operator.controller.service import kopftuning
    from oam_operator.reconciler import jsoncodec

    page = {"kind": "ApplicationList", "metadata": {"continue": "next"}, "items": [application(None)]}
    decoded: list[bytes | str] = []

    def counting_loads(data: Any) -> Any:
        decoded.append(data)
        return jsoncodec.orjson.loads(data)

    monkeypatch.setattr(jsoncodec, "loads", counting_loads)

    async def scenario() -> tuple[Any, list[dict[str, Any]]]:
        async def serve(_: web.Request) -> web.Response:
            return web.json_response(page)

        asked: list[dict[str, Any]] = []
        async with _served(serve) as port, aiohttp.ClientSession() as session:
            async def request(**kwargs: Any) -> aiohttp.ClientResponse:
                asked.append(kwargs)
                return await session.get(f"http://127.0.0.1:{port}{kwargs['url']}")

            monkeypatch.setattr(kopftuning, "_KOPFS_REQUEST", request)
            kopftuning.install()
            got = await api.get("/apis/oam-operator.dev/v1alpha1/applications", settings="s",  # type: ignore[arg-type]
                                logger="l")  # type: ignore[arg-type]
        return got, asked

    got, asked = asyncio.run(scenario())
    assert api.get is kopftuning.lean_get
    assert got == page and len(decoded) == 1
    assert asked == [{"method": "get", "url": "/apis/oam-operator.dev/v1alpha1/applications", "payload": None,
                      "headers": None, "timeout": None, "settings": "s", "logger": "l"}]


def test_kopfs_list_of_applications_is_shown_page_by_page_to_its_observer(monkeypatch: pytest.MonkeyPatch) -> None:
    """kopf's own ``fetch_objs`` (its watch's first LIST, in pages from a local server) feeds the
    fresh view, which then needs no LIST of its own (freshview.py); kopf gets every page as it was."""
    import asyncio

    import aiohttp
    from aiohttp import web
    from kopf._cogs.clients import fetching
    from kopf._cogs.configs import configuration
    from kopf._cogs.structs import references

    from oam_operator.controller.service import kopftuning
    from oam_operator.controller.service.freshview import FreshView

    def item(uid: str, version: int, finalizers: list[str] | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"namespace": "shop", "name": uid, "uid": uid, "resourceVersion": str(version)}
        if finalizers is not None:
            meta["finalizers"] = finalizers
        return {"metadata": meta}

    pages = {"": {"kind": "ApplicationList", "metadata": {"continue": "2", "resourceVersion": "90"},
                  "items": [item("u1", 50, ["oam-operator.dev"]), item("u3", 70, None)]},
             "2": {"kind": "ApplicationList", "metadata": {"continue": "", "resourceVersion": "90"},
                   "items": [item("u2", 60, None)]}}
    asked: list[dict[str, str]] = []

    async def scenario() -> list[Any]:
        async def serve(request: web.Request) -> web.Response:
            asked.append(dict(request.query))
            return web.json_response(pages[request.query.get("continue", "")])

        async with _served(serve) as port, aiohttp.ClientSession() as session:
            async def request(**kwargs: Any) -> aiohttp.ClientResponse:
                return await session.get(f"http://127.0.0.1:{port}{kwargs['url']}")

            monkeypatch.setattr(kopftuning, "_KOPFS_REQUEST", request)
            kopftuning.install()
            settings = configuration.OperatorSettings()
            settings.watching.chunk_size = 1
            resource = references.Resource("oam-operator.dev", "v1alpha1", "applications", namespaced=True)
            settings.watching.label_selectors["oam-operator.dev", "applications"] = "!oam-operator.dev/shard"
            got = []
            async for chunk in fetching.fetch_objs(settings=settings, resource=resource, namespace=None,
                                                   logger=logging.getLogger("t")):
                got.append((*chunk, fresh._list is not None, len(asked)))
        return got

    class NoServer:
        def request(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the fresh view made a request of its own")

    fresh = FreshView(NoServer(), selector="!oam-operator.dev/shard", namespaces=(),  # type: ignore[arg-type]
                      finalizer="oam-operator.dev")
    fresh.follow_lists()
    fresh.new_term()
    monkeypatch.setattr(kopftuning, "_LISTED_ONCE", set())  # this process's first LIST
    monkeypatch.setitem(kopftuning._OBSERVERS, ("oam-operator.dev", "applications"),
                        (fresh.listing, lambda body: body["metadata"]["uid"] == "u3", None))  # a new one
    got = asyncio.run(scenario())
    assert fetching.fetch_objs is kopftuning.observed_fetch
    # the picked one as its page came (before the second page was asked for), the others held until
    # the LIST ended, and by then the LIST was the term's
    assert [([each["metadata"]["uid"] for each in items], version, listed, pages_asked)
            for items, version, listed, pages_asked in got] == [
        (["u3"], "90", False, 1), (["u1", "u2"], "90", True, 2)]
    assert [query.get("labelSelector") for query in asked] == ["!oam-operator.dev/shard"] * 2
    copy = item("u2", 60, None)
    assert fresh.body_for("u2", copy) is copy  # kopf's LIST is the term's: no request
    assert [(u.uid, u.has_finalizers) for u in fresh.unfinalized()] == [("u3", False), ("u2", False)]


def test_a_list_cut_short_is_not_shown_as_done(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from oam_operator.controller.service import kopftuning

    seen: list[Any] = []

    class Pages:
        def page(self, items: Any) -> None:
            seen.append(("page", list(items)))

        def done(self, version: Any) -> None:
            seen.append(("done", version))

    async def failing_fetch(**_: Any) -> Any:
        yield [{"metadata": {"uid": "u1"}}], "90"
        raise TimeoutError

    class Settings:
        class watching:
            class label_selectors:
                @staticmethod
                def collect(_: Any) -> list[str]:
                    return ["a=b"]

    class Resource:
        group, plural = "oam-operator.dev", "applications"

    monkeypatch.setattr(kopftuning, "_KOPFS_FETCH", failing_fetch)
    monkeypatch.setitem(kopftuning._OBSERVERS, ("oam-operator.dev", "applications"),
                        (lambda namespace, selector: seen.append((namespace, selector)) or Pages(), None, None))

    async def consume() -> None:
        async for _ in kopftuning.observed_fetch(settings=Settings(), resource=Resource(),  # type: ignore[arg-type]
                                                 namespace="shop", logger=None):  # type: ignore[arg-type]
            pass

    with pytest.raises(TimeoutError):
        asyncio.run(consume())
    assert seen == [("shop", "a=b"), ("page", [{"metadata": {"uid": "u1"}}])]


class NoSelectors:
    """kopf's settings as ``observed_fetch`` reads them: no label selector."""

    class watching:
        class label_selectors:
            @staticmethod
            def collect(_: Any) -> list[str]:
                return []


class Applications:
    """kopf's resource as ``observed_fetch`` reads it."""

    group, plural = "oam-operator.dev", "applications"


def test_objects_held_until_the_list_ends_have_their_managed_fields_held_as_text(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from oam_operator.controller.service import kopftuning

    settled, new = application(None), application(None)
    settled["metadata"]["uid"], new["metadata"]["uid"] = "u1", "u2"

    async def kopfs_fetch(**_: Any) -> Any:
        yield [settled, new], "90"

    monkeypatch.setattr(kopftuning, "_KOPFS_FETCH", kopfs_fetch)
    monkeypatch.setattr(kopftuning, "_LISTED_ONCE", set())
    monkeypatch.setitem(kopftuning._OBSERVERS, ("oam-operator.dev", "applications"),
                        (lambda namespace, selector: None, lambda body: body["metadata"]["uid"] == "u2", None))

    async def consume() -> list[Any]:
        return [chunk async for chunk in kopftuning.observed_fetch(
            settings=NoSelectors(), resource=Applications(), namespace=None, logger=None)]  # type: ignore[arg-type]

    got = asyncio.run(consume())
    assert [[each["metadata"]["uid"] for each in items] for items, _ in got] == [["u2"], ["u1"]]
    assert isinstance(settled["metadata"]["managedFields"][0]["fieldsV1"], str)  # held: compacted at once
    assert isinstance(new["metadata"]["managedFields"][0]["fieldsV1"], dict)  # handed on: kopf's stream does it
    # kopf lists again (its watch expired): it holds every body already, so the page goes on as it came
    again = asyncio.run(consume())
    assert [[each["metadata"]["uid"] for each in items] for items, _ in again] == [["u1", "u2"]]


def test_the_held_objects_go_to_kopf_in_chunks_with_the_pace_awaited_between_two(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """urgency.py: kopf gets the settled Applications ``HELD_CHUNK`` at a time; a fresh pace per
    LIST is awaited between two chunks (not before the first), after the LIST was shown as done."""
    import asyncio

    from oam_operator.controller.service import kopftuning

    def body(uid: str) -> dict[str, Any]:
        return {"metadata": {"uid": uid, "namespace": "shop", "name": uid}}

    listed = [body(f"s{index}") for index in range(5)] + [body("new")]
    steps: list[str] = []

    async def kopfs_fetch(**_: Any) -> Any:
        yield listed, "90"

    class Pages:
        def page(self, items: Any) -> None:
            steps.append(f"page of {len(items)}")

        def done(self, version: Any) -> None:
            steps.append(f"done {version}")

    def pacer() -> Any:
        steps.append("pacer")

        async def pause() -> None:
            steps.append("pause")
        return pause

    monkeypatch.setattr(kopftuning, "HELD_CHUNK", 2)
    monkeypatch.setattr(kopftuning, "_KOPFS_FETCH", kopfs_fetch)
    monkeypatch.setattr(kopftuning, "_LISTED_ONCE", set())
    monkeypatch.setitem(kopftuning._OBSERVERS, ("oam-operator.dev", "applications"),
                        (lambda namespace, selector: Pages(), lambda b: b["metadata"]["uid"] == "new", pacer))

    async def consume() -> None:
        async for items, _ in kopftuning.observed_fetch(settings=NoSelectors(), resource=Applications(),  # type: ignore[arg-type]
                                                        namespace=None, logger=None):  # type: ignore[arg-type]
            steps.append("kopf gets " + ",".join(item["metadata"]["uid"] for item in items))

    asyncio.run(consume())
    assert steps == ["page of 6", "kopf gets new", "done 90", "pacer", "kopf gets s0,s1", "pause",
                     "kopf gets s2,s3", "pause", "kopf gets s4"]
