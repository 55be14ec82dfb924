"""One Application as a pass reads it (docs/operator.md#states-and-phases).

kopf hands a pass the Application's body, a dict; the pass, its status writer and the runtime's
epilogue read the same few fields of it — the reference, the uid, the generation, the
annotations, the typed spec. ``Application.of`` reads them once, at the boundary, and the
typed view is what is carried through the pass; the raw body goes only where a document is
needed as written (the transform, the revision history). What is sent back is serialised
where it is sent (the status writer's patch).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from oam_operator.api.application import ApplicationSpec
from oam_operator.api.conditions import ready_condition
from oam_operator.api.meta import application_path

from . import fleetns

__all__ = ["Application", "listed_first", "read_spec", "seen", "settled"]

_SPEC_FIELDS = {"profile": "profile", "serviceAccountName": "service_account_name", "suspend": "suspend",
                "interval": "interval", "timeout": "timeout", "adoptionPolicy": "adoption_policy",
                "updatePolicy": "update_policy", "deletePolicy": "delete_policy", "drift": "drift"}


def read_spec(raw: Mapping[str, Any]) -> ApplicationSpec:
    """The typed spec. The API server validates it against the CRD (generated from the same
    model), so validation fails only for an object that bypassed it (a test, another tool);
    then the fields the pass reads are taken as they are, as lenient as the transform is."""
    try:
        return ApplicationSpec.model_validate(raw)
    except ValidationError:
        fields = {name: raw[key] for key, name in _SPEC_FIELDS.items() if raw.get(key) is not None}
        return ApplicationSpec.model_construct(components=[], **fields)


def seen(meta: Mapping[str, Any], requested_at_key: str) -> tuple[int, str | None, str | None]:
    """What of an Application wakes its loop when it changes (handlers.py): its generation, its
    reconcile-request annotation (``<domain>/requested-at``) and a cluster Application's target
    namespace (fleetns.py: the fleet changes it without a new generation), as the status writer
    records them for the pass it concludes."""
    annotations = meta.get("annotations") or {}
    moved = annotations.get(fleetns.annotation(requested_at_key.rpartition("/")[0]))
    return int(meta.get("generation") or 0), annotations.get(requested_at_key), moved


def settled(body: Mapping[str, Any], requested_at_key: str) -> bool:
    """Whether the persisted status says the Application is done with its current input: Ready,
    the current generation observed, no reconcile request pending. Such an Application's pass
    only confirms what is there, so it may wait behind the others (docs/operator.md#a-quiet-restart)."""
    status = body.get("status") or {}
    ready = ready_condition(status)
    if ready is None or ready.get("status") != "True":
        return False
    meta = body.get("metadata") or {}
    if status.get("observedGeneration") != int(meta.get("generation") or 0):
        return False
    requested = (meta.get("annotations") or {}).get(requested_at_key)
    return requested is None or requested == status.get("lastHandledReconcileAt")


def listed_first(body: Mapping[str, Any], requested_at_key: str) -> bool:
    """Whether kopf gets the Application before the settled ones of its LIST: it is not settled
    (new, changed, not Ready, a reconcile request) or it is being deleted
    (docs/operator.md#a-quiet-restart)."""
    return bool((body.get("metadata") or {}).get("deletionTimestamp")) or not settled(body, requested_at_key)


@dataclass(frozen=True)
class Application:
    """The fields of an Application a pass reads, typed; ``body`` is the document as kopf gave it."""

    namespace: str
    name: str
    uid: str
    generation: int
    annotations: Mapping[str, str]
    finalizers: tuple[str, ...]
    raw_spec: Mapping[str, Any]
    spec: ApplicationSpec
    status: Mapping[str, Any]
    body: Mapping[str, Any]

    @classmethod
    def of(cls, body: Application | Mapping[str, Any]) -> Application:
        """The view of ``body`` (an Application already viewed is returned as it is)."""
        if isinstance(body, Application):
            return body
        meta: Mapping[str, Any] = body.get("metadata") or {}
        raw_spec: Mapping[str, Any] = body.get("spec") or {}
        return cls(namespace=str(meta.get("namespace") or ""), name=str(meta.get("name") or ""),
                   uid=str(meta.get("uid") or ""), generation=int(meta.get("generation") or 1),
                   annotations=meta.get("annotations") or {}, finalizers=tuple(meta.get("finalizers") or ()),
                   raw_spec=raw_spec, spec=read_spec(raw_spec), status=body.get("status") or {}, body=body)

    @property
    def ref(self) -> tuple[str, str]:
        """(namespace, name)."""
        return self.namespace, self.name

    def path(self, subresource: str = "") -> str:
        """Its API path, or its ``subresource``'s (``status``)."""
        return application_path(self.namespace, self.name, subresource)

    @property
    def meta(self) -> Mapping[str, Any]:
        """The body's ``metadata`` as written (for what the typed fields leave out)."""
        return self.body.get("metadata") or {}
