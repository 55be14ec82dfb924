"""The API server's audit log, read as it grows: what each instance wrote, when, and what it answered.

Only events of a namespace of interest are kept, and only the API server's final stage
(``ResponseComplete``; a watch's ``ResponseStarted`` is not a write).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .instances import writer_of

__all__ = ["WRITES", "AuditEvent", "AuditLog"]

WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class AuditEvent:
    verb: str
    resource: str
    subresource: str
    name: str
    code: int
    agent: str
    at: datetime
    request: Any  # a merge patch or object (dict), a JSON patch (list of ops, kopf's), None
    response: dict[str, Any] | None

    @property
    def writer(self) -> str | None:
        """The operator instance that sent it, or None (the run itself, a controller)."""
        return writer_of(self.agent)

    @property
    def sent(self) -> dict[str, Any]:
        """The request as an object (a JSON patch's ops are in ``ops``)."""
        return self.request if isinstance(self.request, dict) else {}

    @property
    def ops(self) -> list[dict[str, Any]]:
        """A JSON patch's operations (none for any other request)."""
        return [op for op in self.request if isinstance(op, dict)] if isinstance(self.request, list) else []

    def status_sent(self) -> dict[str, Any]:
        """The status the write carried: the object's or merge patch's, or what a JSON patch adds or
        replaces at ``/status`` and its keys."""
        status = self.sent.get("status")
        found: dict[str, Any] = dict(status) if isinstance(status, dict) else {}
        for op in self.ops:
            path = str(op.get("path", ""))
            if op.get("op") not in ("add", "replace"):
                continue
            if path == "/status" and isinstance(op.get("value"), dict):
                found.update(op["value"])
            elif path.startswith("/status/") and path.count("/") == 2:
                found[path.removeprefix("/status/")] = op.get("value")
        return found

    def uid_sent(self) -> str | None:
        """The uid the write named as its target's (``metadata.uid``, or a JSON patch's test)."""
        named = (self.sent.get("metadata") or {}).get("uid")
        for op in self.ops:
            if op.get("op") == "test" and op.get("path") == "/metadata/uid":
                named = op.get("value")
        return str(named) if named else None

    def bound_to_uid(self) -> bool:
        """Whether the write carried its target's uid as a precondition (``metadata.uid`` in the
        object or merge patch, or a JSON patch's ``test`` of ``/metadata/uid``)."""
        return bool((self.sent.get("metadata") or {}).get("uid")) or any(
            op.get("op") == "test" and op.get("path") == "/metadata/uid" for op in self.ops)

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300

    @property
    def is_write(self) -> bool:
        return self.verb in WRITES

    def describe(self) -> str:
        target = f"{self.resource}/{self.name}" + (f"/{self.subresource}" if self.subresource else "")
        stamp = self.at.isoformat(timespec="milliseconds")
        return f"{stamp} {self.writer or self.agent} {self.verb} {target} {self.code}"


class AuditLog:
    """The events of ``namespace`` in the log at ``path``; ``refresh`` reads what was appended."""

    def __init__(self, path: Path, namespace: str) -> None:
        self.path = path
        self.namespace = namespace
        self.events: list[AuditEvent] = []
        self._offset = 0

    def refresh(self) -> list[AuditEvent]:
        if not self.path.exists():
            return self.events
        with self.path.open("rb") as log:
            log.seek(self._offset)
            data = log.read()
        end = data.rfind(b"\n") + 1  # a line being written is read next time
        self._offset += end
        for line in data[:end].splitlines():
            try:
                raw = json.loads(line)
            except ValueError:
                continue
            event = _event(raw, self.namespace)
            if event is not None:
                self.events.append(event)
        return self.events

    def writes(self, resource: str | None = None) -> list[AuditEvent]:
        """Successful writes by an operator instance (of ``resource`` when given)."""
        return [e for e in self.refresh() if e.is_write and e.succeeded and e.writer is not None
                and (resource is None or e.resource == resource)]


def _event(raw: dict[str, Any], namespace: str) -> AuditEvent | None:
    ref = raw.get("objectRef") or {}
    if ref.get("namespace") != namespace or raw.get("stage") != "ResponseComplete":
        return None
    writes = raw.get("verb") in WRITES  # a read's body is not kept
    request = raw.get("requestObject") if writes else None
    response = raw.get("responseObject") if writes else None
    return AuditEvent(
        verb=str(raw.get("verb", "")), resource=str(ref.get("resource", "")),
        subresource=str(ref.get("subresource", "")), name=str(ref.get("name", "")),
        code=int((raw.get("responseStatus") or {}).get("code", 0)), agent=str(raw.get("userAgent") or ""),
        at=datetime.fromisoformat(str(raw["stageTimestamp"]).replace("Z", "+00:00")),
        request=request if isinstance(request, (dict, list)) else None,
        response=response if isinstance(response, dict) else None)
