"""One object of the resource tree (docs/ui.md#the-resource-tree): only the Application's own
objects open, the manifest leaves out managedFields and a Secret's values."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from oam_operator.ui.objects import ObjectError, ObjectRef, in_inventory, manifest_text


def shop() -> dict[str, Any]:
    def item(group: str, kind: str, name: str, order: int, digest: str = "d", phase: str = "Ready") -> dict[str, Any]:
        return {"group": group, "version": "v1", "kind": kind, "namespace": "shop", "name": name,
                "phase": phase, "status": "Current", "applyOrder": order, "digest": digest}

    return {"metadata": {"name": "shop", "namespace": "shop"}, "status": {
        "bundles": [{"name": "infra", "state": "Ready", "waves": {"first": 0, "last": 0}}],
        "inventory": [item("apps", "Deployment", "api", 0), item("", "ConfigMap", "conf", 5),
                      item("", "Secret", "old", 0, digest="", phase="Deleting")]}}


def test_an_object_of_any_bundle_outside_them_or_being_pruned_opens_and_no_other() -> None:
    app = shop()
    assert in_inventory(app, ObjectRef("apps", "v1", "Deployment", "shop", "api"))
    assert in_inventory(app, ObjectRef("", "v1", "ConfigMap", "shop", "conf"))  # in no bundle
    assert in_inventory(app, ObjectRef("", "v1", "Secret", "shop", "old"))  # being pruned
    assert not in_inventory(app, ObjectRef("", "v1", "Secret", "shop", "api-token"))
    assert not in_inventory(app, ObjectRef("apps", "v1", "Deployment", "kube-system", "api"))


def test_a_ref_comes_from_the_query_and_names_itself_like_the_diff() -> None:
    ref = ObjectRef.from_query({"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop",
                                "name": "api"})
    assert (ref.api_version, ref.label) == ("apps/v1", "Deployment shop/api")
    assert ObjectRef.from_query({"version": "v1", "kind": "Namespace", "name": "shop"}).label == "Namespace shop"
    with pytest.raises(ObjectError) as refused:
        ObjectRef.from_query({"kind": "Deployment"})
    assert (refused.value.status, refused.value.message) == (
        400, "an object needs version, kind and name (and group, namespace)")


def test_the_manifest_has_no_managed_fields_and_hides_a_secrets_values() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "managedFields": [{"manager": "x"}]},
              "data": {"password": "aHVudGVyMg=="}, "type": "Opaque"}
    assert yaml.safe_load(manifest_text(secret)) == {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
        "data": {"password": "<hidden: 12 characters>"}, "type": "Opaque"}
    text = manifest_text({"kind": "Deployment", "spec": {"replicas": 2}, "apiVersion": "apps/v1",
                          "metadata": {"name": "api"}})  # kubectl's order, whatever the API's
    assert text == "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 2\n"


def test_an_object_of_a_fleet_application_points_to_its_own_page_for_the_diff() -> None:
    from oam_operator.ui.objects import FLEET_OBJECT_DIFF

    assert FLEET_OBJECT_DIFF.format(label="Application shop/web-eu") == (
        "Application shop/web-eu is a cluster Application: open it for the diff on its cluster\n")
