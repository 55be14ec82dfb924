"""Bodies of ``oam-operator status`` and ``oam-operator reconcile`` (docs/operator.md#the-command-line).

``commands.py`` declares only their options, so concurrent edits of the other commands never touch
this logic. Each body returns the process exit code; a failure prints ``Error: <message>`` on
stderr (texts in ``kubeclient``) and returns 1.

Decisions:

- ``reconcile`` writes ``<domain>/requested-at`` as RFC 3339 UTC with microseconds
  (``2026-03-01T10:04:05.123456Z``, like Flux's ``reconcile.fluxcd.io/requestedAt``) so two
  requests within one second still differ (the operator reacts to a *new* value only); it warns
  on stderr when the Application is suspended, because the request then waits for the resume.
  ``reconcile --wait`` on a suspended Application is refused at once (exit 2, nothing written),
  as ``flux reconcile`` refuses a suspended object: it could only wait out its timeout.
- ``status --wait`` polls once a second (a GET is cheap and survives API server restarts, which
  a watch would have to re-establish) and, on timeout, prints the last status, then
  ``Timed out after <timeout> waiting for Application <ns>/<name> to become Ready`` on stderr.
- ``status --wait`` and ``reconcile --wait`` print a progress line on stderr each time the
  state, the ready count or the message changes (stdout keeps only the final status, so
  ``-o json`` stays one document), like ``flux reconcile`` does.
- ``reconcile --wait`` waits until the operator handled *this* request (``lastHandledReconcileAt``
  equals the value written) and the Application is Ready (exit 0) or in Error (exit 3), then
  prints the outcome line: ``Application <ns>/<name> reconciled: <Ready message>``, or the error.
- ``suspend``/``resume`` set ``spec.suspend`` with a JSON merge patch (a spec change: the
  operator observes the new generation and reports ``Suspended``, resp. reconciles again).
- ``--domain`` also reads ``OAM_OPERATOR_DOMAIN``, the variable ``oam-operator run`` uses.
- Colour only when stdout is a terminal and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from oam_operator.api.compact_inventory import CompactInventoryError, read_status_inventory
from oam_operator.cli.statusview import (
    EXIT_FAILURE,
    EXIT_READY,
    StatusView,
    build_view,
    exit_code,
    progress_line,
    render_json,
    render_text,
    wait_for,
)
from oam_operator.common.durations import parse_go_duration

if TYPE_CHECKING:
    from oam_operator.cli.kubeclient import Connection
    from oam_operator.cli.plainkube import PlainConnection

__all__ = ["check_timeout", "requested_at_value", "run_reconcile", "run_status", "run_suspend"]


def check_timeout(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Click callback: ``--timeout`` must be a non-negative Go duration (else usage error, exit 2)."""
    try:
        seconds = parse_go_duration(value).total_seconds()
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a duration such as 90s, 5m or 1h30m") from None
    if seconds < 0:
        raise click.BadParameter(f"{value!r} must not be negative")
    return value


def _error(message: str) -> int:
    click.echo(f"Error: {message}", err=True)
    return EXIT_FAILURE


def _connect(kubeconfig: str | None, context: str | None) -> Connection:
    from oam_operator.cli.kubeclient import connect

    return connect(kubeconfig, context)


def _connect_reading(kubeconfig: str | None, context: str | None) -> Connection | PlainConnection:
    """The standard-library path for a plain kubeconfig (no Kubernetes client import), else the client's."""
    from oam_operator.cli.plainkube import connect_plain

    return connect_plain(kubeconfig, context) or _connect(kubeconfig, context)


def _get_application(conn: Connection | PlainConnection, namespace: str, name: str) -> dict[str, Any]:
    from oam_operator.cli import plainkube

    if isinstance(conn, plainkube.PlainConnection):
        return plainkube.get_application(conn, namespace, name)
    from oam_operator.cli import kubeclient

    return kubeclient.get_application(conn, namespace, name)


