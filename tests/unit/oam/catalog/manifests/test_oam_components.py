"""Component types passthrough, manifests, crd, unimplemented types, labels
(docs/transform.md#raw-objects-passthrough-crd-and-manifests, docs/transform.md#the-component-label)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit import cm, document, run

from oam_operator.oam import (
    GenerationError,
    OamError,
    TransformContext,
    Transformer,
    TransformError,
    new_builtin_transformer,
)
from oam_operator.oam.catalog.manifests.passthrough import PassthroughHandler
from oam_operator.oam.document.names import digest
from oam_operator.oam.engine.labels import stamp_component_label


def pt(props: dict[str, Any], name: str = "c") -> str:
    return document([{"name": name, "type": "passthrough", "properties": props}], namespace="ns")


def error(text: str, ctx: TransformContext | None = None, transformer: Transformer | None = None) -> str:
    with pytest.raises(OamError) as info:
        run(text, transformer, ctx=ctx, validate=False)
    return str(info.value)


def test_passthrough_defaults_name_and_namespace_and_keeps_the_rest() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3}, "metadata": {"labels": {"x": "y"}}}
    out = run(pt({"object": obj}), ctx=TransformContext(component_label=False)).objects()
    assert out == [{**obj, "metadata": {"labels": {"x": "y"}, "name": "c", "namespace": "ns"}}]
    assert obj["metadata"] == {"labels": {"x": "y"}}  # the document is not modified
    cluster = run(
        pt({"object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}, "clusterScoped": True})
    )
    assert cluster.objects()[0]["metadata"] == {"name": "n", "labels": {"oam-operator.dev/component": "c"}}


def test_passthrough_strips_null_creation_timestamp_and_empty_status() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"creationTimestamp": None}, "status": {}}
    out = run(pt({"object": obj}), ctx=TransformContext(component_label=False)).objects()[0]
    assert out == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
    kept = {**obj, "status": {"phase": "x"}}
    assert run(pt({"object": kept})).objects()[0]["status"] == {"phase": "x"}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"object": {}, "zeta": 1}, "unsupported property \"zeta\" (only 'object' and 'clusterScoped' are allowed)"),
        ({"object": {}, "clusterScoped": "yes"}, "'clusterScoped' must be a bool"),
        ({}, "required property 'object' missing"),
        ({"object": [1]}, "'object' must be a map"),
        ({"object": {"kind": "X"}}, "object.apiVersion is required and must be a non-empty string"),
        ({"object": {"apiVersion": "v1", "kind": ""}}, "object.kind is required and must be a non-empty string"),
        ({"object": {"apiVersion": "v1", "kind": "X", "metadata": "m"}}, "object.metadata must be a map"),
        (
            {"object": {"apiVersion": "v1", "kind": "X", "metadata": {"namespace": "a"}}, "clusterScoped": True},
            "object.metadata.namespace must not be set when clusterScoped is true",
        ),
    ],
)
def test_passthrough_messages(props: dict[str, Any], message: str) -> None:
    assert error(pt(props)) == f'component "c": passthrough component "c": {message}'


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
"""


def manifests(props: dict[str, Any], kind: str = "manifests") -> str:
    return document([{"name": "m", "type": kind, "properties": props}], namespace="ns")


