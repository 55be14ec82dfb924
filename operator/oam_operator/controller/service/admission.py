"""The validating admission webhook of Applications (docs/admission.md).

``refusal`` is the decision: a pure function of the request's Application (and, for an
UPDATE, the stored one) that returns the message the operator would write into the
Application's ``Ready`` condition, or ``None`` to admit it. It runs the apply branch's own
list of checks (``checks.py``, its ``admission`` column) with the operator's transform
(``composition.py``, without the network), so the message ``kubectl apply`` prints is exactly
the one the status would carry.

Decisions:

- Only what the document decides is refused: its nesting depth, the ServiceAccount rule
  (``tenancy.py``), the transform (document, properties, traits, policies, ordering, generated
  objects, the ClusterProfile it uses), the operator's own policies, a self-reference and the
  status size limit. What depends on the cluster's state is left to the status: a missing
  ClusterProfile (``kubectl apply -f dir/`` may create the Application first), APIs not served
  yet (Flux), dependencies on other Applications.
- Admission never fetches the network: a URL source or a ``delivery: template`` chart is
  not read (too slow for a webhook, and a tenant could use the operator as a probe of internal
  addresses). It stands in for the remote content with a placeholder (``DeferringAdapters``),
  so everything else — the whole document and every other component's objects — is checked;
  what the remote content itself holds is refused by the operator in status, as before.
- An UPDATE whose spec is unchanged (labels, annotations, finalizers, the deletion's
  finalizer removal) and any object being deleted are always admitted, so an invalid
  Application stored while the webhook was off can still be relabelled and deleted. A
  suspended Application is admitted: the operator does not transform it either.
- ``spec.revisionHistoryLimit`` outside 0 to 100 is refused before the checks (the CRD schema
  refuses it first; this covers a CRD applied without the bound).
- An Application larger than etcd's request limit is refused before the checks, naming its size
  and the limit (``common/apisize.py``): etcd would refuse it after admission with only
  ``etcdserver: request is too large``, and the transform of megabytes is not worth running.
- An unexpected failure of the check refuses with the message the operator would write for
  it (``Internal error: <type>: <error>``), like any other refusal.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import kopf

from oam_operator.api.compact_inventory import CompactInventoryError
from oam_operator.common.apisize import application_bytes, too_large
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.reconciler.inventory import InventoryItem

from ..reconcile.checks import Subject, Tenancy, first_refusal
from ..reconcile.composition import OperatorTransform
from ..reconcile.history import limit_refusal
from ..reconcile.inventorycodec import read_inventory
from ..reconcile.passes import MAX_MESSAGE
from .bodies import plain

log = logging.getLogger("oam_operator.controller")

WEBHOOK_ID = "validate-applications"
"""kopf's handler id, and so the URL path (``/validate-applications``) the webhook configuration calls."""


@dataclass
class Validator:
    """What ``refusal`` needs from the operator: its settings, transform, ClusterProfiles and identity rules."""

    settings: Settings
    transform: OperatorTransform  # ``OperatorTransform.without_network()`` of the operator's
    profiles: Callable[[str], Mapping[str, Any] | None]
    tenancy: Tenancy
    cluster_id: Callable[[], str]


def _inventory(body: Mapping[str, Any]) -> list[InventoryItem]:
    try:
        return read_inventory(body.get("status") or {})
    except (CompactInventoryError, ValueError, TypeError, KeyError):
        return []  # the operator reports an unreadable inventory itself


def refusal(validator: Validator, operation: str, body: Mapping[str, Any],
            old: Mapping[str, Any] | None = None, subresource: str | None = None) -> str | None:
    """The message refusing this request, or ``None`` to admit it (module docstring)."""
    if operation not in ("CREATE", "UPDATE") or subresource:
        return None
    meta = body.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return None
    spec = body.get("spec") or {}
    if operation == "UPDATE" and old is not None and (old.get("spec") or {}) == spec:
        return None
    too_many = limit_refusal(spec)
    if too_many is not None:
        return too_many
    too_big = too_large(application_bytes(body))  # before the transform of megabytes
    if too_big is not None:
        return too_big
    try:
        message = _checks(validator, body)
    except Exception as error:  # the operator's own message for an unexpected failure
        log.exception("admission check failed unexpectedly")
        message = f"Internal error: {type(error).__name__}: {error}"
    return None if message is None else message.replace("\n", " ")[:MAX_MESSAGE]


def _checks(validator: Validator, body: Mapping[str, Any]) -> str | None:
    subject = Subject(body, validator.settings, validator.transform, validator.profiles, validator.tenancy,
                      validator.cluster_id(), inventory=_inventory(body))
    refused = first_refusal(subject, lambda check: check.admission)
    return None if refused is None else refused.message


def register_admission(registry: kopf.OperatorRegistry, validator: Callable[[], Validator | None]) -> None:
    """The kopf handler: CREATE and UPDATE of ``applications`` (never the status, never DELETE).

    No label filter: every instance, whichever shard it serves, validates every Application
    (the check is the same everywhere; docs/admission.md). ``validator()`` is ``None`` until the
    operator has started; a request before that is refused so the API server retries or applies
    ``failurePolicy``.
    """
    from oam_operator.api.meta import GROUP, VERSION

    logging.getLogger("kopf.objects").addFilter(_KopfRefusalFilter())

    @kopf.on.validate(GROUP, VERSION, "applications", id=WEBHOOK_ID, registry=registry,
                      operations=["CREATE", "UPDATE"], side_effects=False)
    async def validate_application(body: kopf.Body, subresource: str | None, **kwargs: Any) -> None:
        old, operation = kwargs.get("old"), kwargs.get("operation")
        current = validator()
        if current is None:
            raise kopf.AdmissionError("the operator is starting; try again", code=503)
        snapshot, previous = plain(body), (plain(old) if old is not None else None)
        message = await asyncio.get_running_loop().run_in_executor(
            None, refusal, current, operation or "", snapshot, previous, subresource)
        if message is not None:
            meta = snapshot.get("metadata") or {}
            log.info("admission refused", extra={"fields": {
                "namespace": meta.get("namespace"), "name": meta.get("name"), "operation": operation,
                "dry_run": bool(kwargs.get("dryrun")), "reason": message}})
            raise kopf.AdmissionError(message, code=422)


class _KopfRefusalFilter(logging.Filter):
    """Drops kopf's error record for each refusal (a refusal is an answer, not an operator error);
    ``validate_application`` (and ``validate_notification``) log one info line of their own instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith((f"Webhook {WEBHOOK_ID!r} failed permanently",
                                               "Webhook 'validate-notifications' failed permanently"))
