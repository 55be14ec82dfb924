"""Whose identity a pass acts with (operator.md §6).

``spec.serviceAccountName`` → impersonate that ServiceAccount of the Application's namespace;
else the operator's ``--default-service-account``; else, with ``--require-service-account``,
refuse; else the operator's own identity. Impersonating clients share the rate limiter, the
thread pool and the request accounting of the operator's client, and are cached (LRU).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from oam_operator.reconciler.client import ClusterClient

NOT_PERMITTED_MESSAGE = "spec.serviceAccountName is required (the operator runs with --require-service-account)"
CACHE_SIZE = 256


class NotPermitted(Exception):
    """The Application names no ServiceAccount while the operator requires one."""


class TenantClients:
    def __init__(self, operator_client: ClusterClient, *, default_service_account: str = "",
                 require_service_account: bool = False) -> None:
        self.operator_client = operator_client
        self.default_service_account = default_service_account
        self.require_service_account = require_service_account
        self._cache: OrderedDict[str, ClusterClient] = OrderedDict()
        self._lock = threading.Lock()

    def user_for(self, namespace: str, service_account: str) -> str | None:
        account = service_account or self.default_service_account
        if account:
            return f"system:serviceaccount:{namespace}:{account}"
        if self.require_service_account:
            raise NotPermitted(NOT_PERMITTED_MESSAGE)
        return None

    def for_application(self, namespace: str, service_account: str) -> ClusterClient:
        user = self.user_for(namespace, service_account)
        if user is None:
            return self.operator_client
        with self._lock:
            client = self._cache.pop(user, None)
            if client is None:
                client = self.operator_client.impersonating(user)
            self._cache[user] = client
            while len(self._cache) > CACHE_SIZE:
                _, evicted = self._cache.popitem(last=False)
                evicted.close()
            return client