def run_status(
    name: str,
    namespace: str | None,
    tree: bool,
    output: str,
    wait: bool,
    timeout: str,
    kubeconfig: str | None,
    context: str | None,
    domain: str,
) -> int:
    """Print the Application's state; 0 when Ready, 3 when not, 1 on failure."""
    from oam_operator.cli.apifailure import ApiFailure

    get_application = _get_application
    try:
        conn = _connect_reading(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    timed_out = False
    children: list[dict[str, Any]] | None = None
    read: list[dict[str, Any]] = []  # the Application as last read

    def view_of() -> StatusView:
        read[:] = [get_application(conn, ns, name)]
        return build_view(read[0], domain)

    try:
        if wait:
            result = wait_for(
                view_of,
                parse_go_duration(timeout).total_seconds(),
                retry=lambda exc: isinstance(exc, ApiFailure) and exc.transient,
                on_view=_Progress(),
            )
            view, code, timed_out = result.view, result.code, result.timed_out
            if tree and view.clusters and output == "text" and read:
                children = _cluster_applications(conn, read[0], domain)
        elif output == "inventory":  # the c-o-r JSON shape, decoded from the compact form
            app = get_application(conn, ns, name)
            try:
                items = read_status_inventory(app.get("status") or {})
            except CompactInventoryError as error:
                return _error(str(error))
            click.echo(json.dumps(items, indent=2))
            return exit_code(build_view(app, domain))
        else:
            view = view_of()
            code = exit_code(view)
            if tree and view.clusters and output == "text":
                children = _cluster_applications(conn, read[0], domain)
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    text = render_json(view) if output == "json" else render_text(view, tree=tree, color=color)
    if children is not None:  # a fleet Application: each cluster's tree under it
        from oam_operator.cli.fleetstatus import cluster_tree_lines

        text += "".join(line + "\n" for line in cluster_tree_lines(view, children, domain, color))
    click.echo(text, nl=False)
    if timed_out:
        click.echo(f"Timed out after {timeout} waiting for Application {ns}/{name} to become Ready", err=True)
    return code


def _cluster_applications(conn: Connection | PlainConnection, app: dict[str, Any],
                          domain: str) -> list[dict[str, Any]]:
    """A fleet Application's cluster Applications: one list call by its label (cli/fleetstatus.py)."""
    from oam_operator.cli import plainkube
    from oam_operator.cli.fleetstatus import fleet_selector

    selector = fleet_selector(app, domain)
    meta = app.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    if selector is None:
        return []
    if isinstance(conn, plainkube.PlainConnection):
        return plainkube.list_applications(conn, namespace, selector, name)
    from oam_operator.cli import kubeclient

    return kubeclient.list_applications(conn, namespace, selector, name)


class _Progress:
    """Prints :func:`progress_line` on stderr whenever it differs from the last one printed."""

    def __init__(self) -> None:
        self.last: str | None = None

    def __call__(self, view: StatusView) -> None:
        line = progress_line(view)
        if line != self.last:
            self.last = line
            click.echo(line, err=True)


def requested_at_value(now: datetime | None = None) -> str:
    """RFC 3339 UTC with microseconds, ``Z`` suffix."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_reconcile(
    name: str,
    namespace: str | None,
    kubeconfig: str | None,
    context: str | None,
    domain: str,
    wait: bool = False,
    timeout: str = "5m",
) -> int:
    """Set ``<domain>/requested-at`` to now; 0 on success, 1 on failure.

    With ``wait``: 0 once the request is handled and the Application Ready, 3 on Error or timeout.
    """
    from oam_operator.cli.kubeclient import ApiFailure, annotate_application, get_application

    try:
        conn = _connect(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    key, value = f"{domain}/requested-at", requested_at_value()
    try:
        if wait and _suspended(get_application(conn, ns, name)):
            click.echo(f"Error: {suspended_refusal(ns, name)}", err=True)
            return EXIT_USAGE
        patched = annotate_application(conn, ns, name, {key: value})
        click.echo(f"Requested a reconcile of Application {ns}/{name} ({key}: {value})")
        if wait and _suspended(patched):  # suspended between the read and the write
            click.echo(f"Error: {suspended_refusal(ns, name)}", err=True)
            return EXIT_USAGE
        if _suspended(patched):
            click.echo(
                f"Warning: Application {ns}/{name} is suspended (spec.suspend: true); "
                "the request is handled once it is resumed",
                err=True,
            )
        if not wait:
            return 0
        result = wait_for(
            lambda: build_view(get_application(conn, ns, name), domain),
            parse_go_duration(timeout).total_seconds(),
            retry=lambda exc: isinstance(exc, ApiFailure) and exc.transient,
            on_view=_Progress(),
        )
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()
    view = result.view
    if result.timed_out:
        click.echo(f"Timed out after {timeout} waiting for Application {ns}/{name} to be reconciled", err=True)
    elif result.code == EXIT_READY:
        click.echo(f"Application {ns}/{name} reconciled: {view.message}")
    else:
        click.echo(f"Application {ns}/{name} failed: {view.message}")
    return result.code


EXIT_USAGE = 2


def _suspended(app: dict[str, Any]) -> bool:
    return (app.get("spec") or {}).get("suspend") is True


def suspended_refusal(namespace: str, name: str) -> str:
    """Why ``reconcile --wait`` refuses a suspended Application (docs/operator.md#the-command-line)."""
    return (f"Application {namespace}/{name} is suspended; --wait would wait until it is resumed: resume it first "
            f"(oam-operator resume {name} -n {namespace}), or reconcile without --wait to have it handled on resume")


def run_suspend(
    name: str, namespace: str | None, kubeconfig: str | None, context: str | None, suspend: bool
) -> int:
    """Set (``suspend``) or clear ``spec.suspend``; 0 on success, 1 on failure."""
    from oam_operator.cli.kubeclient import ApiFailure, patch_application

    try:
        conn = _connect(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    try:
        patch_application(conn, ns, name, {"spec": {"suspend": suspend}}, "suspending" if suspend else "resuming")
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()
    click.echo(f"Application {ns}/{name} {'suspended' if suspend else 'resumed'}")
    return 0
