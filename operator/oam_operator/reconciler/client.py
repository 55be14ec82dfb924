"""The cluster client seam (docs/reconciler.md#the-cluster-client): the only way the reconciler talks to a cluster.

Built on the official client's ``ApiClient`` (configuration, TLS, authentication, request
serialisation). Discovery is our own (see ``discovery.py`` for why). Every request, discovery
included, passes the process-wide token bucket and is counted by verb, method and status, so
tests and benchmarks count requests instead of assuming them.

Events (docs/reconciler.md#events-on-dependent-objects) are posted in the background by the event client's
``EventSender`` (see
``events.py``): ``send_events()`` queues them, ``flush_events()`` waits for them, ``close()``
flushes before it closes the connection pool.
"""

from __future__ import annotations

import copy
import http
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

import urllib3
from kubernetes.client import ApiClient

from . import jsoncodec
from .accounting import RequestAccounting, RequestTiming
from .concurrency import Outcome, default_executor, run_bounded
from .discovery import ApiResource, Discovery
from .errors import ApiError, PermanentApiError, TransientApiError
from .events import EventSender
from .flowcontrol import FlowControl
from .ratelimit import RateLimiter, default_rate_limiter
from .transport import Transport

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MERGE_PATCH",
    "ApiResource",
    "ClusterClient",
    "Page",
    "classify_api_error",
]

log = logging.getLogger("oam_operator.reconciler")

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PAGE_SIZE = 500
# How long ``close()`` waits for queued Events before it closes the connection pool.
EVENT_FLUSH_TIMEOUT = 10.0

_TRANSIENT_STATUSES = frozenset({401, 409, 410, 425, 429, 500, 502, 503, 504})
# Server errors whose text says that the same request will fail the same way again: the
# typed-patch failure of server-side apply (a field of the wrong type), etcd's size limit,
# and an admission webhook that answered with a denial (as opposed to one that could not be
# reached, "failed calling webhook", which is an outage).
_PERMANENT_SERVER_TEXTS = (
    "failed to create typed patch object",
    "etcdserver: request is too large",
    "denied the request",
)
_TYPE_WRITING_GROUPS = frozenset({"apiextensions.k8s.io", "apiregistration.k8s.io"})

T = TypeVar("T")
ObjectList = list[dict[str, Any]]
ResourceList = list[ApiResource]
Page = tuple[ObjectList, str]


def classify_api_error(status: int, read: bool, message: str = "") -> type[ApiError]:
    """docs/reconciler.md#errors: which side of the retry line an HTTP failure falls on.

    A 5xx is an outage and retried, except the few server errors that are deterministic
    refusals of the request (``_PERMANENT_SERVER_TEXTS``): retrying those forever would hide
    the API's message behind ``Retrying``.
    """
    if status >= 500 and any(text in message for text in _PERMANENT_SERVER_TEXTS):
        return PermanentApiError
    if status == 0 or status >= 500 or status in _TRANSIENT_STATUSES:
        return TransientApiError
    if status == 404 and not read:
        return TransientApiError  # missing namespace or type: may appear by itself
    return PermanentApiError


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


