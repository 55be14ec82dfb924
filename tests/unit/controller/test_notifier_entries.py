"""Which entries a Notifier's round decides for (controller/service/notifier.py): its own shard's only."""

from __future__ import annotations

import asyncio
from typing import Any

from oam_operator.controller.service.notifier import Notifier, kept
from oam_operator.controller.service.notifysend import notification_policy

SPEC = {"events": ["failed", "recovered", "deleted"], "provider": {"type": "slack", "address": "https://x.example"}}


def app(name: str, uid: str, state: str, shard: str = "") -> dict[str, Any]:
    labels = {"oam-operator.dev/shard": shard} if shard else {}
    return {"metadata": {"name": name, "namespace": "team", "uid": uid, "labels": labels},
            "status": {"state": state, "conditions": [{"type": "Ready", "status": "False", "reason": "Error",
                                                       "message": "bad"}]}}


def notifier(shard: str) -> Notifier:
    loop = asyncio.new_event_loop()
    found = Notifier(None, lambda: True, notification_policy(()), loop,  # type: ignore[arg-type]
                     shard_label="oam-operator.dev/shard", shard=shard)
    loop.close()
    return found


def test_each_shard_decides_for_its_own_applications_only() -> None:
    eu = notifier("eu")
    eu.apps = {("team", "a"): app("a", "ua", "Error", shard="eu"), ("team", "b"): app("b", "ub", "Error")}
    entries = eu._entries("team", SPEC, [], {}, "T1")
    assert [(e["name"], e.get("shard"), [m["event"] for m in e["pending"]]) for e in entries] == [
        ("a", "eu", ["failed"])]


def test_another_shards_entry_is_left_as_it_is_even_when_its_application_is_gone() -> None:
    main = notifier("")
    theirs = {"name": "a", "uid": "ua", "shard": "eu", "failing": True, "episodes": 1}
    assert main._entries("team", SPEC, [theirs], {"a": None}, "T1") == [theirs]
    assert main._entries("team", SPEC, [theirs], {"a": app("a", "ua", "Ready", shard="eu")}, "T1") == [theirs]


def test_an_application_moved_to_this_shard_brings_its_episode() -> None:
    main = notifier("")
    moved = {"name": "a", "uid": "ua", "shard": "eu", "failing": True, "episodes": 1}
    main.apps = {("team", "a"): app("a", "ua", "Error")}
    assert main._entries("team", SPEC, [moved], {}, "T1") == [
        {"name": "a", "uid": "ua", "failing": True, "episodes": 1}]  # no second failed


def test_a_namesake_is_a_deletion_and_a_new_entry() -> None:
    main = notifier("")
    old = {"name": "a", "uid": "ua", "failing": False, "episodes": 0}
    main.apps = {("team", "a"): app("a", "u2", "Error")}
    entries = main._entries("team", SPEC, [old], {}, "T1")
    assert [(e["uid"], [m["event"] for m in e.get("pending") or []]) for e in entries] == [
        ("ua", ["deleted"]), ("u2", ["failed"])]


def test_what_is_kept_of_an_application_is_what_episodes_read() -> None:
    body = {**app("a", "ua", "Error", shard="eu"), "spec": {"components": []}}
    body["status"]["compactInventory"] = {"items": "…"}
    assert kept(body) == {"metadata": {"name": "a", "namespace": "team", "uid": "ua",
                                       "labels": {"oam-operator.dev/shard": "eu"}},
                          "status": {"state": "Error", "conditions": body["status"]["conditions"], "rolledBack": None}}