def test_manifests_place_namespaced_objects_and_leave_cluster_scoped_alone() -> None:
    inline = (
        CRD
        + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
        + "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
        + "- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n"
        + "---\napiVersion: other.io/v1\nkind: Thing\nmetadata: {name: t}\n"
        + "---\n"
    )
    props = {
        "inline": inline,
        "scopeOverrides": [{"apiVersion": "other.io/v1", "kind": "Thing", "scope": "Namespaced"}],
    }
    out = run(manifests(props), ctx=TransformContext(component_label=False)).objects()
    assert [(o["kind"], o["metadata"].get("namespace")) for o in out] == [
        ("CustomResourceDefinition", None),
        ("Widget", None),
        ("ConfigMap", "ns"),
        ("Namespace", None),
        ("Thing", "ns"),
    ]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "manifest source: exactly one of inline/url is required (got 0)"),
        ({"inline": "", "url": "https://x"}, "manifest source: exactly one of inline/url is required (got 2)"),
        ({"inline": 5}, 'manifest source: property "inline" must be a YAML string'),
        ({"url": 5}, 'manifest source: property "url" must be a string'),
        ({"inline": "", "extra": 1}, 'manifest source: unknown property "extra"'),
        ({"chart": {}}, 'manifest source: "chart" source is not yet supported (designed, not implemented)'),
        ({"url": "ftp://x/y"}, 'manifest source: unsupported url scheme "ftp" (only http/https)'),
        ({"url": "oci://r/x"}, "manifest source: oci:// urls are not yet supported (designed, not implemented)"),
        ({"inline": "- a\n"}, "manifest source: parse manifests: document 1: expected a mapping, got []interface {}"),
        ({"inline": "kind: X\n"}, "manifest source: parse manifests: document 1: missing apiVersion or kind"),
        (
            {"inline": "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n"},
            'object Gadget "g" has unknown scope and no metadata.namespace; set an explicit namespace or a '
            "scopeOverrides entry (no CRD defining it is present in this source)",
        ),
        ({"inline": "", "scopeOverrides": {}}, "scopeOverrides must be a list of {apiVersion, kind, scope} objects"),
        ({"inline": "", "scopeOverrides": [{"kind": "X"}]}, "scopeOverrides[0]: apiVersion and kind are required"),
        (
            {"inline": "", "scopeOverrides": [{"apiVersion": "a/v1", "kind": "X", "scope": "Global"}]},
            'scopeOverrides[0].scope: unknown scope "Global" (valid: Cluster, Namespaced)',
        ),
    ],
)
def test_manifests_messages(props: dict[str, Any], message: str) -> None:
    assert error(manifests(props)) == f'component "m": manifests component "m": {message}'


