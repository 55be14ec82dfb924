"""The Notification kind (docs/notifications.md#the-notification-resource): a tenant's wish to hear, through one
provider, when the Applications of its namespace fail, recover, are rolled back, drift or are deleted.

Its status holds the episode state per Application (docs/notifications.md#exactly-once-per-episode): what was
last told, and the messages decided but not yet delivered, so a new leader continues where the last one stopped.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from ..common.dns1123 import DNS1123_SUBDOMAIN_FMT
from .conditions import Condition
from .meta import API_VERSION, API_VERSION_DESCRIPTION, KIND_DESCRIPTION, ApiModel, ObjectMeta, metadata_field

__all__ = ["EventKind", "Notification", "NotificationProvider", "NotificationSpec", "NotificationStatus",
           "NotifiedApplication", "PendingMessage", "ProviderType"]


class EventKind(StrEnum):
    """What a Notification can be told (docs/notifications.md#events)."""

    FAILED = "failed"
    RECOVERED = "recovered"
    ROLLED_BACK = "rolledBack"
    DRIFTED = "drifted"
    DELETED = "deleted"


class ProviderType(StrEnum):
    """Where messages go (docs/notifications.md#providers)."""

    WEBHOOK = "webhook"
    SLACK = "slack"
    MSTEAMS = "msteams"
    CLOUDEVENTS = "cloudevents"


class NotificationProvider(ApiModel):
    """The receiver: its kind, its address, and the Secret holding its credentials."""

    type: ProviderType = Field(description="webhook (JSON, HMAC-signed with a key from the Secret), slack "
                                           "(Slack-compatible incoming webhook), msteams or cloudevents (HTTP, "
                                           "structured mode).")
    address: str | None = Field(default=None, max_length=2048,
                                description="The http(s) URL messages are posted to; the Secret's key address, when "
                                            "present, is used instead (a Slack or Teams URL is itself a credential).")
    secret_ref: str | None = Field(
        default=None, min_length=1, max_length=253, pattern=f"^{DNS1123_SUBDOMAIN_FMT}$",
        description="Name of a Secret in the Notification's namespace: key address (the URL), key hmacKey (the "
                    "webhook's signing key, required by type webhook).")


class NotificationSpec(ApiModel):
    """Which Applications, which events, and the provider."""

    applications: list[str] | None = Field(
        default=None, max_length=100,
        description="Names of the Applications of the namespace to watch (default: every one the selector matches).",
        json_schema_extra={"items": {"type": "string", "maxLength": 253}})
    selector: dict[str, str] | None = Field(
        default=None, description="Labels an Application must carry (matchLabels); with applications, both apply.")
    events: list[EventKind] = Field(
        min_length=1, max_length=5,
        description="The events to send: failed, recovered, rolledBack, drifted, deleted.")
    provider: NotificationProvider = Field(description="Where the messages go.")
    suspend: bool | None = Field(default=None, description="True: nothing is sent and no episode is recorded.")


class PendingMessage(ApiModel):
    """A message decided (its episode recorded) and not yet acknowledged by the provider."""

    id: str = Field(description="Its id, the same on every attempt: receivers may deduplicate by it.")
    event: EventKind = Field(description="The event.")
    message: str = Field(description="What it says.")
    at: str = Field(description="When the state change was seen (RFC 3339).")


class NotifiedApplication(ApiModel):
    """The episode state of one watched Application (docs/notifications.md#exactly-once-per-episode)."""

    name: str = Field(description="The Application's name.")
    uid: str = Field(description="Its uid (a namesake created later starts afresh).")
    failing: bool = Field(default=False, description="A failure episode is open: failed was decided, recovered not.")
    episodes: int = Field(default=0, ge=0, description="Failure episodes seen.",
                          json_schema_extra={"format": "int64"})
    rolled_back: int | None = Field(default=None, description="The last rolled-back revision told.",
                                    json_schema_extra={"format": "int64"})
    drifted: bool = Field(default=False, description="Drift was told and has not ended since.")
    shard: str | None = Field(default=None, description="The shard whose leader tells about it (absent: the "
                                                         "unsharded instance).")
    deleted: bool = Field(default=False, description="The Application is gone; the entry is dropped once its "
                                                     "messages are delivered.")
    pending: list[PendingMessage] | None = Field(default=None, description="Messages not yet delivered, in order.")


class NotificationStatus(ApiModel):
    """Written by the operator's leader only."""

    conditions: list[Condition] | None = Field(
        default=None, description="Condition Ready: True when the last delivery succeeded, else False with the "
                                  "exact reason (InvalidSpec, AddressRefused, DeliveryFailed).")
    applications: list[NotifiedApplication] | None = Field(
        default=None, description="The episode state per watched Application.")
    delivered: int | None = Field(default=None, description="Messages delivered.",
                                  json_schema_extra={"format": "int64"})
    observed_generation: int | None = Field(default=None, description="metadata.generation last read.",
                                            json_schema_extra={"format": "int64"})


class Notification(ApiModel):
    """Tell a receiver when Applications fail, recover, are rolled back, drift or are deleted."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="Notification", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: NotificationSpec = Field(description="What to tell, and where.")
    status: NotificationStatus | None = Field(default=None, description="Written by the operator.")
