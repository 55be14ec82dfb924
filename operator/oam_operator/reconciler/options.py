"""Reconciler options (docs/reconciler.md#options), validated at construction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from .cachedreads import CachedReads
from .metrics import ReconcilerMetrics
from .objectpolicies import AdoptionPolicy, DeletePolicy, MissingNamespacesPolicy, UpdatePolicy
from .objects import ObjectRef
from .status import StatusAnalyzer
from .typeinfo import TypeInfo

__all__ = ["FieldValidation", "ReconcilerOptions", "utc_now"]

FieldValidation = Literal["Strict", "Warn", "Ignore"]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ReconcilerOptions:
    """Unset (``None``) fields take the defaults of docs/reconciler.md#options."""

    field_owner: str | None = None
    finalizer: str | None = None
    adoption_policy: AdoptionPolicy | None = None
    update_policy: UpdatePolicy | None = None
    delete_policy: DeletePolicy | None = None
    missing_namespaces_policy: MissingNamespacesPolicy | None = None
    additional_managed_types: Sequence[TypeInfo] = ()
    reapply_interval: timedelta | None = None
    status_analyzer: StatusAnalyzer | None = None
    metrics: ReconcilerMetrics | None = None
    enable_events: bool | None = None
    concurrency: int = 8
    batch_reads: bool = True
    batch_read_threshold: int = 2
    field_validation: FieldValidation = "Strict"
    reclaimed_field_managers: tuple[str, ...] = ("kubectl",)
    allowed_namespaces: frozenset[str] | None = None
    allow_cluster_scoped: bool = True
    #: The most an existing cluster-scoped object may be adopted, whatever its own policy says:
    #: an object's annotation narrows it, never widens it (docs/reconciler.md#adoption-policy).
    cluster_scoped_adoption_policy: AdoptionPolicy = AdoptionPolicy.NEVER
    clock: Callable[[], datetime] = field(default=utc_now)
    #: Called with every object a create or an update returned (the write's response), so a
    #: caller that keeps copies of live objects can keep them current (docs/reconciler.md#options).
    on_written: Callable[[Mapping[str, Any]], None] | None = None
    #: Labels written onto every object, over authored values; a key mapped to ``None`` is
    #: removed from every object instead (docs/reconciler.md#keys-written-onto-objects).
    extra_labels: Mapping[str, str | None] = field(default_factory=dict)
    #: A watch the caller holds, asked before a read (docs/reconciler.md#reads-from-a-watch).
    cached_reads: CachedReads | None = None
    #: Whether the caller saw the object deleted after it ran to completion; asked before an
    #: absent Job is created again (docs/reconciler.md#finished-jobs).
    completed: Callable[[ObjectRef], bool] | None = None

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first invalid field."""
        checks: list[tuple[str, bool]] = [
            ("field_owner", self.field_owner is None or bool(self.field_owner)),
            ("finalizer", self.finalizer is None or bool(self.finalizer)),
            ("adoption_policy", self.adoption_policy is None or isinstance(self.adoption_policy, AdoptionPolicy)),
            ("update_policy", self.update_policy is None or isinstance(self.update_policy, UpdatePolicy)),
            ("delete_policy", self.delete_policy is None or isinstance(self.delete_policy, DeletePolicy)),
            (
                "missing_namespaces_policy",
                self.missing_namespaces_policy is None
                or isinstance(self.missing_namespaces_policy, MissingNamespacesPolicy),
            ),
            ("additional_managed_types", all(isinstance(t, TypeInfo) for t in self.additional_managed_types)),
            ("reapply_interval", self.reapply_interval is None or isinstance(self.reapply_interval, timedelta)),
            ("concurrency", isinstance(self.concurrency, int) and self.concurrency >= 1),
            ("batch_read_threshold", isinstance(self.batch_read_threshold, int) and self.batch_read_threshold >= 1),
            ("field_validation", self.field_validation in ("Strict", "Warn", "Ignore")),
            ("reclaimed_field_managers", all(isinstance(p, str) and p for p in self.reclaimed_field_managers)),
            (
                "allowed_namespaces",
                self.allowed_namespaces is None or all(isinstance(n, str) and n for n in self.allowed_namespaces),
            ),
            ("cluster_scoped_adoption_policy", isinstance(self.cluster_scoped_adoption_policy, AdoptionPolicy)),
            ("clock", callable(self.clock)),
            ("on_written", self.on_written is None or callable(self.on_written)),
            (
                "extra_labels",
                isinstance(self.extra_labels, Mapping)
                and all(isinstance(k, str) and k and (v is None or isinstance(v, str))
                        for k, v in self.extra_labels.items()),
            ),
            ("cached_reads", self.cached_reads is None or callable(getattr(self.cached_reads, "lookup", None))),
            ("completed", self.completed is None or callable(self.completed)),
        ]
        for name, ok in checks:
            if not ok:
                raise ValueError(f"invalid reconciler option {name}: {getattr(self, name)!r}")
