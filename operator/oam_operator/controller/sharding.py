"""Shards: scale-out beyond one operator process, the way Flux does it.

An instance started with ``--shard NAME`` reconciles only the Applications labelled
``<domain>/shard=NAME``; an instance without ``--shard`` only those without the label. So a
fleet is split by labelling Applications, and every Application has exactly one reconciling
instance as long as each shard name has one instance (or one peering group, see
``Settings.peering_name``). An Application labelled for a shard no instance runs is not
reconciled at all; that is the label's meaning, as with Flux.

ClusterProfiles are not sharded: every instance indexes all of them.
"""

from __future__ import annotations

from typing import Any

import kopf

from oam_operator.settings import Settings

__all__ = ["shard_filter"]


def shard_filter(settings: Settings) -> dict[str, Any]:
    """kopf's ``labels=`` filter of the instance's Application handlers."""
    return {settings.shard_label: settings.shard or kopf.ABSENT}

