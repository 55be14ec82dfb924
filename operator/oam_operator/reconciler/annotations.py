"""Policy and order annotations: parsing, kebab normalisation, ranges and exact errors (docs/reconciler.md#annotations).

Authors write policies in any case style (``IfUnowned``, ``if_unowned``, ``SSAMerge``); the
value is normalised the way the Go implementation's ``strcase`` kebab conversion does it, so
a manifest is accepted by both implementations or by neither.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TypeVar

from oam_operator.common.durations import parse_go_duration

from .errors import ObjectValidationError
from .objectpolicies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy
from .status import StatusHintError, StatusHints, parse_status_hints
from .strcase import kebab

__all__ = [
    "MAX_ORDER",
    "MIN_ORDER",
    "NO_PURGE_ORDER",
    "AnnotationDefaults",
    "ObjectAnnotations",
    "annotation_keys",
    "kebab",
    "parse_go_duration",
    "parse_object_annotations",
    "parse_order",
]

MIN_ORDER = -32768
MAX_ORDER = 32767
NO_PURGE_ORDER = 32768
"""Internal value of a missing purge order ("none": never purged)."""

_ORDER_RE = re.compile(r"[+-]?[0-9]+")


def annotation_keys(name: str) -> dict[str, str]:
    """The qualified keys the reconciler named ``name`` reads and writes."""
    return {
        short: f"{name}/{short}"
        for short in (
            "adoption-policy",
            "reconcile-policy",
            "update-policy",
            "delete-policy",
            "reapply-interval",
            "apply-order",
            "purge-order",
            "delete-order",
            "status-hint",
            "owner-id",
            "digest",
        )
    }


def _invalid(key: str, annotation: str, detail: str) -> ObjectValidationError:
    return ObjectValidationError(
        f"error validating object {key}: invalid value for annotation {annotation}: {detail}", object_key=key
    )


_E = TypeVar("_E", bound=StrEnum)


def _parse_policy(
    annotations: Mapping[str, str],
    annotation: str,
    enum: type[_E],
    default: _E,
    key: str,
    *,
    allow_default: bool,
) -> _E:
    raw = annotations.get(annotation)
    if raw is None:
        return default
    normalised = kebab(raw)
    if normalised == "" or (allow_default and normalised == "default"):
        return default
    for member in enum:
        if kebab(member.value) == normalised:
            return member
    raise _invalid(key, annotation, normalised)


def parse_order(raw: str, key: str, annotation: str) -> int:
    """A decimal integer in [-32768, 32767]; anything else raises the docs/reconciler.md#order-annotations messages."""
    if not _ORDER_RE.fullmatch(raw):
        raise _invalid(key, annotation, f"{raw}: not a decimal integer")
    value = int(raw)
    if not MIN_ORDER <= value <= MAX_ORDER:
        raise _invalid(key, annotation, f"{raw}: value {value} not in allowed range [{MIN_ORDER},{MAX_ORDER}]")
    return value


@dataclass(frozen=True)
class AnnotationDefaults:
    """Defaults for absent policy annotations: the reconciler options (docs/reconciler.md#policies)."""

    adoption_policy: AdoptionPolicy = AdoptionPolicy.IF_UNOWNED
    update_policy: UpdatePolicy = UpdatePolicy.REPLACE
    delete_policy: DeletePolicy = DeletePolicy.DELETE
    reapply_interval: timedelta = timedelta(minutes=60)


@dataclass(frozen=True)
class ObjectAnnotations:
    """Everything the reconciler reads from one object's annotations."""

    adoption_policy: AdoptionPolicy
    reconcile_policy: ReconcilePolicy
    update_policy: UpdatePolicy
    delete_policy: DeletePolicy
    reapply_interval: timedelta
    apply_order: int
    purge_order: int
    delete_order: int
    status_hints: StatusHints | None

    @property
    def has_purge_order(self) -> bool:
        return self.purge_order != NO_PURGE_ORDER


def parse_object_annotations(
    annotations: Mapping[str, str], key: str, name: str, defaults: AnnotationDefaults
) -> ObjectAnnotations:
    """Parse in the order of docs/reconciler.md#steps-of-an-apply-call and raise the first error
    (``ObjectValidationError``)."""
    k = annotation_keys(name)
    adoption = _parse_policy(
        annotations, k["adoption-policy"], AdoptionPolicy, defaults.adoption_policy, key, allow_default=False
    )
    reconcile = _parse_policy(
        annotations,
        k["reconcile-policy"],
        ReconcilePolicy,
        ReconcilePolicy.ON_OBJECT_CHANGE,
        key,
        allow_default=False,
    )
    update = _parse_policy(
        annotations, k["update-policy"], UpdatePolicy, defaults.update_policy, key, allow_default=True
    )
    delete = _parse_policy(
        annotations, k["delete-policy"], DeletePolicy, defaults.delete_policy, key, allow_default=True
    )
    reapply_interval = defaults.reapply_interval
    raw_interval = annotations.get(k["reapply-interval"])
    if raw_interval is not None:
        try:
            reapply_interval = parse_go_duration(raw_interval)
        except ValueError:
            raise _invalid(key, k["reapply-interval"], f"{raw_interval}: invalid duration") from None

    def order(short: str, default: int) -> int:
        raw = annotations.get(k[short])
        return default if raw is None else parse_order(raw, key, k[short])

    apply_order = order("apply-order", 0)
    purge_order = order("purge-order", NO_PURGE_ORDER)
    delete_order = order("delete-order", 0)
    hints = None
    raw_hints = annotations.get(k["status-hint"])
    if raw_hints is not None:
        try:
            hints = parse_status_hints(raw_hints)
        except StatusHintError as exc:
            raise ObjectValidationError(f"error validating object {key}: {exc}", object_key=key) from None
    return ObjectAnnotations(
        adoption_policy=adoption,
        reconcile_policy=reconcile,
        update_policy=update,
        delete_policy=delete,
        reapply_interval=reapply_interval,
        apply_order=apply_order,
        purge_order=purge_order,
        delete_order=delete_order,
        status_hints=hints,
    )