class ClusterClient:
    """Thread-safe; shares its rate limiter, thread pool and accounting with the clients
    derived from it by ``impersonating()``."""

    def __init__(
        self,
        api_client: ApiClient,
        *,
        rate_limiter: RateLimiter | None = None,
        executor: Executor | None = None,
        accounting: RequestAccounting | None = None,
        user_agent: str = "oam-operator-reconciler",
        request_timeout: tuple[float, float] = (10.0, 60.0),
        impersonate_user: str | None = None,
        event_client: ClusterClient | None = None,
        flow_control: FlowControl | None = None,
    ) -> None:
        # A private ApiClient over a copy of the configuration: its own connection pool and
        # headers, so impersonation or a caller's use of ``api_client`` never mixes with ours.
        # urllib3 may retry only connection failures: a 429/503 must reach the caller with its
        # Retry-After (docs/reconciler.md#concurrency-and-rate-limiting) instead of being slept on, unlimited and
        # uncounted, inside urllib3.
        configuration = copy.deepcopy(api_client.configuration)
        configuration.retries = urllib3.Retry(
            total=3, connect=3, read=0, redirect=0, status=0, other=0, respect_retry_after_header=False
        )
        self._api = ApiClient(configuration=configuration)
        self._api.user_agent = user_agent
        self._transport = Transport(self._api)
        if impersonate_user:
            self._api.set_default_header("Impersonate-User", impersonate_user)  # type: ignore[no-untyped-call]
        self._user_agent = user_agent
        self._timeout = request_timeout
        self.impersonated_user = impersonate_user
        self.rate_limiter = rate_limiter or default_rate_limiter()
        # Optional: sees every response and may turn the limiter off (flowcontrol.py).
        self.flow_control = flow_control
        self.executor: Executor = executor or default_executor()
        self.accounting = accounting or RequestAccounting()
        self.discovery = Discovery(lambda path: self.request("discovery", "GET", path))
        self._event_client = event_client
        self._event_sender: EventSender | None = None
        self._sender_lock = threading.Lock()

    @classmethod
    def from_kubeconfig(cls, path: str, **kwargs: Any) -> ClusterClient:
        from kubernetes import config

        api = config.new_client_from_config(config_file=path)  # type: ignore[no-untyped-call]
        try:
            return cls(api, **kwargs)
        finally:
            api.close()

    def impersonating(self, user: str) -> ClusterClient:
        """A client acting as ``user`` (e.g. ``system:serviceaccount:ns:name``); Events are
        still written with this client's own identity (docs/reconciler.md#events-on-dependent-objects)."""
        return ClusterClient(
            self._api,
            rate_limiter=self.rate_limiter,
            executor=self.executor,
            accounting=self.accounting,
            user_agent=self._user_agent,
            request_timeout=self._timeout,
            impersonate_user=user,
            event_client=self.event_client,
            flow_control=self.flow_control,
        )

    def routed(self, other: ClusterClient, use_other: Callable[[str], bool]) -> ClusterClient:
        """This client, except that requests whose path ``use_other`` selects go through
        ``other`` (its identity, its connection pool). Used by the operator to delete the
        objects of a namespace being deleted with its own identity once the namespace
        controller has removed the tenant's RoleBinding."""
        return _RoutedClient(self, other, use_other)

    @property
    def event_client(self) -> ClusterClient:
        return self._event_client or self

    def close(self) -> None:
        """Close the connection pool, after the Events this client still has to post (at most
        ``EVENT_FLUSH_TIMEOUT`` seconds)."""
        if self._event_sender is not None:
            self._event_sender.wait(EVENT_FLUSH_TIMEOUT)
        self._api.close()  # type: ignore[no-untyped-call]

    # -- raw requests -------------------------------------------------------------------------

    def request(
        self,
        verb: str,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str | None = None,
        background: bool = False,
    ) -> Any:
        """One HTTP request: rate-limited, counted, decoded; failures raise ``ApiError``.

        ``background`` requests take their token with ``RateLimiter.acquire_idle()``: they
        yield to every request that is waiting for one."""
        if background:
            self.rate_limiter.acquire_idle()
        else:
            self.rate_limiter.acquire()
        self.accounting.started()
        status = 0
        started = time.monotonic()
        try:
            response = self._transport.open(
                method, path, query=query, body=body, timeout=self._timeout,
                headers={"Accept": "application/json", "Content-Type": content_type or "application/json"})
            status = int(response.status)
            if self.flow_control is not None:
                self.flow_control.observe(response.headers)
            data: bytes = response.data
            response.release_conn()
            seconds = time.monotonic() - started
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientApiError(f"connection error: {exc}", status=0, reason="ConnectionError", verb=verb) from None
        finally:
            self.accounting.finished(verb, method, status)
        if self.accounting.observers:
            self.accounting.timed(RequestTiming(verb, method, status, seconds, _retry_after(response.headers)))
        if 200 <= status < 300:
            return jsoncodec.loads(data) if data else {}
        raise self._error(verb, method, status, data, response.headers)

    def watch(self, path: str, *, query: Sequence[tuple[str, str]] = (), timeout: float = 330.0) -> Iterator[Any]:
        """The events of one watch request on the collection ``path`` (``watch=1`` is added),
        decoded, until the server ends the request; ``timeout`` bounds the wait for the next
        bytes. Not rate-limited (one long request), counted once as ``watch``; failures raise
        ``ApiError``."""
        self.accounting.started()
        status = 0
        try:
            response = self._transport.open("GET", path, query=[*query, ("watch", "1")],
                                             headers={"Accept": "application/json"},
                                             timeout=(self._timeout[0], timeout))
            status = int(response.status)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientApiError(f"connection error: {exc}", status=0, reason="ConnectionError",
                                    verb="watch") from None
        finally:
            self.accounting.finished("watch", "GET", status)
        if not 200 <= status < 300:
            data = response.data
            response.release_conn()
            raise self._error("watch", "GET", status, data, response.headers)
        pending = b""
        try:
            for chunk in response.stream(65536):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip():
                        yield jsoncodec.loads(line)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise TransientApiError(f"connection error: {exc}", status=0, reason="ConnectionError",
                                    verb="watch") from None
        finally:
            response.release_conn()

    def _error(
        self, verb: str, method: str, status: int, data: bytes | None, headers: Mapping[str, str] | None
    ) -> ApiError:
        message = ""
        reason = ""
        try:
            body = json.loads(data or b"")
            if isinstance(body, dict):
                message = str(body.get("message") or "")
                reason = str(body.get("reason") or "")
        except ValueError:
            message = (data or b"").decode("utf-8", "replace").strip()
        try:
            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = "Unknown"
        cls = classify_api_error(status, read=method in ("GET", "HEAD"), message=message)
        return cls(
            f"{status} {phrase}: {message}" if message else f"{status} {phrase}",
            status=status,
            reason=reason or phrase,
            verb=verb,
            retry_after=_retry_after(headers),
        )

    # -- typed operations -----------------------------------------------------------------

    def resource_for(self, api_version: str, kind: str) -> ApiResource | None:
        """REST mapping of ``(apiVersion, kind)``, ``None`` for "no match" (docs/reconciler.md#the-cluster-client)."""
        return self.discovery.lookup(api_version, kind)

    def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
        """The live object, or ``None`` when it does not exist (404)."""
        try:
            obj: dict[str, Any] = self.request("get", "GET", resource.path(namespace, name))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise
        return obj

    def list(
        self,
        resource: ApiResource,
        namespace: str = "",
        *,
        label_selector: str | None = None,
        limit: int | None = None,
    ) -> ObjectList:
        """Every matching object (pages of 500 with ``continue``), or at most ``limit``
        objects from one page. Items get ``apiVersion`` and ``kind`` filled in."""
        items: ObjectList = []
        for page, _ in self.list_pages(resource, namespace, label_selector=label_selector, page_size=limit):
            items.extend(page)
            if limit is not None:
                break
        return items

    def list_pages(
        self,
        resource: ApiResource,
        namespace: str = "",
        *,
        label_selector: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Page]:
        """The pages of a LIST (default 500 objects each), one request per page, each with the
        ``continue`` token of the next one (``""`` on the last page). The pages of one LIST are
        one consistent snapshot; a caller may stop early, and no further request is made."""
        cont = ""
        while True:
            query = [("limit", str(page_size or PAGE_SIZE))]
            if label_selector:
                query.append(("labelSelector", label_selector))
            if cont:
                query.append(("continue", cont))
            body = self.request("list", "GET", resource.path(namespace), query=query)
            items: ObjectList = []
            for item in body.get("items") or []:
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
            cont = str((body.get("metadata") or {}).get("continue") or "")
            yield items, cont
            if not cont:
                return

    def _write_query(
        self, field_manager: str, field_validation: str | None, force: bool | None = None
    ) -> Sequence[tuple[str, str]]:
        query = [("fieldManager", field_manager)]
        if field_validation:
            query.append(("fieldValidation", field_validation))
        if force is not None:
            query.append(("force", "true" if force else "false"))
        return query

    def _written(self, resource: ApiResource) -> None:
        if resource.group in _TYPE_WRITING_GROUPS:
            self.discovery.types_changed()

    def create(
        self,
        resource: ApiResource,
        namespace: str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        field_validation: str | None = None,
    ) -> dict[str, Any]:
        self._written(resource)
        result: dict[str, Any] = self.request(
            "create",
            "POST",
            resource.path(namespace),
            query=self._write_query(field_manager, field_validation),
            body=body,
        )
        return result

    def replace(
        self,
        resource: ApiResource,
        namespace: str,
        name: str,
        body: Mapping[str, Any],
        *,
        field_manager: str,
        field_validation: str | None = None,
    ) -> dict[str, Any]:
        self._written(resource)
        result: dict[str, Any] = self.request(
            "update",
            "PUT",
            resource.path(namespace, name),
            query=self._write_query(field_manager, field_validation),
            body=body,
        )
        return result

    def patch(
        self,
        resource: ApiResource,
        namespace: str,
        name: str,
        body: Any,
        *,
        content_type: str,
        field_manager: str,
        field_validation: str | None = None,
        force: bool | None = None,
    ) -> dict[str, Any]:
        """PATCH with a merge patch, a JSON patch or server-side apply (``APPLY_PATCH``)."""
        self._written(resource)
        verb = "apply" if content_type == APPLY_PATCH else "patch"
        result: dict[str, Any] = self.request(
            verb,
            "PATCH",
            resource.path(namespace, name),
            query=self._write_query(field_manager, field_validation, force),
            body=body,
            content_type=content_type,
        )
        return result

    def delete(
        self,
        resource: ApiResource,
        namespace: str,
        name: str,
        *,
        propagation_policy: str = "Background",
        resource_version: str | None = None,
    ) -> bool:
        """DELETE with a ``DeleteOptions`` body; ``False`` when the object was already gone."""
        self._written(resource)
        options: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": propagation_policy,
        }
        if resource_version:
            options["preconditions"] = {"resourceVersion": resource_version}
        try:
            self.request("delete", "DELETE", resource.path(namespace, name), body=options)
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def server_preferred_resources(self) -> ResourceList:
        return self.discovery.server_preferred_resources()

    def resources_for_group_version(self, group_version: str) -> ResourceList:
        group, sep, version = group_version.partition("/")
        return (
            self.discovery.resources_for_group_version(group, version)
            if sep
            else (self.discovery.resources_for_group_version("", group))
        )

    def create_event(self, namespace: str, event: Mapping[str, Any], *, background: bool = False) -> None:
        """POST a core/v1 Event with this client's identity."""
        self.request("event", "POST", f"/api/v1/namespaces/{namespace}/events", body=event, background=background)

    def send_events(self, events: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Queue ``(namespace, event)`` pairs; the event client posts them in the background, in
        order, on the shared pool, as background requests of the rate limiter
        (docs/reconciler.md#events-on-dependent-objects)."""
        if events:
            self.event_client._sender().submit(events)

    def flush_events(self, timeout: float | None = None) -> bool:
        """Wait until every queued Event is posted (or failed); ``False`` on timeout."""
        sender = self.event_client._event_sender
        return sender is None or sender.wait(timeout)

    def _sender(self) -> EventSender:
        with self._sender_lock:
            if self._event_sender is None:
                self._event_sender = EventSender(self)
            return self._event_sender

    def run_bounded(self, tasks: Sequence[Callable[[], T]], limit: int) -> Sequence[Outcome[T]]:
        """Run ``tasks`` on the shared pool with at most ``limit`` in flight."""
        return run_bounded(self.executor, tasks, limit)


class _RoutedClient(ClusterClient):
    """See ``ClusterClient.routed``; every typed operation goes through ``request``."""

    def __init__(self, base: ClusterClient, other: ClusterClient, use_other: Callable[[str], bool]) -> None:
        super().__init__(
            base._api,
            rate_limiter=base.rate_limiter,
            executor=base.executor,
            accounting=base.accounting,
            user_agent=base._user_agent,
            request_timeout=base._timeout,
            impersonate_user=base.impersonated_user,
            event_client=base.event_client,
        )
        self.discovery = base.discovery
        self._other = other
        self._use_other = use_other

    def request(
        self,
        verb: str,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str | None = None,
        background: bool = False,
    ) -> Any:
        if self._use_other(path):
            return self._other.request(verb, method, path, query=query, body=body, content_type=content_type,
                                       background=background)
        return super().request(verb, method, path, query=query, body=body, content_type=content_type,
                               background=background)
