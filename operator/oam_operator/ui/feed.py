"""One list and one watch of a resource kept in memory (docs/ui.md#live-updates): what every page
of the UI reads, so pages and their refreshes add no request to the API server.

A thread lists the resource once, then watches from the list's resourceVersion (with bookmarks);
a watch that ends is resumed from the last version seen, a ``410 Gone`` relists. A failure is kept
as the feed's ``error`` (the page shows it) and retried with a growing pause, never raised."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes.watch.watch import iter_resp_lines

from oam_operator.cli.kubeclient import ApiFailure, Connection, describe_api_error

__all__ = ["Feed", "FeedScope", "Forbidden"]

WATCH_SECONDS = 240
RETRY_FIRST, RETRY_MAX = 1.0, 15.0


class Forbidden(Exception):
    """The user may not list the resource in this scope; ``message`` says so in one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class FeedScope:
    """A resource's collection path: ``/apis/<group>/<version>[/namespaces/<ns>]/<plural>``."""

    prefix: str
    plural: str
    namespace: str | None
    field_selector: str = ""

    def query(self, *pairs: tuple[str, str]) -> list[tuple[str, str]]:
        return [*pairs, *((("fieldSelector", self.field_selector),) if self.field_selector else ())]

    @property
    def path(self) -> str:
        where = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{self.prefix}{where}/{self.plural}"

    @property
    def where(self) -> str:
        return f'in namespace "{self.namespace}"' if self.namespace else "in all namespaces"


@dataclass
class Feed:
    """The objects of one :class:`FeedScope`, keyed ``namespace/name``, kept current by a watch."""

    conn: Connection
    scope: FeedScope
    on_change: Callable[[], None]
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    synced: bool = False
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _get(self, query: list[tuple[str, str]], timeout: Any) -> Any:
        """One GET of the collection, the body not yet read (a watch streams it); a status that is
        not 2xx raises the client's ``ApiException`` with the server's answer."""
        from kubernetes.client import ApiException

        self.requests += 1
        serialized = self.conn.api.param_serialize(
            "GET", self.scope.path, query_params=query, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        response = self.conn.api.call_api(*serialized, _request_timeout=timeout)
        raw = response.response
        if not 200 <= response.status < 300:
            failure = ApiException(http_resp=raw)  # reads the answer before the connection is released
            raw.release_conn()
            raise failure
        return raw

    def describe(self, exc: Exception) -> str:
        """One line for a failed list or watch: the API's answer, or why the server was not reached."""
        from kubernetes.client import ApiException

        if isinstance(exc, ApiException):
            message = _server_message(exc)
            text = f"watching {self.scope.plural} {self.scope.where}: {exc.status} {exc.reason or ''}".rstrip()
            return f"{text}: {message}" if message else text
        failure: ApiFailure = describe_api_error(exc, "watching", "", "", self.conn.server)
        return failure.message

    def list_once(self) -> str:
        """List the collection into ``items``; the resourceVersion to watch from. 403 → :class:`Forbidden`."""
        from kubernetes.client import ApiException

        try:
            raw = self._get(self.scope.query(), 30)
            body = json.loads(raw.data)
            raw.release_conn()
        except ApiException as exc:
            if exc.status == 403:
                message = _server_message(exc) or exc.reason
                raise Forbidden(f"you may not list {self.scope.plural} {self.scope.where}: {message}") from exc
            raise
        with self.lock:
            self.items = {_key(item): item for item in body.get("items") or []}
            self.synced = True
            self.error = None
        self.on_change()
        return str((body.get("metadata") or {}).get("resourceVersion") or "")

    def watch_from(self, version: str, stop: threading.Event) -> str | None:
        """Apply watch events until the watch ends; the last version, or ``None`` after a 410."""
        query = self.scope.query(("watch", "true"), ("allowWatchBookmarks", "true"), ("resourceVersion", version),
                                 ("timeoutSeconds", str(WATCH_SECONDS)))
        response = self._get(query, (10, WATCH_SECONDS + 30))
        try:
            for line in iter_resp_lines(response):  # type: ignore[no-untyped-call]
                if stop.is_set():
                    return version
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    return None if obj.get("code") == 410 else version
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind == "BOOKMARK":
                    continue
                with self.lock:
                    if kind == "DELETED":
                        self.items.pop(_key(obj), None)
                    else:
                        self.items[_key(obj)] = obj
                self.on_change()
        finally:
            response.release_conn()
        return version

    def run(self, stop: threading.Event, version: str | None = None) -> None:
        """List (unless ``version`` comes from a list just made) and watch until ``stop``; failures
        become ``error`` and are retried."""
        pause = RETRY_FIRST
        while not stop.is_set():
            try:
                if version is None:
                    version = self.list_once()
                version = self.watch_from(version, stop)
                pause = RETRY_FIRST
                continue
            except Forbidden as forbidden:
                self.error = forbidden.message
            except Exception as exc:
                try:
                    self.error = self.describe(exc)
                except Exception as other:  # not an API or connection error: still a line, not a trace
                    self.error = f"watching {self.scope.plural} failed: {type(other).__name__}: {other}"
                version = None
            self.on_change()
            stop.wait(pause)
            pause = min(pause * 2, RETRY_MAX)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.items.values())


def _key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


def _server_message(exc: Any) -> str:
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        return str(exc.body or "").strip()
    return str(body.get("message") or "") if isinstance(body, dict) else ""
