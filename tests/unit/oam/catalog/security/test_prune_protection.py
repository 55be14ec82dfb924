"""The ``prune-protection`` trait (docs/transform.md#access-and-security):
the component's own objects, not its traits'."""

from __future__ import annotations

from typing import Any

from oamkit.traits import document, error, objects, passthrough, run, trait, webservice

ANNOTATION = {"kustomize.toolkit.fluxcd.io/prune": "disabled"}


def helm(name: str, *traits: dict[str, Any]) -> dict[str, Any]:
    props = {"chart": "podinfo", "version": "6.5.0", "source": {"url": "https://charts.example.com"}}
    return {"name": name, "type": "helm", "properties": props, "traits": list(traits)}


def test_own_objects_are_annotated_trait_objects_are_not() -> None:
    out = objects(document(webservice("web", trait("prune-protection"), trait("configmap", name="cfg"))))
    assert [(o["kind"], o["metadata"].get("annotations")) for o in out] == [
        ("Deployment", ANNOTATION),
        ("Service", ANNOTATION),
        ("ServiceAccount", ANNOTATION),
        ("ConfigMap", None),
    ]


def test_existing_annotations_are_kept() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"annotations": {"a": "b", **{k: "enabled" for k in ANNOTATION}}},
    }
    out = objects(document(passthrough("pt", obj, trait("prune-protection"))))
    assert out[0]["metadata"]["annotations"] == {"a": "b", **ANNOTATION}


def test_a_generated_source_only_this_component_uses_is_annotated() -> None:
    out = objects(document(helm("podinfo", trait("prune-protection"))))
    assert [o["kind"] for o in out] == ["HelmRepository", "HelmRelease"]
    assert all(o["metadata"]["annotations"] == ANNOTATION for o in out)


def test_a_shared_source_is_not_annotated() -> None:
    out = objects(document(helm("a", trait("prune-protection")), helm("b")))
    by_kind = [(o["kind"], o["metadata"]["name"], o["metadata"].get("annotations")) for o in out]
    assert next(entry for entry in by_kind if entry[0] == "HelmRepository")[2] is None
    assert ("HelmRelease", "a", ANNOTATION) in by_kind
    assert ("HelmRelease", "b", None) in by_kind


def test_no_properties() -> None:
    text = document(webservice("web", trait("prune-protection", enabled=True)))
    assert error(text, validate=True) == (
        'component "web": trait "prune-protection": properties: unsupported field "enabled" (allowed: scope)'
    )
    assert run(document(webservice("web", trait("prune-protection"))), validate=True).objects()
