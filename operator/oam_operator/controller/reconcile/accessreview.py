"""Which of the permissions an Application needs its identity lacks, as the API server answers
(docs/operator.md#not-permitted-and-the-role-it-needs).

A 403 names one verb on one resource: the first request refused. To name everything that is
missing in one message, the pass asks the API server a ``SelfSubjectAccessReview`` for every
verb and resource type its objects need (``permissions.required_permissions``), with the
Application's own client: an impersonating client's review is the impersonated account's. Every
authenticated identity may create them (the ``system:basic-user`` ClusterRole). Only a pass
ending in a lasting 403 asks, on the error backoff; the reviews run on the shared pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

from .permissions import Permission, ResourceType, guess_resource

__all__ = ["REVIEW_CONCURRENCY", "REVIEW_PATH", "missing_permissions", "resource_type"]

REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
REVIEW_CONCURRENCY = 8


def resource_type(client: ClusterClient, api_version: str, kind: str) -> ResourceType:
    """The type as discovery maps it; the offline guess when the type is not served (yet)."""
    try:
        found = client.resource_for(api_version, kind)
    except ApiError:
        found = None
    if found is None:
        return guess_resource(api_version, kind)
    return ResourceType(found.group, found.plural, found.namespaced)


def _review(permission: Permission) -> dict[str, Any]:
    attributes = {"verb": permission.verb, "group": permission.resource.group,
                  "resource": permission.resource.plural}
    if permission.namespace:
        attributes["namespace"] = permission.namespace
    if permission.name:
        attributes["name"] = permission.name
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}}


def missing_permissions(client: ClusterClient, needed: Sequence[Permission]) -> list[Permission] | None:
    """The permissions of ``needed`` the API server denies ``client``'s identity, in order;
    ``None`` when it could not be asked (a review refused or failed)."""

    def ask(permission: Permission) -> bool:
        answer = client.request("create", "POST", REVIEW_PATH, body=_review(permission))
        return bool((answer.get("status") or {}).get("allowed"))

    outcomes = client.run_bounded([partial(ask, permission) for permission in needed], REVIEW_CONCURRENCY)
    missing = []
    for permission, outcome in zip(needed, outcomes, strict=True):
        if outcome.error is not None:
            return None
        if not outcome.value:
            missing.append(permission)
    return missing
