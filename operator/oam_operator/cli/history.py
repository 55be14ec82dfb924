"""Bodies of ``oam-operator history`` and ``oam-operator rollback`` (docs/operator.md#history-and-rollback).

The revisions are the Application's ControllerRevisions (``api/revisions.py``), found by the
Application's UID; what is printed and decided is ``historyview.py``'s. Exit codes: 0 done,
1 a failure or a refusal (one ``Error:`` line), and for ``rollback --wait`` 3 when the
rolled-back generation ends in Error or the wait times out.

Decisions:

- ``rollback`` writes the revision's spec back with a PUT carrying the resourceVersion it read:
  a change in between is a conflict, refused, never overwritten. The fields that steer the
  operator (``suspend``, ``interval``, ``timeout``, ``revisionHistoryLimit``, ``drift``) keep their live
  values; ``kubernetes.io/change-cause`` becomes the revision's (removed when it had none), as
  ``kubectl rollout undo`` does with a Deployment's template and annotations.
- The operator counts the written spec as a new revision and records which one it restores.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from oam_operator.api.revisions import CHANGE_CAUSE, Revision, read_revision, selector, with_unrecorded
from oam_operator.cli.historyview import (
    RollbackRefused,
    render_documents,
    render_history,
    render_revision,
    rollback_spec,
    rollback_target,
)

if TYPE_CHECKING:
    from oam_operator.cli.kubeclient import Connection

__all__ = ["list_revisions", "rollback_application", "run_history", "run_rollback"]

EXIT_FAILURE, EXIT_NOT_READY = 1, 3


def _error(message: str) -> int:
    click.echo(f"Error: {message}", err=True)
    return EXIT_FAILURE


def list_revisions(conn: Connection, app: dict[str, Any], domain: str) -> list[Revision]:
    """The recorded revisions of ``app`` (oldest first), and its current one while it is not
    recorded yet (``with_unrecorded``)."""
    from kubernetes import client

    from oam_operator.cli.kubeclient import REQUEST_TIMEOUT, ApiFailure

    meta = app.get("metadata") or {}
    namespace, name = str(meta.get("namespace")), str(meta.get("name"))
    try:
        response: Any = client.AppsV1Api(conn.api).list_namespaced_controller_revision(
            namespace, label_selector=selector(domain, str(meta.get("uid") or "")), _preload_content=False,
            _request_timeout=REQUEST_TIMEOUT)
        items = json.loads(response.data).get("items") or []
    except client.ApiException as exc:
        detail = _server_message(exc)
        raise ApiFailure(f'listing the revisions of application "{name}" in namespace "{namespace}": '
                         f"{exc.status} {exc.reason}{': ' + detail if detail else ''}") from exc
    except Exception as exc:
        from oam_operator.cli.kubeclient import describe_api_error

        raise describe_api_error(exc, "listing the revisions of", namespace, name, conn.server) from exc
    return with_unrecorded([read_revision(domain, item) for item in items], app)


def _server_message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body or "").get("message") or "")
    except (TypeError, ValueError, AttributeError):
        return ""


def _connect(kubeconfig: str | None, context: str | None) -> Connection:
    from oam_operator.cli.kubeclient import connect

    return connect(kubeconfig, context)


def run_history(name: str, namespace: str | None, revision: int | None, output: str, kubeconfig: str | None,
                context: str | None, domain: str) -> int:
    """Print the revisions of the Application (or one revision); 0, or 1 on a failure."""
    from oam_operator.cli.kubeclient import ApiFailure, get_application

    try:
        conn = _connect(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    try:
        app = get_application(conn, ns, name)
        revisions = list_revisions(conn, app, domain)
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()
    if revision is not None:
        found = next((r for r in revisions if r.number == revision), None)
        if found is None:
            known = ", ".join(str(r.number) for r in revisions) or "none recorded"
            return _error(f"Application {ns}/{name} has no revision {revision} (revisions: {known})")
        click.echo(render_revision(found, output), nl=False)
        return 0
    current = (app.get("status") or {}).get("revision")
    if output in ("yaml", "json"):
        click.echo(render_documents(revisions, output), nl=False)
    else:
        click.echo(render_history(revisions, current if isinstance(current, int) else None), nl=False)
    return 0


def revision_spec(conn: Connection, namespace: str, name: str, number: int, domain: str) -> dict[str, Any]:
    """The spec revision ``number`` of the live Application applied (``diff --revision``)."""
    from oam_operator.cli.kubeclient import ApiFailure, get_application

    app = get_application(conn, namespace, name)
    revisions = list_revisions(conn, app, domain)
    found = next((r for r in revisions if r.number == number), None)
    if found is None:
        known = ", ".join(str(r.number) for r in revisions) or "none recorded"
        raise ApiFailure(f"Application {namespace}/{name} has no revision {number} (revisions: {known})")
    return rollback_spec(app.get("spec") or {}, found)


def rollback_application(conn: Connection, namespace: str, name: str, to_revision: int | None,
                         domain: str) -> tuple[Revision, Any]:
    """Write a recorded revision's spec back (module doc): the revision and the written generation.
    Raises ``RollbackRefused`` (nothing written) or ``ApiFailure``; ``rollback`` and the UI share it."""
    from kubernetes import client

    from oam_operator.cli.kubeclient import (
        FIELD_MANAGER,
        GROUP,
        PLURAL,
        REQUEST_TIMEOUT,
        VERSION,
        describe_api_error,
        get_application,
    )

    app = get_application(conn, namespace, name)
    target = rollback_target(app, list_revisions(conn, app, domain), to_revision)
    body = dict(app)
    body["spec"] = rollback_spec(app.get("spec") or {}, target)
    meta = body["metadata"] = dict(app.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(CHANGE_CAUSE, None)
    if target.change_cause:
        annotations[CHANGE_CAUSE] = target.change_cause
    meta["annotations"] = annotations
    try:
        written: Any = client.CustomObjectsApi(conn.api).replace_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, name, body, field_manager=FIELD_MANAGER,
            _request_timeout=REQUEST_TIMEOUT)
    except client.ApiException as exc:
        if exc.status == 409:
            raise RollbackRefused(f"Application {namespace}/{name} changed while rolling back; nothing written, "
                                  "try again") from None
        raise describe_api_error(exc, "rolling back", namespace, name, conn.server) from exc
    except Exception as exc:
        raise describe_api_error(exc, "rolling back", namespace, name, conn.server) from exc
    return target, (written.get("metadata") or {}).get("generation")


def run_rollback(name: str, namespace: str | None, to_revision: int | None, wait: bool, timeout: str,
                 kubeconfig: str | None, context: str | None, domain: str) -> int:
    """Write a recorded revision's spec back as a new generation (module doc)."""
    from oam_operator.cli.kubeclient import ApiFailure

    try:
        conn = _connect(kubeconfig, context)
    except ApiFailure as failure:
        return _error(failure.message)
    ns = namespace or conn.namespace
    try:
        try:
            target, generation = rollback_application(conn, ns, name, to_revision, domain)
        except RollbackRefused as refused:
            return _error(str(refused))
        click.echo(f"Application {ns}/{name} rolled back to revision {target.number} (generation {generation})")
        if not wait:
            return 0
        return _wait(conn, ns, name, domain, timeout)
    except ApiFailure as failure:
        return _error(failure.message)
    finally:
        conn.close()


def _wait(conn: Connection, namespace: str, name: str, domain: str, timeout: str) -> int:
    """``--wait``: until the written generation is Ready (0), in Error or timed out (3)."""
    from oam_operator.cli.kubeclient import ApiFailure, get_application
    from oam_operator.cli.statusview import StatusView, build_view, progress_line, wait_for
    from oam_operator.common.durations import parse_go_duration

    printed: list[str] = []

    def progress(view: StatusView) -> None:  # on stderr, each time it changes (as status --wait)
        line = progress_line(view)
        if not printed or printed[-1] != line:
            printed.append(line)
            click.echo(line, err=True)

    result = wait_for(lambda: build_view(get_application(conn, namespace, name), domain),
                      parse_go_duration(timeout).total_seconds(),
                      retry=lambda exc: isinstance(exc, ApiFailure) and exc.transient, on_view=progress)
    if result.timed_out:
        click.echo(f"Timed out after {timeout} waiting for Application {namespace}/{name} to become Ready", err=True)
    elif result.code == 0:
        click.echo(f"Application {namespace}/{name} is Ready: {result.view.message}")
    else:
        click.echo(f"Application {namespace}/{name} failed: {result.view.message}")
    return result.code
