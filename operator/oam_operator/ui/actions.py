"""What the UI's buttons do (docs/ui.md#actions): the CLI's own requests, with the API server's
answer in a sentence. ``reconcile`` writes ``<domain>/requested-at`` like ``oam-operator reconcile``;
``suspend``/``resume`` patch ``spec.suspend`` like ``oam-operator suspend``/``resume``; ``diff`` is
``oam-operator diff NAME``. Blocking calls: the server runs them in a worker thread."""

from __future__ import annotations

from typing import Any

from oam_operator.cli.kubeclient import ApiFailure, Connection, annotate_application, patch_application

__all__ = ["ACTIONS", "ActionError", "diff_text", "run_action"]

ACTIONS = ("reconcile", "suspend", "resume")


class ActionError(Exception):
    """An action the API server refused or could not be asked; ``message`` is its one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def run_action(conn: Connection, action: str, namespace: str, name: str, domain: str) -> dict[str, Any]:
    """Perform ``action`` on Application ``namespace/name``; the answer the page shows."""
    from oam_operator.cli.status import requested_at_value

    if action not in ACTIONS:
        raise ActionError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    try:
        if action == "reconcile":
            key, value = f"{domain}/requested-at", requested_at_value()
            patched = annotate_application(conn, namespace, name, {key: value})
            message = f"Requested a reconcile of Application {namespace}/{name} ({key}: {value})"
            if (patched.get("spec") or {}).get("suspend") is True:
                message += "; it is suspended: the request is handled once it is resumed"
        else:
            suspend = action == "suspend"
            patched = patch_application(conn, namespace, name, {"spec": {"suspend": suspend}},
                                        "suspending" if suspend else "resuming")
            message = f"Application {namespace}/{name} {'suspended' if suspend else 'resumed'}"
    except ApiFailure as failure:
        raise ActionError(failure.message) from None
    metadata = patched.get("metadata") or {}
    return {"message": message, "resourceVersion": metadata.get("resourceVersion"),
            "generation": metadata.get("generation"), "suspend": (patched.get("spec") or {}).get("suspend") is True}


def diff_text(conn: Connection, namespace: str, name: str, domain: str) -> str:
    """``oam-operator diff NAME -n NAMESPACE``'s output for the live Application."""
    from oam_operator.cli.diff import DiffError, diff_body, load_body, render
    from oam_operator.operatorpolicies.topology import declared

    try:  # live_only: a file named like the Application in the working directory is not read
        body, ns = load_body(name, namespace, conn, domain, live_only=True)
        topology = declared(body.get("spec") or {})
        if topology is not None:  # a fleet Application: each cluster's section (cli/fleetdiff.py)
            from oam_operator.cli.fleetdiff import fleet_diff, render_fleet

            return render_fleet(fleet_diff(body, ns, conn, domain, topology))
        waves, prunes = diff_body(body, ns, conn, domain)
    except (DiffError, ApiFailure) as error:
        raise ActionError(getattr(error, "message", None) or str(error)) from None
    return render(waves, prunes)
