"""The hard limits on an Application's size (docs/operator.md#identity-hostile-input-and-limits):
refused before anything is created.

The inventory lives in the Application's status, and the whole Application (spec, status,
metadata) must fit into one etcd request. With the compact encoding
(``api/compact_inventory.py``) an object takes about 75 bytes, so 10,000 objects take about
750 KB. Past ``MAX_OBJECTS``, or when long names would make the inventory larger than
``MAX_INVENTORY_BYTES``, or when the status the Application will hold does not fit beside its
spec and metadata (``ETCD_REQUEST_LIMIT``), the pass ends in ``Error``/``InvalidObjects``
(``Stalled``) with one exact message and ``apply()`` is not called: the status write would fail
after objects were created, leaving the Application without a status.

Objects counted are the union of the desired objects and the inventory's (pruned objects
still take room until they are gone). The status is counted whole: the inventory of those
objects, one ``bundles[]`` entry per bundle, the lists of the last status that grow with the
Application (``drift``, ``dependencies``; a topology's ``clusters`` and ``rollout``,
docs/multicluster.md#topology) and ``STATUS_RESERVE`` for the conditions, summary and
small fields a pass writes. The rest of the Application is measured as the API server stores it:
its JSON without ``status``, managed fields included but those of status writes (``REQUEST_RESERVE``
holds them), so the figures do not change with the first status write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oam_operator.reconciler.inventory import InventoryItem

from .encode import BundlePlan
from .heldfields import entries_bytes, without_status_writes
from .heldfields import json_bytes as json_bytes  # the size measure, where the size tests import it

MAX_OBJECTS = 10_000
MAX_INVENTORY_BYTES = 1_000_000
ENTRY_OVERHEAD = 62  # a compact entry without namespace and name: indices, orders, digest, codes, offset, quotes
#: etcd's default ``--max-request-bytes`` (1.5 MiB): one write of the Application, as stored, must fit.
ETCD_REQUEST_LIMIT = 1_572_864
#: Of that, what the request carries besides the object: etcd's key and transaction, and the
#: managed-fields entry of the operator's own status writes (not yet in a new Application).
REQUEST_RESERVE = 4_096
#: What a pass writes beside the inventory, the bundles and the lists below: conditions, summary,
#: the profile's name, digests, times and counts.
STATUS_RESERVE = 4_096
INVENTORY_HEADER = 96  # format, since, the keys, the policy table of a few policies
#: Status fields counted as the last status has them: those that grow with the Application.
_KEPT = ("drift", "dependencies", "lastHandledReconcileAt", "clusters", "rollout")


def _identity(group: str, kind: str, namespace: str, name: str) -> tuple[str, str, str, str]:
    return group, kind, namespace, name


def _bundle_bytes(bundles: Sequence[BundlePlan]) -> int:
    """``status.bundles`` at its largest (every count as large as the bundle, the longest state)."""
    return json_bytes([{"name": b.name, "dependsOn": list(b.depends_on), "objects": b.objects, "ready": b.objects,
                        "state": "Applying", "waves": {"first": b.first_wave, "last": b.last_wave}}
                       for b in bundles])


def _rest_bytes(application: Mapping[str, Any]) -> int:
    """The size of the Application without its status and without the managed fields of status
    writes (the request reserve holds those): the same figure before and after the first status
    write, and whether its managed fields are held as text or not (``heldfields.py``)."""
    rest = {key: value for key, value in application.items() if key != "status"}
    meta = dict(rest.get("metadata") or {})
    managed = meta.pop("managedFields", None)
    rest["metadata"] = meta
    size = json_bytes(rest)
    if isinstance(managed, list):  # as ``"managedFields":[…]`` among the metadata's keys
        size += len('"managedFields":') + entries_bytes(without_status_writes(managed)) + (1 if meta else 0)
    elif managed is not None:
        size += len('"managedFields":') + json_bytes(managed) + (1 if meta else 0)
    return size


def size_refusal(
    objects: Iterable[Mapping[str, Any]], inventory: Iterable[InventoryItem], namespace: str,
    application: Mapping[str, Any] | None = None, bundles: Sequence[BundlePlan] = (),
) -> str | None:
    """The refusal of an Application too large for its status, else ``None``. Without
    ``application`` (its body) only the objects are counted."""
    entries: dict[tuple[str, str, str, str], int] = {}
    kinds: set[str] = set()
    for obj in objects:
        api_version = str(obj.get("apiVersion") or "")
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        meta = obj.get("metadata") or {}
        name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        entries[_identity(group, str(obj.get("kind") or ""), ns or namespace, name)] = len(ns or namespace) + len(name)
        kinds.add(f"{'' if '/' in api_version else '/'}{api_version}/{obj.get('kind') or ''}")
    for item in inventory:
        key = _identity(item.group, item.kind, item.namespace or namespace, item.name)
        entries.setdefault(key, len(item.namespace) + len(item.name))
        kinds.add(f"{item.group}/{item.version}/{item.kind}")
    count = len(entries)
    if count > MAX_OBJECTS:
        return (f"The Application has {count} objects; at most {MAX_OBJECTS} fit into one Application's status "
                f"(split it into several Applications)")
    size = sum(ENTRY_OVERHEAD + length for length in entries.values())
    if size > MAX_INVENTORY_BYTES:
        return (f"The inventory of the Application's {count} objects would take about {size} bytes of status; "
                f"at most {MAX_INVENTORY_BYTES} fit (use shorter names or split the Application)")
    if application is None:
        return None
    rest = _rest_bytes(application)
    kept = {key: value for key, value in (application.get("status") or {}).items() if key in _KEPT}
    inventory_bytes = size + INVENTORY_HEADER + sum(len(kind) + 3 for kind in kinds)
    status = json_bytes(kept) + inventory_bytes + _bundle_bytes(bundles) + STATUS_RESERVE
    limit = max(0, ETCD_REQUEST_LIMIT - REQUEST_RESERVE - rest)
    if status > limit:
        return (f"The Application's status would be {status} bytes; the limit is {limit} bytes, what is left of "
                f"etcd's request limit of {ETCD_REQUEST_LIMIT} bytes after the spec and metadata ({rest} bytes) "
                f"and {REQUEST_RESERVE} bytes for the request itself (shorten the spec or split the Application)")
    return None