def test_crd_component() -> None:
    out = run(manifests({"inline": CRD}, "crd"), ctx=TransformContext(component_label=False)).objects()
    assert [o["metadata"] for o in out] == [{"name": "widgets.example.com"}]
    assert error(manifests({"inline": CRD + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"}, "crd")) == (
        'component "m": crd component "m": object ConfigMap "x" is not a CustomResourceDefinition (the crd component '
        "emits only CRDs; use the manifests component for other kinds)"
    )
    assert (
        error(manifests({"inline": "---\n"}, "crd"))
        == 'component "m": crd component "m": source resolved to no manifests'
    )


class _Reader:
    def __init__(self, data: bytes | Exception) -> None:
        self.data = data
        self.urls: list[str] = []

    def read(self, url: str) -> bytes:
        self.urls.append(url)
        if isinstance(self.data, Exception):
            raise self.data
        return self.data


def test_url_sources_are_read_when_objects_are_generated() -> None:
    reader = _Reader(CRD.encode())
    out = run(manifests({"url": "https://example.com/crds.yaml"}, "crd"), ctx=TransformContext(url_reader=reader))
    assert reader.urls == ["https://example.com/crds.yaml"]
    assert out.objects()[0]["kind"] == "CustomResourceDefinition"
    with pytest.raises(GenerationError) as info:
        run(manifests({"url": "https://example.com/x"}), ctx=TransformContext(url_reader=_Reader(OamError("boom"))))
    assert str(info.value) == 'manifests component "m": manifest source: boom'
    with pytest.raises(GenerationError) as info:
        run(manifests({"url": "https://example.com/x"}))
    assert str(info.value) == (
        'manifests component "m": manifest source: reading "https://example.com/x": no URL reader is configured'
    )
    big = _Reader(b"#" * (5 * 1024 * 1024 + 1))
    with pytest.raises(GenerationError) as info:
        run(manifests({"url": "https://example.com/x"}, "crd"), ctx=TransformContext(url_reader=big))
    assert str(info.value) == (
        'crd component "m": manifest source: "https://example.com/x" response exceeds max size 5242880 bytes'
    )


@pytest.mark.parametrize("component_type", ["webservice", "helm", "postgresql"])
def test_built_in_component_types_not_implemented_yet(component_type: str) -> None:
    # A transformer without handlers: the message does not depend on what this build ships.
    text = document([{"name": "web", "type": component_type, "properties": {}}])
    assert (
        error(text, transformer=Transformer())
        == f'no handler for component type "{component_type}" (component "web"): this built-in type is not implemented yet'
    )


def test_unknown_component_type_for_a_library_caller() -> None:
    from oam_operator.oam import Application, Component, Metadata

    app = Application("oam-operator.dev/v1alpha1", "Application", Metadata("a"), [Component("x", "mystery")])
    with pytest.raises(TransformError) as info:
        new_builtin_transformer().transform(app, TransformContext())
    assert str(info.value) == 'no handler for component type "mystery" (component "x")'


def test_traits_not_implemented_yet_and_delivery_traits() -> None:
    hint = (
        "it configures delivery, which the transform leaves to the consumer that delivers the application; "
        "a consumer that delivers through Flux registers its own handler"
    )
    assert error(document([cm("web", traits=[{"type": "fluxcd-patches"}])])) == (
        f'no handler for trait type "fluxcd-patches" (on component "web"): {hint}'
    )
    # A transformer with only the passthrough component (the "web" component below): every trait type of
    # the allow-list is then unhandled, whatever this build ships.
    bare = Transformer()
    bare.register_component("passthrough", PassthroughHandler())
    for trait_type in ("ingress", "certificate"):
        assert error(document([cm("web", traits=[{"type": trait_type}])]), transformer=bare) == (
            f'no handler for trait type "{trait_type}" (on component "web"): this built-in type is not implemented yet'
        )


def test_component_label_on_objects_and_pod_templates() -> None:
    long_name = "c" * 70
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": {"oam-operator.dev/component": "authored"}},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {}}},
    }
    obj = dict(deployment)
    stamp_component_label(obj, "oam-operator.dev/component", long_name)
    expected = "c" * 52 + "-" + digest(long_name)[:10]
    assert obj["metadata"]["labels"]["oam-operator.dev/component"] == "authored"
    assert obj["spec"]["template"]["metadata"]["labels"] == {"oam-operator.dev/component": expected}
    pinned = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "spec": {
            "jobTemplate": {
                "spec": {
                    "selector": {"matchLabels": {"d/component": "other"}},
                    "template": {"metadata": {"labels": {"a": "b"}}},
                }
            }
        },
    }
    stamp_component_label(pinned, "d/component", "web")
    assert pinned["metadata"] == {"labels": {"d/component": "web"}}
    assert pinned["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"] == {"a": "b"}
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {}}}}}
    stamp_component_label(cron, "d/component", "web")
    assert cron["spec"]["jobTemplate"]["spec"]["template"] == {"metadata": {"labels": {"d/component": "web"}}}


def test_no_component_label_changes_nothing_else() -> None:
    text = document([cm("a"), cm("b")], api_version="launcher.gokure.dev/v1alpha1")
    with_labels = run(text).objects()
    without = run(text, ctx=TransformContext(component_label=False)).objects()
    assert [o["metadata"]["labels"] for o in with_labels] == [
        {"launcher.gokure.dev/component": "a"},
        {"launcher.gokure.dev/component": "b"},
    ]
    for labelled, plain in zip(with_labels, without, strict=True):
        del labelled["metadata"]["labels"]
        assert labelled == plain


def test_namespace_override_and_its_check() -> None:
    result = run(document([cm("a")], namespace="docns"), ctx=TransformContext(namespace="cli"))
    assert result.objects()[0]["metadata"]["namespace"] == "cli"
    assert run(document([cm("a")])).objects()[0]["metadata"]["namespace"] == "default"
    assert error(document([cm("a")]), TransformContext(namespace="Bad")).startswith('invalid namespace "Bad": ')


def test_every_built_in_schema_node_is_described() -> None:
    from oam_operator.oam.document.schema import walk_schema

    schemas = new_builtin_transformer().handler_schemas()
    for family in (schemas.components, schemas.traits, schemas.policies):
        for type_name, schema in family.items():
            for path, node in walk_schema(schema):
                assert node.description, f"{type_name}: {path}"
    contracts = new_builtin_transformer().handler_contracts()
    assert {t: c.family for t, c in contracts.components.items()} == {
        t: "helm" if t == "helmchart" else t for t in new_builtin_transformer().component_types()
    }
