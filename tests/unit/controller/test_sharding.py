"""Shard assignment (controller/sharding.py): the label filter of an instance's handlers."""

from __future__ import annotations

import kopf

from oam_operator.controller.settings import Settings
from oam_operator.controller.sharding import shard_filter, shard_selector


def test_the_unsharded_instance_takes_the_unlabelled_applications() -> None:
    assert shard_filter(Settings()) == {"oam-operator.dev/shard": kopf.ABSENT}


def test_a_shard_takes_only_its_own_label_value() -> None:
    assert shard_filter(Settings(shard="a")) == {"oam-operator.dev/shard": "a"}


def test_the_server_side_selectors() -> None:
    assert shard_selector(Settings()) == "!oam-operator.dev/shard"
    assert shard_selector(Settings(shard="blue")) == "oam-operator.dev/shard=blue"
    assert shard_selector(Settings(domain="ops.example.com", shard="eu")) == "ops.example.com/shard=eu"


def test_the_label_follows_the_domain() -> None:
    assert shard_filter(Settings(domain="ops.example.com", shard="eu")) == {"ops.example.com/shard": "eu"}


def _handlers(settings: Settings) -> list[tuple[str, object]]:
    """(resource plural, labels filter) of every resource handler ``register`` installs."""
    from typing import Any, cast

    from oam_operator.controller.handlers import register

    registry = kopf.OperatorRegistry()
    register(registry, cast(Any, object()), settings)
    found = []
    for part in (registry._watching, registry._spawning, registry._changing):
        for handler in part.get_all_handlers():
            found.append((handler.selector.any_name, handler.labels))
    return found


def test_the_reconciling_handlers_carry_the_shard_filter() -> None:
    for settings in (Settings(), Settings(shard="b")):
        handlers = _handlers(settings)
        applications = [labels for plural, labels in handlers if plural == "applications"]
        # The wake-up events, the apply loop and the delete branch.
        assert applications == [shard_filter(settings)] * 3
        # ClusterProfiles are shared by every shard.
        assert [labels for plural, labels in handlers if plural == "clusterprofiles"] == [None]
