"""The validating admission webhook of Notifications (docs/notifications.md#bad-input, docs/admission.md).

What the spec alone decides is refused at admission with the message the Notification's Ready
condition would carry: a webhook provider without a Secret, an address that does not parse or
is not http(s), no address at all, an address literal the guard refuses (an unknown provider type
or event kind is refused by the CRD's schema first; ``provider_problem`` repeats it for a CRD
applied without the enums). The Secret is not read here: ``kubectl apply -f dir/`` may create the
Notification before its Secret, so a missing Secret or key is said in the status only, and a host
name's addresses are checked when the operator connects (a name can change what it resolves to).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import kopf

from oam_operator.oam.remote.addresses import AddressPolicy

from .bodies import plain
from .notifysend import literal_refusal
from .notifyspec import provider_problem

__all__ = ["WEBHOOK_ID", "notification_refusal", "register_notification_admission"]

log = logging.getLogger("oam_operator.controller")

WEBHOOK_ID = "validate-notifications"
"""kopf's handler id, and so the URL path (``/validate-notifications``) the webhook configuration calls."""


def notification_refusal(policy: AddressPolicy, operation: str, body: Mapping[str, Any],
                         subresource: str | None = None) -> str | None:
    """The message refusing this request, or ``None`` to admit it (module docstring)."""
    if operation not in ("CREATE", "UPDATE") or subresource or (body.get("metadata") or {}).get("deletionTimestamp"):
        return None
    spec = body.get("spec") or {}
    provider = spec.get("provider") or {}
    problem = provider_problem(provider, spec.get("events") or [])
    if problem is not None:
        return problem.message
    address = provider.get("address")
    return literal_refusal(policy, str(address)) if address else None


def register_notification_admission(registry: kopf.OperatorRegistry, policy: Callable[[], AddressPolicy]) -> None:
    """The kopf handler: CREATE and UPDATE of ``notifications`` (never the status, never DELETE)."""
    from oam_operator.api.meta import GROUP, VERSION

    @kopf.on.validate(GROUP, VERSION, "notifications", id=WEBHOOK_ID, registry=registry,
                      operations=["CREATE", "UPDATE"], side_effects=False)
    async def validate_notification(body: kopf.Body, subresource: str | None, **kwargs: Any) -> None:
        snapshot = plain(body)
        message = notification_refusal(policy(), str(kwargs.get("operation") or ""), snapshot, subresource)
        if message is not None:
            meta = snapshot.get("metadata") or {}
            log.info("admission refused", extra={"fields": {
                "namespace": meta.get("namespace"), "name": meta.get("name"), "reason": message}})
            raise kopf.AdmissionError(message, code=422)
