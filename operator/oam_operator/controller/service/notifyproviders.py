"""What each provider type receives (docs/notifications.md#providers): the body and headers of one POST.

Every type carries the same facts (``payload``); the JSON webhook sends them as they are,
Slack-compatible and Microsoft Teams receivers get them as a text message, CloudEvents as a
structured-mode event built by the ``cloudevents`` library. With an ``hmacKey`` in the
provider's Secret every body is signed: ``X-Oam-Signature: sha256=<hex HMAC-SHA256 of the
body>``. ``X-Oam-Event-Id`` is the message's id, the same on every attempt, so a receiver can
drop the one duplicate a crash can cause (docs/notifications.md#the-guarantee).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cloudevents.core.bindings.http import to_structured_event
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from oam_operator.api.meta import GROUP, VERSION

__all__ = ["EVENT_TYPE_PREFIX", "Request", "payload", "request_for", "signature"]

EVENT_TYPE_PREFIX = "dev.oam-operator.application."
SIGNATURE_HEADER = "X-Oam-Signature"
ID_HEADER = "X-Oam-Event-Id"


@dataclass(frozen=True)
class Request:
    """One POST: its body and headers (the address is the provider's)."""

    body: bytes
    headers: dict[str, str]


def payload(namespace: str, application: str, notification: str, message: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of one message, as the JSON webhook and the CloudEvent's data carry them."""
    return {"id": message["id"], "event": message["event"], "message": message["message"], "at": message["at"],
            "application": {"namespace": namespace, "name": application},
            "notification": {"namespace": namespace, "name": notification}}


def signature(key: bytes, body: bytes) -> str:
    """The value of ``X-Oam-Signature`` for ``body``."""
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def request_for(provider_type: str, facts: Mapping[str, Any], hmac_key: bytes | None) -> Request:
    """The POST of one message to a provider of ``provider_type`` (a ``ProviderType`` value)."""
    headers = {"Content-Type": "application/json", ID_HEADER: str(facts["id"])}
    if provider_type == "webhook":
        body = _json(facts)
    elif provider_type == "slack":
        body = _json({"text": facts["message"]})
    elif provider_type == "msteams":
        card = {"type": "AdaptiveCard", "version": "1.4",
                "body": [{"type": "TextBlock", "text": facts["message"], "wrap": True}]}
        body = _json({"type": "message", "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}]})
    elif provider_type == "cloudevents":
        app = facts["application"]
        event = CloudEvent({"id": facts["id"], "specversion": "1.0", "type": EVENT_TYPE_PREFIX + facts["event"],
                            "source": f"/apis/{GROUP}/{VERSION}/namespaces/{app['namespace']}/applications/"
                                      f"{app['name']}",
                            "subject": app["name"], "datacontenttype": "application/json"}, dict(facts))
        message = to_structured_event(event, JSONFormat())
        body = message.body
        headers = {**{key.title(): value for key, value in message.headers.items()}, ID_HEADER: str(facts["id"])}
    else:
        raise ValueError(f"unknown provider type {provider_type!r}")
    if hmac_key:
        headers[SIGNATURE_HEADER] = signature(hmac_key, body)
    return Request(body, headers)
