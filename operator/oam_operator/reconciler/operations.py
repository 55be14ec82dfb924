"""Low-level operations on single objects (docs/reconciler.md#object-operations,
docs/reconciler.md#server-side-apply-and-replace): read, create, update, delete,
orphan, and the CRD/APIService finalizer handling.

Each operation counts itself (metrics and the call report) when it starts, wraps API errors
with its context (``error creating object <key>: <API error>``) and emits its Event.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.common.treecopy import copy_tree

from .client import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, ClusterClient, Page
from .discovery import ApiResource
from .errors import ApiError, InstancesExistError, TransientApiError
from .events import EventRecorder
from .identity import hash_owner_id
from .metrics import ReconcilerMetrics
from .objectpolicies import UpdatePolicy
from .objects import API_SERVICE, CRD, ObjectRef
from .ssa import migrate_managed_fields

__all__ = ["Operations", "OpsCounters", "is_terminating", "owner_label"]

log = logging.getLogger("oam_operator.reconciler")

ORPHAN_ATTEMPTS = 3
FINALIZER_ATTEMPTS = 3


def is_terminating(live: Mapping[str, Any]) -> bool:
    return bool((live.get("metadata") or {}).get("deletionTimestamp"))


def owner_label(live: Mapping[str, Any], key: str) -> str:
    return str(((live.get("metadata") or {}).get("labels") or {}).get(key) or "")


@dataclass
class OpsCounters:
    """Thread-safe operation counts and conflicts of one call (feeds the call report)."""

    operations: Counter[str] = field(default_factory=Counter)
    conflicts: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, action: str) -> None:
        with self._lock:
            self.operations[action] += 1

    def conflict(self, key: str) -> None:
        with self._lock:
            if key not in self.conflicts:
                self.conflicts.append(key)


def _is_missing_namespace(exc: ApiError, namespace: str) -> bool:
    return exc.status == 404 and f'namespaces "{namespace}" not found' in exc.message


def _no_match(ref: ObjectRef, verb: str, context: str) -> TransientApiError:
    return TransientApiError(
        f'{context} {ref.key}: no matches for kind "{ref.kind}" in version "{ref.api_version}"',
        status=404,
        reason="NotFound",
        verb=verb,
        object_key=ref.key,
    )


class Operations:
    """The operations of one call: a client, our identity keys, metrics, events, counters."""

    def __init__(
        self,
        *,
        client: ClusterClient,
        field_owner: str,
        finalizer: str,
        owner_id: str,
        hashed_owner_id: str,
        owner_key: str,
        digest_key: str,
        field_validation: str,
        reclaimed_field_managers: tuple[str, ...],
        metrics: ReconcilerMetrics | None,
        events: EventRecorder,
        counters: OpsCounters,
        on_written: Callable[[Mapping[str, Any]], None] | None = None,
        extra_label_keys: tuple[str, ...] = (),
    ) -> None:
        self.client = client
        self.extra_label_keys = extra_label_keys  # removed on release, as the owner label
        self.on_written = on_written
        self.field_owner = field_owner
        self.finalizer = finalizer
        self.owner_id = owner_id
        self.hashed_owner_id = hashed_owner_id
        self.owner_key = owner_key
        self.digest_key = digest_key
        self.field_validation = field_validation
        self.reclaimed = reclaimed_field_managers
        self.metrics = metrics
        self.events = events
        self.counters = counters

    def _start(self, action: str, ref: ObjectRef | None = None) -> None:
        if self.metrics is not None:
            self.metrics.inc(action)
        self.counters.count(action)
        if ref is not None:
            log.debug("%s %s", action, ref.key, extra={"action": action, "object": ref.key})

    # -- ownership --------------------------------------------------------------------------

    def is_ours(self, live: Mapping[str, Any]) -> bool:
        return owner_label(live, self.owner_key) == self.hashed_owner_id

    def foreign_owner(self, live: Mapping[str, Any]) -> str:
        """The other owner, for messages (docs/reconciler.md#adoption-policy): the raw id of the live
        owner-id annotation when it is the one the owner label hashes, else the label itself. The
        label decides ownership; the annotation is only its readable form, which anyone who may
        edit the object can write — even as the caller's own id."""
        label = owner_label(live, self.owner_key)
        raw = str(((live.get("metadata") or {}).get("annotations") or {}).get(self.owner_key) or "")
        return raw if raw and hash_owner_id(raw) == label else label

    def report_conflict(self, ref: ObjectRef, live: Mapping[str, Any]) -> None:
        """A foreign-owned object left alone (docs/reconciler.md#ownership-re-check): report, Event, info log."""
        other = self.foreign_owner(live)
        self.counters.conflict(ref.key)
        log.info("object %s is owned by %s; left unchanged", ref.key, other)
        self.events.emit(live, "Warning", "OwnershipConflict", f"Object is owned by {other}; left unchanged")

    # -- mapping and reads ------------------------------------------------------------------

    def resource(self, ref: ObjectRef, context: str) -> ApiResource | None:
        try:
            return self.client.resource_for(ref.api_version, ref.kind)
        except ApiError as exc:
            raise exc.with_context(f"{context} {ref.key}", ref.key) from None

    def read(self, ref: ObjectRef) -> dict[str, Any] | None:
        """GET; ``None`` when absent or when the type is not served (docs/reconciler.md#reading-objects)."""
        self._start("read", ref)
        resource = self.resource(ref, "error reading object")
        if resource is None:
            return None
        try:
            return self.client.get(resource, ref.namespace, ref.name)
        except ApiError as exc:
            raise exc.with_context(f"error reading object {ref.key}", ref.key) from None

    def list(
        self, resource: ApiResource, namespace: str, label_selector: str, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """LIST in ``namespace`` (all namespaces when empty), paged, or one page of ``limit``."""
        self._start("list")
        try:
            return self.client.list(resource, namespace, label_selector=label_selector, limit=limit)
        except ApiError as exc:
            where = namespace or "all namespaces"
            raise exc.with_context(f"error listing {resource.plural} in {where}") from None

    def list_pages(self, resource: ApiResource, namespace: str, label_selector: str | None) -> Iterator[Page]:
        """The pages of one LIST (docs/reconciler.md#batched-reads), counted once; the caller may stop early."""
        self._start("list")
        try:
            yield from self.client.list_pages(resource, namespace, label_selector=label_selector)
        except ApiError as exc:
            where = namespace or "all namespaces"
            raise exc.with_context(f"error listing {resource.plural} in {where}") from None

    # -- writes -----------------------------------------------------------------------------

    def _prepare(self, desired: Mapping[str, Any], ref: ObjectRef, add_finalizer: bool) -> dict[str, Any]:
        body = copy_tree(dict(desired))
        metadata = body.setdefault("metadata", {})
        metadata.pop("managedFields", None)
        if add_finalizer:
            finalizers = list(metadata.get("finalizers") or [])
            if self.finalizer not in finalizers:
                finalizers.append(self.finalizer)
            metadata["finalizers"] = finalizers
        return body

    def create(
        self, desired: Mapping[str, Any], ref: ObjectRef, policy: UpdatePolicy, *, create_namespace: bool = False
    ) -> dict[str, Any]:
        """docs/reconciler.md#creating-objects: POST, or a non-forced apply born with our ``Apply`` entry for SSA
        policies.

        With ``create_namespace``, a 404 for a missing namespace creates it and retries once
        (the safety net of docs/reconciler.md#missing-namespaces)."""
        self._start("create", ref)
        resource = self.resource(ref, "error creating object")
        if resource is None:
            raise _no_match(ref, "create", "error creating object")
        body = self._prepare(desired, ref, ref.is_type_provider)
        try:
            try:
                created = self._create(resource, ref, body, policy)
            except ApiError as exc:
                if not (create_namespace and ref.namespace and _is_missing_namespace(exc, ref.namespace)):
                    raise
                self.ensure_namespace(ref.namespace)
                created = self._create(resource, ref, body, policy)
        except ApiError as exc:
            raise exc.with_context(f"error creating object {ref.key}", ref.key) from None
        self.events.emit(created, "Normal", "Created", "Object successfully created")
        if self.on_written is not None:
            self.on_written(created)
        return created

    def _create(
        self, resource: ApiResource, ref: ObjectRef, body: dict[str, Any], policy: UpdatePolicy
    ) -> dict[str, Any]:
        if policy.is_ssa:
            # resourceVersion "1": an existing object fails with 409 instead of being merged.
            applied = {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}
            return self.client.patch(
                resource,
                ref.namespace,
                ref.name,
                applied,
                content_type=APPLY_PATCH,
                field_manager=self.field_owner,
                field_validation=self.field_validation,
                force=False,
            )
        return self.client.create(
            resource, ref.namespace, body, field_manager=self.field_owner, field_validation=self.field_validation
        )

    def update(
        self, desired: Mapping[str, Any], live: Mapping[str, Any], ref: ObjectRef, policy: UpdatePolicy
    ) -> dict[str, Any]:
        """docs/reconciler.md#updating-objects: forced server-side apply after the managedFields migration, or PUT."""
        assert not is_terminating(live), f"update of terminating object {ref.key}"
        self._start("update", ref)
        resource = self.resource(ref, "error updating object")
        if resource is None:
            raise _no_match(ref, "update", "error updating object")
        live_meta = live.get("metadata") or {}
        live_finalizers = list(live_meta.get("finalizers") or [])
        body = self._prepare(desired, ref, ref.is_type_provider or self.finalizer in live_finalizers)
        metadata = body["metadata"]
        if not metadata.get("resourceVersion"):
            metadata["resourceVersion"] = live_meta.get("resourceVersion")
        try:
            if policy.is_ssa:
                prefixes = self.reclaimed if policy is UpdatePolicy.SSA_OVERRIDE else ()
                entries, changed = migrate_managed_fields(
                    live_meta.get("managedFields") or [], self.field_owner, prefixes
                )
                if changed:
                    patched = self.client.patch(
                        resource,
                        ref.namespace,
                        ref.name,
                        [
                            {"op": "replace", "path": "/metadata/managedFields", "value": entries},
                            {
                                "op": "replace",
                                "path": "/metadata/resourceVersion",
                                "value": metadata["resourceVersion"],
                            },
                        ],
                        content_type=JSON_PATCH,
                        field_manager=self.field_owner,
                    )
                    metadata["resourceVersion"] = (patched.get("metadata") or {}).get("resourceVersion")
                updated = self.client.patch(
                    resource,
                    ref.namespace,
                    ref.name,
                    body,
                    content_type=APPLY_PATCH,
                    field_manager=self.field_owner,
                    field_validation=self.field_validation,
                    force=True,
                )
            else:
                finalizers = list(metadata.get("finalizers") or [])
                finalizers += [f for f in live_finalizers if f not in finalizers]
                if finalizers:
                    metadata["finalizers"] = finalizers
                updated = self.client.replace(
                    resource,
                    ref.namespace,
                    ref.name,
                    body,
                    field_manager=self.field_owner,
                    field_validation=self.field_validation,
                )
        except ApiError as exc:
            error = exc.with_context(f"error updating object {ref.key}", ref.key)
            self.events.emit(live, "Warning", "UpdateError", f"Error updating object: {error}")
            raise error from None
        # An apply the server found identical keeps the resourceVersion: no change, no Event
        # (a forced reconcile of an Application in sync would otherwise post one per object).
        if (updated.get("metadata") or {}).get("resourceVersion") != live_meta.get("resourceVersion"):
            self.events.emit(updated, "Normal", "Updated", "Object successfully updated")
        if self.on_written is not None:
            self.on_written(updated)
        return updated

    def delete(self, ref: ObjectRef, live: Mapping[str, Any] | None, *, recreating: bool = False) -> None:
        """docs/reconciler.md#deleting-objects: background DELETE guarded by the live resourceVersion; for CRDs and
        APIServices, wait for their instances to be gone, then drop our finalizer."""
        self._start("delete", ref)
        context = "error deleting (while recreating) object" if recreating else "error deleting object"
        try:
            resource = self.resource(ref, context)
            if resource is not None:
                metadata = (live.get("metadata") or {}) if live is not None else {}
                rv = metadata.get("resourceVersion")
                try:
                    self.client.delete(resource, ref.namespace, ref.name, resource_version=rv)
                except ApiError as exc:
                    # An object already terminating is updated by its controllers (a CRD's
                    # Terminating condition), so a repeated DELETE's precondition can be stale.
                    # The deletion is under way either way: go on to the release step.
                    if exc.status != 409 or not metadata.get("deletionTimestamp"):
                        raise
                if ref.is_type_provider:
                    self._release_type_provider(ref, resource)
        except ApiError as exc:
            error = exc.with_context(f"{context} {ref.key}", ref.key)
            if live is not None:
                self.events.emit(live, "Warning", "DeleteError", f"Error deleting object: {error}")
            raise error from None
        except InstancesExistError as exc:
            if live is not None:
                self.events.emit(live, "Warning", "DeleteError", f"Error deleting object: {exc}")
            raise
        log.info("deleted %s", ref.key, extra={"action": "delete", "object": ref.key})
        if live is not None:
            self.events.emit(live, "Normal", "Deleted", "Object successfully deleted")

    def _release_type_provider(self, ref: ObjectRef, resource: ApiResource) -> None:
        for attempt in range(1, FINALIZER_ATTEMPTS + 1):
            current = self.client.get(resource, ref.namespace, ref.name)
            if current is None:
                return
            if self._instances_exist(ref, current):
                what = "custom resource definition" if (ref.group, ref.kind) == CRD else "api service"
                raise InstancesExistError(
                    f"error deleting {what} {ref.key}, existing instances found", object_key=ref.key
                )
            try:
                self.patch_finalizers(ref, resource, current)
                return
            except ApiError as exc:
                if exc.status != 409 or attempt == FINALIZER_ATTEMPTS:
                    raise

    def _instances_exist(self, ref: ObjectRef, provider: Mapping[str, Any]) -> bool:
        spec = provider.get("spec") or {}
        if (ref.group, ref.kind) == CRD:
            served = [v for v in spec.get("versions") or [] if v.get("served")]
            if not served:
                return False
            names = spec.get("names") or {}
            instance_type = ApiResource(
                group=str(spec.get("group")),
                version=str(served[0]["name"]),
                kind=str(names.get("kind")),
                plural=str(names.get("plural")),
                namespaced=False,  # a cluster-wide path lists namespaced instances too
                verbs=(),
            )
            return bool(self.client.list(instance_type, limit=1))
        if (ref.group, ref.kind) == API_SERVICE:
            group, version = str(spec.get("group")), str(spec.get("version"))
            for resource in self.client.discovery.resources_for_group_version(group, version):
                listing = ApiResource(resource.group, resource.version, resource.kind, resource.plural, False, ())
                if self.client.list(listing, limit=1):
                    return True
        return False

    def patch_finalizers(self, ref: ObjectRef, resource: ApiResource, current: Mapping[str, Any]) -> dict[str, Any]:
        """docs/reconciler.md#finalizer-patches: a merge patch with the complete remaining finalizer list (``[]`` clears
        it)."""
        meta = current.get("metadata") or {}
        remaining = [f for f in meta.get("finalizers") or [] if f != self.finalizer]
        return self.client.patch(
            resource,
            ref.namespace,
            ref.name,
            {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": remaining}},
            content_type=MERGE_PATCH,
            field_manager=self.field_owner,
        )

    def orphan(self, ref: ObjectRef, live: Mapping[str, Any] | None) -> None:
        """docs/reconciler.md#orphaning-objects, docs/reconciler.md#released-objects: release an object we own (drop our
        label, annotations, finalizer)."""
        self._start("orphan", ref)
        if live is None:
            return
        try:
            resource = self.resource(ref, "error orphaning object")
            if resource is None:
                return
            current: Mapping[str, Any] | None = live
            for attempt in range(1, ORPHAN_ATTEMPTS + 1):
                if current is None or not self.is_ours(current):
                    return
                meta = current.get("metadata") or {}
                patch_meta: dict[str, Any] = {
                    "resourceVersion": meta.get("resourceVersion"),
                    "labels": {self.owner_key: None, **dict.fromkeys(self.extra_label_keys)},
                    "annotations": {self.owner_key: None, self.digest_key: None},
                }
                if ref.is_type_provider:
                    patch_meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != self.finalizer]
                try:
                    orphaned = self.client.patch(
                        resource,
                        ref.namespace,
                        ref.name,
                        {"metadata": patch_meta},
                        content_type=MERGE_PATCH,
                        field_manager=self.field_owner,
                    )
                except ApiError as exc:
                    if exc.status == 404:
                        return
                    if exc.status != 409 or attempt == ORPHAN_ATTEMPTS:
                        raise
                    current = self.client.get(resource, ref.namespace, ref.name)
                    continue
                log.info("orphaned %s", ref.key, extra={"action": "orphan", "object": ref.key})
                self.events.emit(orphaned, "Normal", "Orphaned", "Object orphaned; ownership metadata removed")
                return
        except ApiError as exc:
            raise exc.with_context(f"error orphaning object {ref.key}", ref.key) from None

    # -- namespaces -------------------------------------------------------------------------

    def ensure_namespace(self, namespace: str) -> None:
        """docs/reconciler.md#missing-namespaces: create a bare namespace (name only) when it is missing."""
        resource = ApiResource("", "v1", "Namespace", "namespaces", False, ())
        try:
            existing = self.client.get(resource, "", namespace)
        except ApiError as exc:
            raise exc.with_context(f"error reading namespace {namespace}") from None
        if existing is not None:
            return
        try:
            self.client.create(
                resource,
                "",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                field_manager=self.field_owner,
                field_validation=self.field_validation,
            )
        except ApiError as exc:
            if exc.status != 409:
                raise exc.with_context(f"error creating namespace {namespace}") from None
        log.info("created namespace %s", namespace)
