"""What makes a Notification unable to send (docs/notifications.md#bad-input), said the same way in its status.

The CRD's schema refuses an unknown provider type or event kind already; these checks stand
behind it for an object stored before (or by a client that skipped validation), and cover what
the schema cannot: the address, and the Secret (read by the operator, docs/notifications.md#providers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from oam_operator.api.notification import EventKind, ProviderType

from .notifysend import address_problem

__all__ = ["SpecProblem", "provider_problem"]


class SpecProblem(Exception):
    """A Notification that cannot send: the Ready condition's reason and message."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def provider_problem(provider: Mapping[str, Any], events: Iterable[Any]) -> SpecProblem | None:
    """The first problem of the spec itself (the Secret is read later), or ``None``."""
    kinds = [kind.value for kind in ProviderType]
    if provider.get("type") not in kinds:
        return SpecProblem("InvalidSpec", f"provider type {provider.get('type')!r} does not exist (one of: "
                                          f"{', '.join(kinds)})")
    known = [kind.value for kind in EventKind]
    for event in events:
        if event not in known:
            return SpecProblem("InvalidSpec", f"event kind {event!r} does not exist (one of: {', '.join(known)})")
    if provider.get("type") == "webhook" and not provider.get("secretRef"):
        return SpecProblem("InvalidSpec", "a webhook provider needs spec.provider.secretRef (a Secret with the key "
                                          "hmacKey)")
    address = provider.get("address")
    if address:
        return None if address_problem(str(address)) is None else SpecProblem("InvalidSpec",
                                                                               str(address_problem(str(address))))
    if not provider.get("secretRef"):
        return SpecProblem("InvalidSpec", "the provider has no address: set spec.provider.address or the key "
                                          "address of its Secret")
    return None
