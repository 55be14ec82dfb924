"""Shards in the chart (`sharding.shards`): one Deployment per shard besides the main one, each
running `--shard=<name>` with its own selector, and per-shard kopf peering objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_chart_deployment import settings_of

from tests.unit.unitkit import of_kind, one

Render = Callable[..., list[dict[str, Any]]]


def _args(deployment: dict[str, Any]) -> list[str]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    result: list[str] = containers[0]["args"]
    return result


def test_no_shards_by_default(render: Render) -> None:
    deployments = of_kind(render(), "Deployment")
    assert [d["metadata"]["name"] for d in deployments] == ["oam-oam-operator"]
    assert settings_of(_args(deployments[0])).shard == ""


def test_one_deployment_per_shard(render: Render) -> None:
    objects = render({"sharding": {"shards": ["eu", "us-2"]}})
    deployments = of_kind(objects, "Deployment")
    assert [d["metadata"]["name"] for d in deployments] == ["oam-oam-operator", "oam-oam-operator-eu",
                                                            "oam-oam-operator-us-2"]
    main, eu, us = deployments
    assert settings_of(_args(main)).shard == ""
    assert settings_of(_args(eu)).shard == "eu"
    assert settings_of(_args(us)).shard == "us-2"
    # Apart from --shard, every instance runs with the same settings.
    assert _args(eu)[:-1] == _args(main) and _args(eu)[-1] == "--shard=eu"
    # The main selector is unchanged (immutable on upgrade); a shard's selects only its own pods.
    assert main["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": "oam-operator",
                                                       "app.kubernetes.io/instance": "oam"}
    for deployment, shard in ((eu, "eu"), (us, "us-2")):
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selector["oam-operator.dev/shard-instance"] == shard
        assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
        assert deployment["spec"]["replicas"] == 2 and deployment["spec"]["strategy"] == main["spec"]["strategy"]
        assert deployment["spec"]["template"]["spec"] == {**main["spec"]["template"]["spec"],
                                                           "containers": deployment["spec"]["template"]["spec"]
                                                           ["containers"]}


def test_each_shard_peers_under_its_own_name(render: Render) -> None:
    objects = render({"sharding": {"shards": ["eu"]}, "peering": {"enabled": True, "name": "ops"}, "replicas": 1})
    assert sorted(o["metadata"]["name"] for o in of_kind(objects, "ClusterKopfPeering")) == ["ops", "ops-eu"]
    eu = one(objects, "Deployment", name="oam-oam-operator-eu")
    assert settings_of(_args(eu)).peering_name == "ops-eu"


def test_namespaced_peering_per_shard(render: Render) -> None:
    objects = render({"sharding": {"shards": ["eu"]}, "peering": {"enabled": True}, "replicas": 1,
                      "operator": {"watchNamespaces": ["a", "b"]}})
    peerings = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in of_kind(objects, "KopfPeering")}
    assert peerings == {("a", "oam-oam-operator"), ("a", "oam-oam-operator-eu"),
                        ("b", "oam-oam-operator"), ("b", "oam-oam-operator-eu")}


@pytest.mark.parametrize("shard", ["EU", "a_b", "-a", "x" * 41])
def test_shard_names_are_checked_by_the_schema(render: Render, shard: str) -> None:
    with pytest.raises(Exception, match="/sharding/shards"):
        render({"sharding": {"shards": [shard]}})


def test_duplicate_shards_are_refused(render: Render) -> None:
    with pytest.raises(Exception, match="/sharding/shards"):
        render({"sharding": {"shards": ["a", "a"]}})
