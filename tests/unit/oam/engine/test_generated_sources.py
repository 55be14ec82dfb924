"""Generated sources of the real ``helm`` and ``oci`` types and their ordering
(docs/transform.md#generated-sources, docs/transform.md#the-ordering-algorithm,
docs/transform.md#the-bundle-tree, D6)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.packages import cm, comp, dep, document, error, helm, kinds, oci, place, run, summary

from oam_operator.oam import TransformContext
from oam_operator.oam.document.names import digest

HELM_SHARED = "shop-source-d3f34901c4"  # sha256("helm:https://charts.example.com")[:10]
OCI_SHARED = "shop-source-d2e1496041"  # the spec's example artifact, default interval
REFUSAL = "a source a lowering rule generates is applied with the application bundle itself, before every group"


def test_one_helm_component_orders_the_tree() -> None:
    result = run(document([helm("metrics")], name="monitoring"), TransformContext())
    assert result.cluster.node.name == "monitoring"
    assert summary(result) == [
        ("monitoring", [], [("metrics", "metrics")]),
        ("monitoring-00", [], [("metrics", "metrics")]),
    ]
    assert kinds(result) == [("HelmRepository", "metrics"), ("HelmRelease", "metrics")]
    labels = [o["metadata"]["labels"] for o in result.objects()]
    assert labels == [{"oam-operator.dev/component": "metrics"}] * 2


def test_two_helm_components_share_one_unlabelled_source() -> None:
    assert digest("helm:https://charts.example.com")[:10] == HELM_SHARED.removeprefix("shop-source-")
    result = run(
        document(
            [
                helm("a", interval="5m"),
                helm("b", chart="other"),
                comp("web", "oci", source={"url": "oci://r/w"}, version="1"),
            ],
            name="shop",
        ),
        TransformContext(),
    )
    assert summary(result) == [
        ("shop", [], [(HELM_SHARED, None)]),
        ("shop-00", [], [("a", "a"), ("b", "b"), ("web", "web")]),
    ]
    source = result.objects()[0]
    assert source["metadata"] == {"name": HELM_SHARED, "namespace": "default"}
    assert source["spec"] == {"url": "https://charts.example.com", "interval": "1h0m0s"}
    releases = [o for o in result.objects() if o["kind"] == "HelmRelease"]
    assert [r["spec"]["chart"]["spec"]["sourceRef"]["name"] for r in releases] == [HELM_SHARED, HELM_SHARED]
    assert [r["spec"]["interval"] for r in releases] == ["5m0s", "1h0m0s"]  # each release keeps its own


def test_helm_oci_sources_share_on_url_and_version_only() -> None:
    url = "oci://ghcr.io/x/chart"
    result = run(
        document(
            [comp(n, "helm", source={"url": url}, version=v) for n, v in (("a", "1"), ("b", "1"), ("c", "2"))],
            name="shop",
        )
    )
    shared = "shop-source-" + digest(f"oci:{url}:1")[:10]
    assert summary(result)[0] == ("shop", [], [(shared, None), ("c", "c")])
    assert result.objects()[0]["spec"] == {"url": url, "interval": "1h0m0s", "ref": {"tag": "1"}}
    assert [o["spec"]["chartRef"]["name"] for o in result.objects() if o["kind"] == "HelmRelease"] == [
        shared,
        shared,
        "c",
    ]


def test_two_oci_components_on_one_artifact_share_a_source() -> None:
    result = run(document([oci("a"), oci("b", interval="1h", path="./b"), cm("web")], name="shop"), TransformContext())
    assert summary(result) == [
        ("shop", [], [(OCI_SHARED, None)]),
        ("shop-00", [], [("a", "a"), ("b", "b"), ("web", "web")]),
    ]
    assert kinds(result) == [
        ("OCIRepository", OCI_SHARED),
        ("Kustomization", "a"),
        ("Kustomization", "b"),
        ("ConfigMap", "web"),
    ]
    source = result.objects()[0]
    assert "labels" not in source["metadata"]
    assert source["spec"] == {
        "url": "oci://registry.example.com/org/platform",
        "interval": "1h0m0s",
        "ref": {"tag": "1.4.0"},
    }
    assert [o["spec"]["sourceRef"]["name"] for o in result.objects()[1:3]] == [OCI_SHARED, OCI_SHARED]


def test_shared_oci_source_takes_the_shared_interval() -> None:
    result = run(document([oci("a", interval="10m"), oci("b", interval="600s")], name="shop"))
    assert result.objects()[0]["spec"]["interval"] == "10m0s"
    assert result.objects()[0]["metadata"]["name"] != OCI_SHARED


@pytest.mark.parametrize(
    "second",
    [
        oci("b", interval="30m"),
        oci("b", version="1.4.1"),
        oci("b", url="oci://registry.example.com/org/other"),
    ],
)
def test_oci_components_on_different_artifacts_keep_their_sources(second: dict[str, Any]) -> None:
    result = run(document([oci("a"), second], name="shop"))
    assert result.cluster.node.name == ""
    assert kinds(result) == [
        ("OCIRepository", "a"),
        ("Kustomization", "a"),
        ("OCIRepository", "b"),
        ("Kustomization", "b"),
    ]


def test_helm_and_oci_never_share_a_source() -> None:
    url = "oci://registry.example.com/org/platform"
    result = run(document([comp("h", "helm", source={"url": url}, version="1.4.0"), oci("o", url=url)], name="shop"))
    assert summary(result)[0] == ("shop", [], [("h", "h")])
    assert kinds(result) == [
        ("OCIRepository", "h"),
        ("HelmRelease", "h"),
        ("OCIRepository", "o"),
        ("Kustomization", "o"),
    ]


def test_sources_come_in_the_order_of_their_first_consumer() -> None:
    other = "https://other.example.com"
    result = run(document([helm("x", url=other), oci("o1"), helm("y"), oci("o2"), helm("z", url=other)], name="shop"))
    assert [a.name for a in result.cluster.node.bundle.applications] == [
        "shop-source-" + digest(f"helm:{other}")[:10],
        OCI_SHARED,
        "y",
    ]


def test_an_oci_component_alone_moves_with_its_placement() -> None:
    result = run(document([oci("platform"), cm("web")], [place("p1", "platform", "infra"), place("p2", "web", "apps")]))
    assert summary(result) == [
        ("app", [], []),
        ("app-infra", [], [("platform", "platform")]),
        ("app-apps", ["app-infra"], [("web", "web")]),
    ]
    assert kinds(result) == [("OCIRepository", "platform"), ("Kustomization", "platform"), ("ConfigMap", "web")]


def test_a_dependency_on_an_oci_component_orders_both_its_objects() -> None:
    result = run(document([cm("web"), oci("platform")], [dep("d", "web", ["platform"])]))
    assert summary(result)[1:] == [
        ("app-00", [], [("platform", "platform")]),
        ("app-01", ["app-00"], [("web", "web")]),
    ]


def test_a_single_helm_source_name_refers_to_the_release() -> None:
    result = run(document([helm("metrics"), cm("web")], [place("p1", "metrics", "apps"), place("p2", "web", "infra")]))
    assert summary(result) == [
        ("app", [], [("metrics", "metrics")]),
        ("app-infra", [], [("web", "web")]),
        ("app-apps", ["app-infra"], [("metrics", "metrics")]),
    ]


@pytest.mark.parametrize(
    ("components", "policies", "message"),
    [
        (
            [helm("a"), helm("b"), cm("web")],
            [place("p", HELM_SHARED, "infra")],
            f'helmrepository "{HELM_SHARED}" cannot be placed in tier infra: {REFUSAL}',
        ),
        (
            [helm("a"), helm("b"), cm("web")],
            [dep("d", HELM_SHARED, ["web", "a"])],
            f'helmrepository "{HELM_SHARED}" cannot wait on web, a: {REFUSAL}',
        ),
        (
            [oci("a"), oci("b"), cm("web")],
            [place("p", OCI_SHARED, "apps")],
            f'ocirepository "{OCI_SHARED}" cannot be placed in tier apps: {REFUSAL}',
        ),
        (
            [oci("a"), oci("b"), cm("web")],
            [dep("d", OCI_SHARED, ["web"])],
            f'ocirepository "{OCI_SHARED}" cannot wait on web: {REFUSAL}',
        ),
        (
            [oci("a"), oci("b"), helm("c"), helm("d")],
            [dep("d1", HELM_SHARED, ["a"]), place("p", OCI_SHARED, "infra")],
            f'ocirepository "{OCI_SHARED}" cannot be placed in tier infra: {REFUSAL}',
        ),
        (
            [oci("a"), oci("b"), cm("web")],
            [dep("d", OCI_SHARED, ["web"]), place("p", OCI_SHARED, "apps")],
            f'ocirepository "{OCI_SHARED}" cannot be placed in tier apps: {REFUSAL}',
        ),
    ],
)
def test_placing_or_ordering_a_shared_source_is_refused(
    components: list[dict[str, Any]], policies: list[dict[str, Any]], message: str
) -> None:
    assert error(document(components, policies, name="shop")) == message


def test_a_dependency_on_a_shared_source_is_dropped() -> None:
    result = run(document([oci("a"), oci("b"), cm("web")], [dep("d", "web", [OCI_SHARED])], name="shop"))
    assert summary(result) == [
        ("shop", [], [(OCI_SHARED, None)]),
        ("shop-00", [], [("a", "a"), ("b", "b"), ("web", "web")]),
    ]


def test_a_shared_source_named_like_a_component_is_refused() -> None:
    text = document([helm("a"), helm("b"), cm(HELM_SHARED)], name="shop")
    assert error(text) == f'generated source "{HELM_SHARED}" has the same name as component "{HELM_SHARED}"'


def test_groups_follow_the_sources_in_the_tree_document() -> None:
    from oam_operator.oam import tree_document

    result = run(document([helm("a"), helm("b"), cm("web")], [dep("d", "web", ["a"])], name="shop"))
    doc = tree_document(result.cluster)
    assert doc["node"] == "shop"
    bundle = doc["bundle"]
    assert bundle["applications"] == [
        {
            "name": HELM_SHARED,
            "owner": "",
            "objects": [f"source.toolkit.fluxcd.io/v1 HelmRepository default/{HELM_SHARED}"],
        }
    ]
    assert [(c["name"], c["dependsOn"], [a["name"] for a in c["applications"]]) for c in bundle["children"]] == [
        ("shop-00", [], ["a", "b"]),
        ("shop-01", ["shop-00"], ["web"]),
    ]
