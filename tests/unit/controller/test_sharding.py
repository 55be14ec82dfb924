"""Shard assignment (controller/reconcile/sharding.py): the label filter of an instance's handlers, and the
shard label on the objects it writes, which its watches of owned objects select on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kopf
import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.reconcile.sharding import object_labels, owned_selector, shard_selector
from oam_operator.controller.service.handlers import shard_filter
from oam_operator.controller.service.ownedwatch import OwnedObjects, WatchedKind
from oam_operator.reconciler.client import ClusterClient


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
    from typing import cast

    from oam_operator.controller.service.handlers import register

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


# -- each instance watches only its own shard's objects ---------------------------------------


def test_the_selector_of_the_watches_of_owned_objects() -> None:
    assert owned_selector(Settings()) == "oam-operator.dev/owner-id,!oam-operator.dev/shard"
    assert owned_selector(Settings(shard="s1")) == "oam-operator.dev/owner-id,oam-operator.dev/shard=s1"
    assert owned_selector(Settings(domain="ops.example.com", shard="eu")) == (
        "ops.example.com/owner-id,ops.example.com/shard=eu")


def test_the_labels_stamped_on_the_objects() -> None:
    assert object_labels(Settings(shard="s1")) == {"oam-operator.dev/shard": "s1"}
    assert object_labels(Settings()) == {"oam-operator.dev/shard": None}  # none, an authored one removed
    # oam-operator diff names the Application's shard, whatever the instance's.
    assert object_labels(Settings(), "s2") == {"oam-operator.dev/shard": "s2"}
    assert object_labels(Settings(shard="s1"), "") == {"oam-operator.dev/shard": None}


class Recording:
    """A client whose LIST is empty and whose watch ends at once; records the queries."""

    def __init__(self) -> None:
        self.queries: list[tuple[str, list[tuple[str, str]]]] = []

    def request(self, verb: str, method: str, path: str, *, query: Any = (), **_: Any) -> dict[str, Any]:
        self.queries.append(("list", list(query)))
        return {"items": [], "metadata": {"resourceVersion": "7"}}

    def watch(self, path: str, *, query: Any = ()) -> Iterator[dict[str, Any]]:
        self.queries.append(("watch", list(query)))
        yield {"type": "ERROR", "object": {}}


def test_the_list_and_the_watch_of_owned_objects_carry_the_selector() -> None:
    client = Recording()
    selector = owned_selector(Settings(shard="s1"))
    owned = OwnedObjects(client, domain="oam-operator.dev", cluster_id="c", namespaces=("shop",),  # type: ignore[arg-type]
                         on_change=lambda *_: None, selector=selector)
    kind = WatchedKind("", "v1", "configmaps", "ConfigMap")
    owned._register(kind)
    path = kind.path("shop")
    owned._follow(kind, path, owned._list(kind, "shop", path))
    assert [(what, dict(query)["labelSelector"]) for what, query in client.queries] == [
        ("list", selector), ("watch", selector)]


def test_the_runtime_watches_with_its_shards_selector(monkeypatch: pytest.MonkeyPatch) -> None:
    from oam_operator.controller.service import runtime

    monkeypatch.setattr(runtime.OwnedObjects, "start", lambda self, kinds: None)  # no threads
    for settings in (Settings(cluster_id="c"), Settings(cluster_id="c", shard="s1")):
        configuration = Configuration()
        configuration.host = "http://127.0.0.1:9"
        instance = runtime.Runtime(settings, ClusterClient(ApiClient(configuration)), None)
        instance.start()
        assert instance.owned is not None and instance.owned.selector == owned_selector(settings)


def test_a_pass_stamps_its_shard_on_the_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    from oam_operator.controller.reconcile import passes
    from oam_operator.controller.reconcile.seams import Memory
    from tests.unit import unitkit
    from tests.unit.unitkit import FakeReconciler, application, pass_environment

    for shard, expected in (("s1", {"oam-operator.dev/shard": "s1"}), ("", {"oam-operator.dev/shard": None})):
        seen: list[Any] = []

        def build(domain: str, client: Any, options: Any, seen: list[Any] = seen) -> FakeReconciler:
            seen.append(options)
            return FakeReconciler()

        monkeypatch.setattr(unitkit, "_injected_reconciler", build)
        passes.apply_pass(application(), Memory(), pass_environment(shard=shard))
        assert [options.extra_labels for options in seen] == [expected]
