"""Shards: scale-out beyond one operator process, the way Flux does it.

An instance started with ``--shard NAME`` reconciles only the Applications labelled
``<domain>/shard=NAME``; an instance without ``--shard`` only those without the label. So a
fleet is split by labelling Applications, and every Application has exactly one reconciling
instance as long as each shard name has one instance (or one peering group, see
``Settings.peering_name``). An Application labelled for a shard no instance runs is not
reconciled at all; that is the label's meaning, as with Flux.

The split is made on the server: the instance's watch of Applications carries the label
selector (``shard_selector``, kopf's ``settings.watching.label_selectors``), so an instance
never even sees another shard's Applications. That matters beyond traffic: kopf removes its
finalizer from an object no handler of the instance matches, so client-side filters alone
would let every other instance strip a shard's finalizer. A relabelled Application leaves
the old shard's watch (the server sends it as deleted: its loop stops and its memory goes)
and enters the new one's. The handlers carry the same filter (``shard_filter``) as well.

ClusterProfiles are not sharded: every instance indexes all of them. An app-dependency on an
Application of another shard is resolved from the API as usual, but its changes do not wake
the dependants at once (they are not in this instance's watch); they see it on their next
pass.
"""

from __future__ import annotations

from typing import Any

import kopf

from oam_operator.controller.settings import Settings

__all__ = ["shard_filter", "shard_selector"]


def shard_filter(settings: Settings) -> dict[str, Any]:
    """kopf's ``labels=`` filter of the instance's Application handlers."""
    return {settings.shard_label: settings.shard or kopf.ABSENT}



def shard_selector(settings: Settings) -> str:
    """The server-side label selector of the instance's Application watch."""
    label = settings.shard_label
    return f"{label}={settings.shard}" if settings.shard else f"!{label}"
