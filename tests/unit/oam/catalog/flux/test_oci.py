"""The ``oci`` component (docs/transform.md#the-oci-component)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.packages import comp, document, error, objects, oci, run

from oam_operator.oam import TransformContext, new_builtin_transformer
from oam_operator.oam.catalog.flux.flux_sources import go_json_string, oci_artifact_identity

URL = "oci://registry.example.com/org/platform"


def test_alone_emits_its_repository_then_its_kustomization() -> None:
    assert objects(oci("platform")) == [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "OCIRepository",
            "metadata": {"name": "platform", "namespace": "default"},
            "spec": {"url": URL, "interval": "1h0m0s", "ref": {"tag": "1.4.0"}},
        },
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "platform", "namespace": "default"},
            "spec": {
                "interval": "1h0m0s",
                "path": "./",
                "prune": True,
                "sourceRef": {"kind": "OCIRepository", "name": "platform"},
            },
        },
    ]


def test_digest_prune_false_path_target_namespace_interval() -> None:
    repo, kustomization = objects(
        oci("p", version="sha256:abc", prune=False, path="./deploy", targetNamespace="apps", interval="600s")
    )
    assert repo["spec"] == {"url": URL, "interval": "10m0s", "ref": {"digest": "sha256:abc"}}
    assert kustomization["spec"] == {
        "interval": "10m0s",
        "path": "./deploy",
        "prune": False,
        "sourceRef": {"kind": "OCIRepository", "name": "p"},
        "targetNamespace": "apps",
    }


def test_alone_is_not_a_generated_source_and_carries_the_component_label() -> None:
    result = run(document([oci("p")]), TransformContext())
    assert result.cluster.node.name == ""  # flat: the source is the component's own object
    assert [o["metadata"]["labels"] for o in result.objects()] == [{"oam-operator.dev/component": "p"}] * 2


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"source": None}, "oci: source is required"),
        ({"source": "oci://x"}, "oci: source is required"),
        ({"source": {}}, "oci: source.url is required"),
        ({"source": {"url": "https://x/y"}}, 'oci: source.url "https://x/y" must use the oci:// scheme'),
        ({"version": None}, "oci: version is required (a tag, or sha256:<digest>)"),
        ({"version": ""}, "oci: version is required (a tag, or sha256:<digest>)"),
        ({"interval": "1 hour"}, 'oci: interval "1 hour" is invalid: must be a valid Go duration (e.g. 10m, 1h30m)'),
        ({"prune": "no"}, "oci: prune: expected boolean, got string"),
    ],
)
def test_refusals(props: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"source": {"url": URL}, "version": "1.0.0"}
    base.update(props)
    assert error(document([comp("p", "oci", **base)]), validate=False) == f'component "p": {message}'


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"source": {}}, 'component "p" (type "oci"): properties.source: "url" is required'),
        (
            {"source": {"url": URL, "ref": "x"}},
            'component "p" (type "oci"): properties.source: unsupported field "ref" (allowed: url)',
        ),
        ({"prune": "no"}, 'component "p" (type "oci"): properties.prune: expected boolean, got string'),
        (
            {"tag": "x"},
            'component "p" (type "oci"): properties: unsupported field "tag" (allowed: interval, path, prune, source, targetNamespace, version)',
        ),
    ],
)
def test_authored_properties_are_checked_against_the_schema(props: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"source": {"url": URL}, "version": "1.0.0"}
    base.update(props)
    assert error(document([comp("p", "oci", **base)])) == message


def test_schema_defaults_match_the_behaviour() -> None:
    schema = new_builtin_transformer().handler_schemas().components["oci"]
    defaults = {k: v.default for k, v in schema.items() if v.default is not None}
    assert defaults == {"path": "./", "prune": True, "interval": "60m"}
    assert objects(oci("p", **defaults)) == objects(oci("p"))
    assert schema["source"].required and schema["version"].required


def test_identity_is_go_json_with_the_effective_interval() -> None:
    assert oci_artifact_identity(URL, "1.4.0", "1h0m0s") == (
        'oci-artifact:{"url":"oci://registry.example.com/org/platform","version":"1.4.0","interval":"1h0m0s"}'
    )
    assert go_json_string('a<b>&"\\\n\u2028') == '"a\\u003cb\\u003e\\u0026\\"\\\\\\n\\u2028"'
