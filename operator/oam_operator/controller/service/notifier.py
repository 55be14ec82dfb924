"""The leader's notification service (docs/notifications.md#how-it-works).

kopf's watches feed it every Notification and every Application this instance sees (standbys
too, so a new leader starts with both). One asyncio task per Notification does the work,
woken by a change of the Notification or of an Application of its namespace, by taking over,
or by its retry timer; only the leader acts, and its requests go through the fenced client.

One round, for one Notification:

1. read the Notification afresh (a new leader must not act on a copy older than the last
   leader's last write), and its provider Secret;
2. compare each selected Application's status with the episode entry (``notifyepisodes.step``);
   when anything changed, **write the entries first**, messages now owed in ``pending``,
   guarded by ``resourceVersion``;
3. deliver the pending messages in order; after each one the provider took, write it off.

So a crash before 2 decides again from the same states (nothing lost, nothing repeated); a
crash between 2 and 3 leaves the message pending for the next leader (nothing lost); only a
crash between the provider's answer and the write-off of 3 sends a message again, with the
same id (docs/notifications.md#the-guarantee).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.meta import GROUP, VERSION
from oam_operator.oam.remote.addresses import AddressPolicy
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

from .bodies import plain
from .notifyepisodes import selects, step
from .notifyproviders import payload, request_for
from .notifysend import DeliveryError, RefusedAddress, address_problem, literal_refusal, post
from .notifyspec import SpecProblem, provider_problem

__all__ = ["Notifier"]

log = logging.getLogger("oam_operator.controller")

RETRY_FIRST = 1.0  # seconds before the first retry of a failed delivery
RETRY_MAX = 300.0  # the retry backoff's ceiling
RECHECK_INVALID = 30.0  # seconds between reads of a Notification that cannot send (a Secret may appear)

Key = tuple[str, str]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _path(namespace: str, name: str, subresource: str = "") -> str:
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/notifications/{name}"
    return f"{path}/{subresource}" if subresource else path


def ready(status: str, reason: str, message: str, previous: Mapping[str, Any] | None, now: str) -> dict[str, Any]:
    """The Ready condition; its transition time is kept while its status stays."""
    kept = previous is not None and previous.get("status") == status and previous.get("lastTransitionTime")
    return {"type": "Ready", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": kept or now}


def kept(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of an Application episodes and selection read (not its inventory): a fleet's
    bodies are not held twice."""
    meta, status = body.get("metadata") or {}, body.get("status") or {}
    copy: dict[str, Any] = plain({
        "metadata": {key: meta.get(key) for key in ("name", "namespace", "uid", "labels")},
        "status": {key: status.get(key) for key in ("state", "conditions", "rolledBack")}})
    return copy


