"""Whose identity a pass acts with (docs/operator.md#tenancy-and-impersonation; least privilege by default,
docs/operator.md#identity-hostile-input-and-limits).

For an Application in namespace ``ns``:

1. ``spec.serviceAccountName: x`` → impersonate ``system:serviceaccount:ns:x``;
2. else, with ``--require-service-account`` → refuse (``NotPermitted``);
3. else, with ``--use-operator-identity`` → the operator's own identity (the explicit opt-in:
   every tenant allowed to create an Application then gets the operator's rights, confined
   only by the namespace and cluster-scope rules);
4. else, ``--default-service-account`` (default ``default``) → impersonate that account of
   ``ns``; ``--default-service-account ""`` → refuse (``NotPermitted``, its own message).

Deletion (``for_deletion``) never refuses: an Application refused by rules 2 or 4 after its
objects were created (the rule was turned on later) deletes them with the operator's
identity — they were created with it, and the reconciler deletes only objects that carry
this Application's owner label. When the Application's namespace is being deleted the
namespace controller may already have removed the tenant's RoleBinding, so every
impersonated request would be refused: ``inside_namespace`` routes the requests for objects
inside that namespace (and only those) through the operator's identity. That needs an operator
identity that may read Namespaces and delete in that namespace (the chart's full RBAC mode); in
least-privilege mode the read fails (treated as "not terminating") and the deletion ends in
``DeletionRetrying`` with the API's 403 text, which says exactly why.

Impersonating clients share the rate limiter, the thread pool and the request accounting of
the operator's client, and are cached (LRU).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.reconciler.client import ClusterClient

NOT_PERMITTED_MESSAGE = "spec.serviceAccountName is required (the operator runs with --require-service-account)"
NO_DEFAULT_MESSAGE = ("spec.serviceAccountName is required (the operator runs with --default-service-account \"\" "
                      "and without --use-operator-identity)")
CACHE_SIZE = 256


class NotPermitted(Exception):
    """The Application names no ServiceAccount while the operator requires one; ``str()`` says why."""


@dataclass(frozen=True)
class IdentityRule:
    """Rules 1-4 above: which user an Application's pass impersonates. Pure, so admission and
    ``oam-operator diff`` apply it without a client (controller/reconcile/checks.py)."""

    default_service_account: str = "default"
    require_service_account: bool = False
    use_operator_identity: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> IdentityRule:
        return cls(settings.default_service_account, settings.require_service_account,
                   settings.use_operator_identity)

    def user_for(self, namespace: str, service_account: str) -> str | None:
        """The user to impersonate, ``None`` for the operator's identity; raises ``NotPermitted``."""
        if service_account:
            return f"system:serviceaccount:{namespace}:{service_account}"
        if self.require_service_account:
            raise NotPermitted(NOT_PERMITTED_MESSAGE)
        if self.use_operator_identity:
            return None
        if self.default_service_account:
            return f"system:serviceaccount:{namespace}:{self.default_service_account}"
        raise NotPermitted(NO_DEFAULT_MESSAGE)


class TenantClients:
    def __init__(self, operator_client: ClusterClient, *, default_service_account: str = "default",
                 require_service_account: bool = False, use_operator_identity: bool = False) -> None:
        self.operator_client = operator_client
        self.rule = IdentityRule(default_service_account, require_service_account, use_operator_identity)
        self._cache: OrderedDict[str, ClusterClient] = OrderedDict()
        self._lock = threading.Lock()

    def user_for(self, namespace: str, service_account: str) -> str | None:
        return self.rule.user_for(namespace, service_account)

    def for_application(self, namespace: str, service_account: str) -> ClusterClient:
        return self._client(self.user_for(namespace, service_account))

    def for_deletion(self, namespace: str, service_account: str) -> ClusterClient:
        try:
            return self.for_application(namespace, service_account)
        except NotPermitted:
            return self.operator_client

    def inside_namespace(self, client: ClusterClient, namespace: str) -> ClusterClient:
        """``client``, except that requests for objects in ``namespace`` use the operator's identity."""
        user = client.impersonated_user
        if client is self.operator_client or user is None:
            return client
        return self._cached(f"{user} inside {namespace}",
                            lambda: client.routed(self.operator_client, _in_namespace(namespace)))

    def _client(self, user: str | None) -> ClusterClient:
        if user is None:
            return self.operator_client
        return self._cached(user, lambda: self.operator_client.impersonating(user))

    def _cached(self, key: str, make: Callable[[], ClusterClient]) -> ClusterClient:
        with self._lock:
            client = self._cache.pop(key, None)
            if client is None:
                client = make()
            self._cache[key] = client
            while len(self._cache) > CACHE_SIZE:
                _, evicted = self._cache.popitem(last=False)
                evicted.close()
            return client


def _in_namespace(namespace: str) -> Callable[[str], bool]:
    """Whether a request path addresses objects inside ``namespace`` (not the Namespace itself)."""
    marker = f"/namespaces/{namespace}/"

    def inside(path: str) -> bool:
        return marker in path.split("?", 1)[0]

    return inside
