"""One object of an Application's resource tree (docs/ui.md#the-resource-tree): its live manifest,
its Events and its diff, read when the user opens it, like Argo CD's resource tree.

Only an object of the Application's inventory can be opened: the UI shows what the Application
made, not any object the kubeconfig may read. The manifest is what ``kubectl get -o yaml`` prints
without ``managedFields`` (noise), and a Secret's values are replaced by their size: the page is
for looking at a tree, and a screenshot of it must not leak a password. Blocking calls: the server
runs them in a worker thread."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from oam_operator.cli.kubeclient import Connection
from oam_operator.cli.statusview import build_view

__all__ = ["ObjectError", "ObjectRef", "in_inventory", "manifest_text", "object_diff", "object_events",
           "read_object"]


class ObjectError(Exception):
    """An object that cannot be shown; ``message`` is the page's one line, ``status`` the HTTP code."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@dataclass(frozen=True)
class ObjectRef:
    """An inventory item's identity, as the page sends it back (query parameters)."""

    group: str
    version: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> ObjectRef:
        ref = cls(*(query.get(key, "") for key in ("group", "version", "kind", "namespace", "name")))
        if not (ref.version and ref.kind and ref.name):
            raise ObjectError("an object needs version, kind and name (and group, namespace)", 400)
        return ref

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def label(self) -> str:
        """``Kind ns/name`` (``Kind name`` when cluster-scoped): ``oam-operator diff``'s label."""
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def in_inventory(app: Mapping[str, Any], ref: ObjectRef) -> bool:
    """Whether ``ref`` is one of the Application's objects (any bundle, or being pruned)."""
    view = build_view(app)
    items = [*(item for bundle in view.bundles for item in bundle.items), *view.unassigned, *view.pruning]
    return any((item.group, item.version, item.kind, item.namespace, item.name)
               == (ref.group, ref.version, ref.kind, ref.namespace, ref.name) for item in items)


def manifest_text(obj: Mapping[str, Any]) -> str:
    """The object as YAML, without ``metadata.managedFields`` and with a Secret's values hidden."""
    first = ("apiVersion", "kind", "metadata")  # kubectl's order; the rest as the API gave it
    shown = {key: obj[key] for key in first if key in obj} | {k: v for k, v in obj.items() if k not in first}
    metadata = dict(shown.get("metadata") or {})
    metadata.pop("managedFields", None)
    shown["metadata"] = metadata
    if shown.get("kind") == "Secret" and shown.get("apiVersion") == "v1":
        for key in ("data", "stringData"):
            values = shown.get(key)
            if isinstance(values, Mapping):
                shown[key] = {name: f"<hidden: {len(str(value))} characters>" for name, value in values.items()}
    return yaml.safe_dump(shown, sort_keys=False, default_flow_style=False, allow_unicode=True)


_CLIENTS: dict[int, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(conn: Connection) -> Any:
    """One thread-safe client per connection, kept: its discovery cache serves every later object."""
    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.ratelimit import RateLimiter

    with _CLIENTS_LOCK:
        if id(conn) not in _CLIENTS:
            _CLIENTS[id(conn)] = ClusterClient(conn.api, rate_limiter=RateLimiter(0, 1), user_agent="oam-operator-ui")
        return _CLIENTS[id(conn)]


def read_object(conn: Connection, ref: ObjectRef) -> dict[str, Any] | None:
    """The live object (``None`` when it does not exist)."""
    from oam_operator.reconciler.errors import ApiError

    client = _client(conn)
    try:
        resource = client.resource_for(ref.api_version, ref.kind)
        if resource is None:
            raise ObjectError(f"the server does not serve {ref.kind} in {ref.api_version}", 502)
        found: dict[str, Any] | None = client.get(resource, ref.namespace, ref.name)
        return found
    except ApiError as error:
        raise ObjectError(f"reading {ref.label}: {error}", 502) from None


def object_events(conn: Connection, ref: ObjectRef) -> list[dict[str, Any]]:
    """The core/v1 Events about the object, newest first (a field selector: one request)."""
    from oam_operator.reconciler.errors import ApiError

    namespace = ref.namespace or "default"
    selector = f"involvedObject.kind={ref.kind},involvedObject.name={ref.name}"
    client = _client(conn)
    try:
        answer = client.request("read", "GET", f"/api/v1/namespaces/{namespace}/events",
                                query=[("fieldSelector", selector)])
    except ApiError as error:
        raise ObjectError(f"reading the Events of {ref.label}: {error}", 502) from None
    rows = []
    for event in answer.get("items") or []:
        involved = event.get("involvedObject") or {}
        if involved.get("apiVersion", ref.api_version) != ref.api_version:
            continue  # a kind of the same name in another group
        when = event.get("lastTimestamp") or event.get("eventTime") or (event.get("metadata") or {}).get(
            "creationTimestamp") or ""
        rows.append({"type": event.get("type") or "", "reason": event.get("reason") or "",
                     "message": event.get("message") or "", "count": event.get("count") or 1, "time": str(when)})
    return sorted(rows, key=lambda row: row["time"], reverse=True)


#: An object of a fleet Application is a cluster Application: its diff is on its own page.
FLEET_OBJECT_DIFF = "{label} is a cluster Application: open it for the diff on its cluster\n"


def object_diff(conn: Connection, namespace: str, name: str, ref: ObjectRef, domain: str) -> str:
    """The part of ``oam-operator diff NAME -n NAMESPACE`` about this object: its unified diff,
    ``would be created``, ``would be pruned`` or ``no changes``."""
    from oam_operator.cli.diff import DiffError, diff_body, load_body
    from oam_operator.cli.kubeclient import ApiFailure
    from oam_operator.operatorpolicies.topology import declared

    try:
        body, ns = load_body(name, namespace, conn, domain, live_only=True)
        if declared(body.get("spec") or {}) is not None:  # its objects are cluster Applications
            return FLEET_OBJECT_DIFF.format(label=ref.label)
        waves, prunes = diff_body(body, ns, conn, domain)
    except (DiffError, ApiFailure) as error:
        raise ObjectError(getattr(error, "message", None) or str(error), 502) from None
    for wave in waves:
        for label, text in wave.changes:
            if label == ref.label:
                return text
        if ref.label in wave.creates:
            return f"{ref.label} would be created (wave {wave.name})\n"
    if ref.label in prunes:
        return f"{ref.label} would be pruned: the Application no longer makes it\n"
    return "no changes\n"
