"""Body of ``oam-operator ui`` (docs/ui.md): the web view served on this machine with the user's
kubeconfig. A kubeconfig that cannot be used does not stop the server: the page says why (the
same words as the other commands' ``Error:`` lines), so the browser tab that ``--open`` opened is
never a connection error."""

from __future__ import annotations

import secrets
import sys
import webbrowser

import click

__all__ = ["run_ui"]


def run_ui(
    port: int,
    address: str,
    open_browser: bool,
    namespace: str | None,
    all_namespaces: bool,
    kubeconfig: str | None,
    context: str | None,
    domain: str,
) -> int:
    """Serve the UI until interrupted; 1 when the port cannot be bound."""
    from aiohttp import web

    from oam_operator.cli.kubeclient import ApiFailure, connect
    from oam_operator.ui.hub import Hub, Scope
    from oam_operator.ui.security import Guard
    from oam_operator.ui.server import make_app

    fatal: str | None = None
    conn = None
    try:
        conn = connect(kubeconfig, context)
    except ApiFailure as failure:
        fatal = failure.message
        click.echo(f"Error: {fatal} (the page shows it too)", err=True)
    fallback = namespace or (conn.namespace if conn is not None else "default")
    hub = Hub(conn, Scope(None if all_namespaces else fallback, fallback), domain, fatal=fatal)
    guard = Guard(address, port, secrets.token_urlsafe(32))
    url = f"http://{'127.0.0.1' if address in ('0.0.0.0', '::', '') else address}:{port}/"
    if ":" in address:
        url = f"http://[{address}]:{port}/"

    def ready() -> None:
        click.echo(f"oam-operator ui: serving {url} (Ctrl-C to stop)", err=True)
        sys.stderr.flush()
        if open_browser:
            webbrowser.open(url)

    app = make_app(hub, guard)

    async def announce(app: web.Application) -> None:
        ready()

    app.on_startup.append(announce)
    try:
        # Open event streams are cut at once on Ctrl-C or SIGTERM, not after aiohttp's default minute.
        web.run_app(app, host=address, port=port, print=None, handle_signals=True, shutdown_timeout=1.0)
    except OSError as error:
        click.echo(f"Error: cannot listen on {address}:{port}: {error.strerror or error}", err=True)
        return 1
    finally:
        if conn is not None:
            conn.close()
    return 0
