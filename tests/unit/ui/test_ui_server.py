"""The UI server without a cluster: a kubeconfig that cannot be used is a message in the page, refusals
are exact, every asset comes from the package (docs/ui.md)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from oam_operator.ui.hub import Hub, Scope
from oam_operator.ui.security import Guard
from oam_operator.ui.server import make_app
from tools.operatorprocess import free_port

FATAL = 'context "nope" not found in the kubeconfig'
Check = Callable[[TestClient[Any, Any], str], Awaitable[None]]


def with_client(check: Check) -> None:
    async def run() -> None:
        port = free_port()
        hub = Hub(None, Scope("shop", "shop"), "oam-operator.dev", fatal=FATAL)
        server = TestServer(make_app(hub, Guard("127.0.0.1", port, "tok")), host="127.0.0.1", port=port)
        async with TestClient(server) as client:
            await check(client, f"127.0.0.1:{port}")

    asyncio.run(run())


def test_the_page_names_only_its_own_assets_and_carries_the_token_and_a_strict_csp() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        page = await client.get("/")
        text = await page.text()
        assert page.headers["Content-Security-Policy"].startswith("default-src 'self';")
        assert page.headers["X-Frame-Options"] == "DENY"
        assert '<meta name="oam-ui-token" content="tok">' in text
        assert sorted(re.findall(r'(?:src|href)="(/[^"]*)"', text)) == ["/static/app.css", "/static/app.js"]
        assert "http" not in "".join(re.findall(r'(?:src|href)="([^"#]*)"', text))
        for asset, kind in (("/static/app.js", "text/javascript"), ("/static/app.css", "text/css")):
            response = await client.get(asset)
            assert (response.status, response.content_type) == (200, kind)
            assert "https://" not in await response.text()
        assert (await client.get("/static/../server.py")).status == 404
        assert (await client.get("/static/server.py")).status == 404

    with_client(check)


def test_an_unusable_kubeconfig_is_the_pages_message_and_actions_say_it_too() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        state = await (await client.get("/api/state")).json()
        assert (state["fatal"], state["synced"], state["scope"]) == (FATAL, False, 'in namespace "shop"')
        listing = await (await client.get("/api/apps")).json()
        assert listing["rows"] == [] and listing["state"]["fatal"] == FATAL
        missing = await client.get("/api/apps/shop/web")
        assert missing.status == 404
        assert (await missing.json())["error"] == (
            'application "web" not found in namespace "shop" (or not visible to you)')
        page = {"Origin": f"http://{host}", "X-OAM-UI-Token": "tok"}
        answer = await client.post("/api/apps/shop/web/suspend", headers=page)
        assert (answer.status, (await answer.json())["error"]) == (503, FATAL)
        unknown = await client.post("/api/apps/shop/web/delete", headers=page)
        assert (unknown.status, (await unknown.json())["error"]) == (
            404, "unknown action 'delete'; one of reconcile, suspend, resume")

    with_client(check)


def test_cross_origin_changes_and_foreign_hosts_are_refused_before_anything_runs() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        refused = await client.post("/api/apps/shop/web/suspend", headers={"Origin": "http://evil.example"})
        assert (refused.status, (await refused.json())["error"]) == (
            403, f"refused: a change must come from this UI's page (Origin 'http://evil.example', not 'http://{host}')")
        # The diff sends dry runs as the user: another page may not trigger it either.
        foreign_diff = await client.post("/api/apps/shop/web/diff", headers={"Origin": "http://evil.example"})
        assert (foreign_diff.status, (await foreign_diff.json())["error"]) == (
            403, f"refused: a change must come from this UI's page (Origin 'http://evil.example', not 'http://{host}')")
        assert (await client.get("/api/apps/shop/web/diff")).status == 405
        rebound = await client.get("/api/state", headers={"Host": "rebound.example"})
        assert rebound.status == 403
        assert (await rebound.json())["error"] == (
            f"refused: Host 'rebound.example' is not this UI's address ({host})")

    with_client(check)


def test_the_stream_sends_the_hubs_version_first() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        response = await client.get("/api/stream")
        assert response.content_type == "text/event-stream"
        first = await response.content.readuntil(b"\n\n")
        assert first == b"event: change\ndata: 0\n\n"
        response.close()

    with_client(check)


def test_a_rollback_is_a_guarded_post_with_a_numbered_revision_and_history_says_the_kubeconfigs_failure() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        foreign = await client.post("/api/apps/shop/web/rollback/1", headers={"Origin": "http://evil.example"})
        assert (foreign.status, (await foreign.json())["error"]) == (
            403, f"refused: a change must come from this UI's page (Origin 'http://evil.example', not 'http://{host}')")
        no_token = await client.post("/api/apps/shop/web/rollback/1", headers={"Origin": f"http://{host}"})
        assert (no_token.status, (await no_token.json())["error"]) == (
            403, "refused: a change needs this UI's X-OAM-UI-Token header (reload the page)")
        assert (await client.get("/api/apps/shop/web/rollback/1")).status == 405
        page = {"Origin": f"http://{host}", "X-OAM-UI-Token": "tok"}
        odd = await client.post("/api/apps/shop/web/rollback/latest", headers=page)
        assert (odd.status, (await odd.json())["error"]) == (400, "revision must be a number, not 'latest'")
        unusable = await client.post("/api/apps/shop/web/rollback/1", headers=page)
        assert (unusable.status, (await unusable.json())["error"]) == (503, FATAL)
        history = await client.get("/api/apps/shop/web/history")
        assert (history.status, (await history.json())["error"]) == (503, FATAL)

    with_client(check)


def test_an_object_of_the_tree_is_read_only_for_a_known_application_and_its_diff_is_a_guarded_post() -> None:
    async def check(client: TestClient[Any, Any], host: str) -> None:
        query = "?group=apps&version=v1&kind=Deployment&namespace=shop&name=api"
        unknown = await client.get(f"/api/apps/shop/web/object{query}")
        assert (unknown.status, (await unknown.json())["error"]) == (
            404, 'application "web" not found in namespace "shop" (or not visible to you)')
        odd = await client.get("/api/apps/shop/web/object?kind=Deployment")
        assert (odd.status, (await odd.json())["error"]) == (
            400, "an object needs version, kind and name (and group, namespace)")
        foreign = await client.post(f"/api/apps/shop/web/object/diff{query}", headers={"Origin": "http://evil.example"})
        assert (foreign.status, (await foreign.json())["error"]) == (
            403, f"refused: a change must come from this UI's page (Origin 'http://evil.example', not 'http://{host}')")
        page = {"Origin": f"http://{host}", "X-OAM-UI-Token": "tok"}
        diff = await client.post(f"/api/apps/shop/web/object/diff{query}", headers=page)
        assert diff.status == 404

    with_client(check)
