"""The UI's web server (docs/ui.md): aiohttp routes over the :class:`~oam_operator.ui.hub.Hub`.

Pages: ``/`` (the single page; its script draws the list, one Application and the graph from the
JSON below). JSON: ``/api/state``, ``/api/apps?q=&state=``, ``/api/apps/{ns}/{name}``,
``/api/graph``, ``/api/apps/{ns}/{name}/history``, ``/api/apps/{ns}/{name}/object?group=&version=
&kind=&namespace=&name=`` (one object of the resource tree: manifest and Events);
``POST /api/apps/{ns}/{name}/rollback/{n}``, ``POST /api/apps/{ns}/{name}/diff`` and ``POST
/api/apps/{ns}/{name}/object/diff?…`` (they send dry runs, so they are guarded like a change) and
``POST /api/apps/{ns}/{name}/{action}``.
``/api/stream`` is the server-sent-event stream: one ``change`` event (the hub's version) after
each burst of watch events. Every answer carries a CSP that allows only this server's own assets.
"""

from __future__ import annotations

import asyncio
import html
import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from aiohttp import web

from oam_operator.ui.actions import ACTIONS, ActionError, diff_text, run_action
from oam_operator.ui.detail import application_detail, event_rows
from oam_operator.ui.graph import dependency_graph
from oam_operator.ui.history import HistoryError, drift_view, read_history, rollback
from oam_operator.ui.hub import Hub
from oam_operator.ui.objects import (
    ObjectError,
    ObjectRef,
    in_inventory,
    manifest_text,
    object_diff,
    object_events,
    read_object,
)
from oam_operator.ui.rows import filter_rows, row_of
from oam_operator.ui.security import Guard

__all__ = ["make_app"]

HUB: web.AppKey[Hub] = web.AppKey("hub", Hub)
GUARD: web.AppKey[Guard] = web.AppKey("guard", Guard)
COALESCE_SECONDS = 0.25
HEARTBEAT_SECONDS = 15.0
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}


def _asset(name: str) -> bytes:
    return resources.files("oam_operator.ui").joinpath("static", name).read_bytes()


@web.middleware
async def _guarded(request: web.Request, handler: Any) -> web.StreamResponse:
    refusal = request.app[GUARD].refusal(request.method, request.headers)
    if refusal is not None:
        return web.json_response({"error": refusal}, status=403, headers=_HEADERS)
    try:
        response: web.StreamResponse = await handler(request)
    except web.HTTPException:
        raise
    except Exception as exc:  # a bug here is a line in the page, never a stack trace
        return web.json_response({"error": f"internal error: {type(exc).__name__}: {exc}"}, status=500,
                                 headers=_HEADERS)
    for key, value in _HEADERS.items():
        response.headers.setdefault(key, value)
    return response


async def _index(request: web.Request) -> web.Response:
    page = _asset("index.html").decode().replace("{{token}}", html.escape(request.app[GUARD].token))
    return web.Response(text=page, content_type="text/html")


async def _static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    suffix = name[name.rfind("."):]
    if suffix not in _STATIC_TYPES or "/" in name:
        raise web.HTTPNotFound()
    try:
        body = _asset(name)
    except FileNotFoundError:
        raise web.HTTPNotFound() from None
    return web.Response(body=body, content_type=_STATIC_TYPES[suffix])


async def _state(request: web.Request) -> web.Response:
    return web.json_response(request.app[HUB].state())


