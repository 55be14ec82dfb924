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
and enters the new one's. The handlers carry the same filter (``service/handlers.shard_filter``) as well.

The objects an instance writes carry its shard too (``object_labels``, the reconciler's
``extra_labels``): ``<domain>/shard=NAME`` on a shard's objects, none on the unsharded
instance's. Its watches of owned objects select on it (``owned_selector``), so each instance
lists, follows and caches only its own shard's objects, not the whole fleet's. The label is part
of each object's digest: an Application moved to another shard has every object re-applied,
with the new shard's label, by the new shard's first pass (objects of reconcile policy ``Once``
are never re-applied: they keep the old label, and the new shard's watch does not see them).

ClusterProfiles are not sharded: every instance indexes all of them. An app-dependency on an
Application of another shard is resolved from the API as usual, but its changes do not wake
the dependants at once (they are not in this instance's watch); they see it on their next
pass.
"""

from __future__ import annotations

from oam_operator.controller.reconcile.settings import Settings

__all__ = ["object_labels", "owned_selector", "shard_selector"]


def shard_selector(settings: Settings) -> str:
    """The server-side label selector of the instance's Application watch."""
    label = settings.shard_label
    return f"{label}={settings.shard}" if settings.shard else f"!{label}"


def owned_selector(settings: Settings) -> str:
    """The label selector of the instance's watches of owned objects: the owner label, and the
    instance's shard label (``<domain>/shard=NAME``) or its absence on the unsharded instance."""
    return f"{settings.domain}/owner-id,{shard_selector(settings)}"


def object_labels(settings: Settings, shard: str | None = None) -> dict[str, str | None]:
    """The reconciler's ``extra_labels`` for the objects of an Application of ``shard`` (the
    instance's own shard unless given; ``oam-operator diff`` passes the Application's): the shard
    label, or ``None`` (removed, an authored one too) for the unsharded instance."""
    value = settings.shard if shard is None else shard
    return {settings.shard_label: value or None}