class Notifier:
    """Notifications' episodes and deliveries; its methods run on kopf's event loop."""

    def __init__(self, client: ClusterClient, leading: Callable[[], bool], policy: AddressPolicy,
                 loop: asyncio.AbstractEventLoop, *, shard_label: str = "", shard: str = "") -> None:
        self.client = client
        self.shard_label = shard_label
        self.shard = shard  # docs/notifications.md#shards: each shard's leader tells about its own Applications
        self.leading = leading
        self.policy = policy
        self.loop = loop
        self.apps: dict[Key, dict[str, Any]] = {}
        self.notifications: dict[Key, dict[str, Any]] = {}
        self._wakes: dict[Key, asyncio.Event] = {}
        self._tasks: dict[Key, asyncio.Task[None]] = {}

    # -- fed by kopf's watches --

    def notification_event(self, event_type: str | None, body: dict[str, Any]) -> None:
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if event_type == "DELETED":
            self.notifications.pop(key, None)
            task = self._tasks.pop(key, None)
            self._wakes.pop(key, None)
            if task is not None:
                task.cancel()
            return
        self.notifications[key] = body
        if key not in self._tasks:
            self._wakes[key] = asyncio.Event()
            self._tasks[key] = self.loop.create_task(self._run(key))
        self._wakes[key].set()

    def application_event(self, event_type: str | None, body: Mapping[str, Any]) -> None:
        meta = body.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        key = (namespace, str(meta.get("name") or ""))
        if event_type == "DELETED":
            self.apps.pop(key, None)
        else:
            self.apps[key] = kept(body)
        for (where, _), wake in self._wakes.items():
            if where == namespace:
                wake.set()

    def wake_all_from_thread(self) -> None:
        """On taking over: every Notification is looked at afresh."""
        self.loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for wake in self._wakes.values():
            wake.set()

    async def stop(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- the rounds --

    async def _run(self, key: Key) -> None:
        delay: float | None = None
        failures = 0
        retry_at = 0.0  # a failed delivery is tried again from then on, however often a change wakes the task
        while True:
            wake = self._wakes.get(key)
            if wake is None:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=delay)
            wake.clear()
            if not self.leading():
                delay = None  # taking over wakes every task
                continue
            held = self.loop.time() < retry_at
            try:
                outcome = await self._round(key, deliver=not held)
            except ApiError as error:
                if error.reason == "NotLeader":
                    delay = None
                    continue
                log.info("notification %s/%s: %s", *key, error)
                outcome = "retry"
            except Exception:
                log.exception("notification %s/%s: round failed unexpectedly", *key)
                outcome = "retry"
            if outcome == "done":
                failures, delay, retry_at = 0, None, 0.0
            elif outcome == "invalid":
                failures, delay, retry_at = 0, RECHECK_INVALID, 0.0
            elif outcome == "again":
                delay = 0.0
            elif held:  # decided and persisted; the delivery waits for its retry time
                delay = max(0.0, retry_at - self.loop.time())
            else:
                failures += 1
                delay = min(RETRY_MAX, RETRY_FIRST * 2 ** (failures - 1))
                retry_at = self.loop.time() + delay

    async def _call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.loop.run_in_executor(None, functools.partial(function, *args, **kwargs))

    async def _get(self, path: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = await self._call(self.client.request, "get", "GET", path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return found

    async def _write(self, body: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        """Patch the whole status, guarded by the resourceVersion read; the object as written."""
        meta = body["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        written: dict[str, Any] = await self._call(
            self.client.request, "patch", "PATCH", _path(meta["namespace"], meta["name"], "status"),
            body=patch, content_type="application/merge-patch+json")
        return written

    async def _provider(self, namespace: str, spec: Mapping[str, Any]) -> tuple[str, bytes | None]:
        """The address and HMAC key, from the spec and its Secret; ``SpecProblem`` when they cannot be used."""
        provider = spec.get("provider") or {}
        problem = provider_problem(provider, spec.get("events") or [])
        if problem is not None:
            raise problem
        address = str(provider.get("address") or "")
        key: bytes | None = None
        secret_name = provider.get("secretRef")
        if secret_name:
            secret = await self._get(f"/api/v1/namespaces/{namespace}/secrets/{secret_name}")
            if secret is None:
                raise SpecProblem("SecretNotFound", f"Secret {namespace}/{secret_name} not found")
            data = secret.get("data") or {}
            if "address" in data:
                address = base64.b64decode(data["address"]).decode().strip()
            if "hmacKey" in data:
                key = base64.b64decode(data["hmacKey"])
            if provider.get("type") == "webhook" and key is None:
                raise SpecProblem("SecretNotFound", f"Secret {namespace}/{secret_name} has no key hmacKey "
                                                    "(a webhook provider signs with it)")
        if not address:
            raise SpecProblem("InvalidSpec", "the provider has no address: set spec.provider.address or the key "
                                             "address of its Secret")
        unusable = address_problem(address)
        if unusable is not None:
            raise SpecProblem("InvalidSpec", unusable)
        refusal = literal_refusal(self.policy, address)
        if refusal is not None:
            raise SpecProblem("AddressRefused", refusal)
        return address, key

    def _shard_of(self, app: Mapping[str, Any]) -> str:
        labels = (app.get("metadata") or {}).get("labels") or {}
        return str(labels.get(self.shard_label) or "") if self.shard_label else ""

    def _mine(self, entry: Mapping[str, Any]) -> bool:
        return str(entry.get("shard") or "") == self.shard

    def _entries(self, namespace: str, spec: Mapping[str, Any], old: list[dict[str, Any]],
                 fresh: Mapping[str, dict[str, Any] | None], now: str) -> list[dict[str, Any]]:
        events = set(spec.get("events") or [])
        result: list[dict[str, Any]] = []
        covered: set[str] = set()
        for entry in old:
            app = fresh.get(entry["name"]) if entry["name"] in fresh else self.apps.get((namespace, entry["name"]))
            uid = str(((app or {}).get("metadata") or {}).get("uid") or "")
            if app is not None and uid == entry.get("uid") and self._shard_of(app) != self.shard:
                result.append(entry)  # another shard's Application: its leader tells
                covered.add(uid)
                continue
            if app is None and not self._mine(entry):
                result.append(entry)  # gone: the shard that told about it says so
                continue
            if app is not None and uid == entry.get("uid") and not self._mine(entry):
                entry = {**entry, "shard": self.shard or None}  # moved to this shard: its episode with it
                if entry["shard"] is None:
                    entry.pop("shard")
            if app is not None and uid == entry.get("uid") and not entry.get("deleted"):
                if not selects(spec, app):
                    continue  # no longer selected: forgotten, nothing said
                covered.add(uid)
                app_now: dict[str, Any] | None = app
            else:
                app_now = None  # gone, or a namesake in its place
            new = step(entry, app_now, namespace=namespace, name=entry["name"], events=events, now=now)
            if new is not None:
                result.append(new)
        for (where, name), app in sorted(self.apps.items()):
            uid = str((app.get("metadata") or {}).get("uid") or "")
            if where == namespace and uid not in covered and selects(spec, app) and self._shard_of(app) == self.shard:
                new = step(None, app, namespace=namespace, name=name, events=events, now=now)
                if new is not None:
                    if self.shard:
                        new["shard"] = self.shard
                    result.append(new)
        return result

    async def _round(self, key: Key, *, deliver: bool = True) -> str:
        """One round (module docstring): ``done``, ``invalid``, ``again`` or ``retry`` (also when
        ``deliver`` is false and messages are pending: decided, not yet sent)."""
        namespace, name = key
        body = await self._get(_path(namespace, name))
        if body is None:
            return "done"
        spec = body.get("spec") or {}
        status = dict(body.get("status") or {})
        previous = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        now = _now()
        try:
            address, hmac_key = await self._provider(namespace, spec)
        except SpecProblem as problem:
            await self._settle(body, status, ready("False", problem.reason, problem.message, previous, now))
            return "invalid"
        if spec.get("suspend"):
            return "done"
        old = list(status.get("applications") or [])
        # Entries whose Application this instance does not hold: asked afresh (gone, or not watched yet).
        fresh: dict[str, dict[str, Any] | None] = {}
        for entry in old:
            if (namespace, entry["name"]) not in self.apps:
                fresh[entry["name"]] = await self._get(
                    f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/applications/{entry['name']}")
        entries = self._entries(namespace, spec, old, fresh, now)
        if entries != old:
            status["applications"] = entries or None  # none left: the field goes (a merge patch's null)
            body = await self._write(body, status)  # decided before anything is sent
        if not deliver:
            return "retry" if any(e.get("pending") for e in status.get("applications") or []) else "done"
        try:
            delivered = await self._deliver(body, status, address, hmac_key, previous)
        except ApiError as error:
            if error.status == 409:
                return "again"
            raise
        return "done" if delivered else "retry"

    async def _deliver(self, body: dict[str, Any], status: dict[str, Any], address: str, hmac_key: bytes | None,
                       previous: Mapping[str, Any] | None) -> bool:
        """Send every pending message in order, writing each off; False when one failed (reported)."""
        meta, spec = body["metadata"], body.get("spec") or {}
        provider_type = str((spec.get("provider") or {}).get("type"))
        for index, entry in enumerate(list(status.get("applications") or [])):
            if not self._mine(entry):
                continue
            while entry.get("pending"):
                message = entry["pending"][0]
                facts = payload(meta["namespace"], entry["name"], meta["name"], message)
                request = request_for(provider_type, facts, hmac_key)
                try:
                    if not self.leading():
                        return False
                    await post(self.policy, address, request.body, request.headers)
                except RefusedAddress as error:
                    await self._settle(body, status, ready("False", "AddressRefused", str(error), previous, _now()))
                    return False
                except DeliveryError as error:
                    log.info("notification %s/%s: %s", meta["namespace"], meta["name"], error)
                    await self._settle(body, status, ready("False", "DeliveryFailed", str(error), previous, _now()))
                    return False
                entry = {**entry, "pending": entry["pending"][1:] or None}
                if entry["pending"] is None:
                    entry.pop("pending")
                entries = list(status["applications"])
                entries[index] = entry
                status["applications"] = entries  # a deleted one told is dropped by the next round (step)
                status["delivered"] = int(status.get("delivered") or 0) + 1
                status["conditions"] = [ready("True", "Delivered", f"Delivered {message['event']} of Application "
                                                                   f"{entry['name']}", previous, _now())]
                body = await self._write(body, status)
                previous = status["conditions"][0]
        if previous is None or previous.get("status") != "True":
            await self._settle(body, status, ready("True", "Ready", f"Sending to the {provider_type} provider",
                                                   previous, _now()))
        return True

    async def _settle(self, body: dict[str, Any], status: dict[str, Any], condition: dict[str, Any]) -> None:
        """Write ``condition`` as the Ready condition unless the status says it already."""
        current = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        if current is not None and all(current.get(k) == condition[k] for k in ("status", "reason", "message")):
            return
        status["conditions"] = [condition]
        generation = (body.get("metadata") or {}).get("generation")
        if generation is not None:
            status["observedGeneration"] = generation
        await self._write(body, status)