async def _apps(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    now = datetime.now(UTC)
    rows = filter_rows((row_of(app) for app in hub.applications()), request.query.get("q", ""),
                       request.query.get("state", ""))
    return web.json_response({"state": hub.state(), "rows": [row.to_json(now) for row in rows]})


def _not_found(hub: Hub, namespace: str, name: str) -> web.Response:
    return web.json_response({"state": hub.state(), "error": f'application "{name}" not found in namespace '
                              f'"{namespace}" (or not visible to you)'}, status=404)


async def _app(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    app = hub.application(namespace, name)
    if app is None:
        return _not_found(hub, namespace, name)
    detail = application_detail(app, hub.domain)
    events = hub.events.snapshot() if hub.events is not None else []
    detail["events"] = event_rows(events, namespace, name)
    detail["drift"] = drift_view(app)
    return web.json_response({"state": hub.state(), "app": detail})


async def _graph(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    apps = hub.applications()
    states = {row.key: row.state for row in map(row_of, apps)}
    return web.json_response({"state": hub.state(), "graph": dependency_graph(apps, states)})


async def _diff(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    if hub.conn is None:
        return web.json_response({"error": hub.fatal}, status=503)
    try:
        text = await asyncio.to_thread(diff_text, hub.conn, namespace, name, hub.domain)
    except ActionError as error:
        return web.json_response({"error": error.message}, status=502)
    return web.json_response({"diff": text})


async def _history(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    if hub.conn is None:
        return web.json_response({"error": hub.fatal}, status=503)
    try:
        history = await asyncio.to_thread(read_history, hub.conn, namespace, name, hub.domain)
    except HistoryError as error:
        return web.json_response({"error": error.message}, status=502)
    return web.json_response(history)


def _inventory_ref(request: web.Request) -> tuple[str, str, ObjectRef]:
    """The Application and the object the request names; an object outside its inventory is refused."""
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    ref = ObjectRef.from_query(request.query)
    app = hub.application(namespace, name)
    if app is None:
        raise ObjectError(f'application "{name}" not found in namespace "{namespace}" (or not visible to you)', 404)
    if not in_inventory(app, ref):
        raise ObjectError(f"{ref.label} ({ref.api_version}) is not an object of Application {namespace}/{name}", 404)
    if hub.conn is None:
        raise ObjectError(hub.fatal or "no connection", 503)
    return namespace, name, ref


async def _object(request: web.Request) -> web.Response:
    """The live manifest and the Events of one object of the tree (two reads, in a worker thread)."""
    try:
        _, _, ref = _inventory_ref(request)
        conn = request.app[HUB].conn
        assert conn is not None
        live = await asyncio.to_thread(read_object, conn, ref)
    except ObjectError as error:
        return web.json_response({"error": error.message}, status=error.status)
    answer: dict[str, Any] = {"label": ref.label, "apiVersion": ref.api_version,
                              "manifest": manifest_text(live) if live is not None else None}
    try:
        answer["events"] = await asyncio.to_thread(object_events, conn, ref)
    except ObjectError as error:  # the manifest is still worth showing
        answer["events"], answer["eventsError"] = [], error.message
    return web.json_response(answer)


async def _object_diff(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    try:
        namespace, name, ref = _inventory_ref(request)
        assert hub.conn is not None
        text = await asyncio.to_thread(object_diff, hub.conn, namespace, name, ref, hub.domain)
    except ObjectError as error:
        return web.json_response({"error": error.message}, status=error.status)
    return web.json_response({"label": ref.label, "diff": text})


async def _rollback(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    text = request.match_info["revision"]
    if not text.isdigit():
        return web.json_response({"error": f"revision must be a number, not {text!r}"}, status=400)
    if hub.conn is None:
        return web.json_response({"error": hub.fatal}, status=503)
    try:
        answer = await asyncio.to_thread(rollback, hub.conn, namespace, name, int(text), hub.domain)
    except HistoryError as error:  # a refusal (nothing written) is a 409, a failed request a 502
        return web.json_response({"error": error.message}, status=409 if error.refused else 502)
    return web.json_response(answer)


async def _action(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    action = request.match_info["action"]
    if action not in ACTIONS:
        return web.json_response({"error": f"unknown action {action!r}; one of {', '.join(ACTIONS)}"}, status=404)
    if hub.conn is None:
        return web.json_response({"error": hub.fatal}, status=503)
    try:
        answer = await asyncio.to_thread(run_action, hub.conn, action, namespace, name, hub.domain)
    except ActionError as error:
        return web.json_response({"error": error.message}, status=502)
    return web.json_response(answer)


async def _stream(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``change`` with the hub's version whenever a feed changed."""
    hub = request.app[HUB]
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_HEADERS})
    await response.prepare(request)
    woken = asyncio.Event()
    hub.listeners.add(woken)
    try:
        await response.write(f"event: change\ndata: {json.dumps(hub.version)}\n\n".encode())
        while True:
            try:
                await asyncio.wait_for(woken.wait(), HEARTBEAT_SECONDS)
            except TimeoutError:
                await response.write(b": heartbeat\n\n")
                continue
            await asyncio.sleep(COALESCE_SECONDS)  # a burst of watch events is one refresh
            woken.clear()
            await response.write(f"event: change\ndata: {json.dumps(hub.version)}\n\n".encode())
    except ConnectionResetError:  # the page went away
        return response
    finally:
        hub.listeners.discard(woken)
    return response


def make_app(hub: Hub, guard: Guard) -> web.Application:
    """The aiohttp application; the hub's feeds start with it."""
    app = web.Application(middlewares=[_guarded])
    app[HUB], app[GUARD] = hub, guard

    async def start(app: web.Application) -> None:
        hub.start(asyncio.get_running_loop())

    async def stop(app: web.Application) -> None:
        hub.stop.set()

    app.on_startup.append(start)
    app.on_shutdown.append(stop)
    app.router.add_get("/", _index)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/api/state", _state)
    app.router.add_get("/api/apps", _apps)
    app.router.add_get("/api/apps/{namespace}/{name}", _app)
    # A POST: it sends server-side dry runs as the user, so it passes the Origin and token checks.
    app.router.add_post("/api/apps/{namespace}/{name}/diff", _diff)
    app.router.add_get("/api/apps/{namespace}/{name}/object", _object)
    app.router.add_post("/api/apps/{namespace}/{name}/object/diff", _object_diff)
    app.router.add_get("/api/apps/{namespace}/{name}/history", _history)
    app.router.add_post("/api/apps/{namespace}/{name}/rollback/{revision}", _rollback)
    app.router.add_post("/api/apps/{namespace}/{name}/{action}", _action)
    app.router.add_get("/api/graph", _graph)
    app.router.add_get("/api/stream", _stream)
    return app
