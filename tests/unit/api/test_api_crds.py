"""CRD generation (docs/operator.md#spec-fields, docs/operator.md#printer-columns,
docs/operator.md#the-clusterprofile-resource): checked-in files, structure, extensions, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from oam_operator.api.crd import build_crds, crd_filename, render, render_all, write_crds
from oam_operator.api.openapi import PRESERVE, structural_problems, walk
from oam_operator.cli import main

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "crds"
FILES = ("oam-operator.dev_applications.yaml", "oam-operator.dev_clusterprofiles.yaml",
         "oam-operator.dev_componentdefinitions.yaml", "oam-operator.dev_notifications.yaml",
         "oam-operator.dev_traitdefinitions.yaml")


def _crds() -> dict[str, dict[str, Any]]:
    return {crd["spec"]["names"]["kind"]: crd for crd in build_crds()}


def _schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = _crds()[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _node(kind: str, path: str) -> dict[str, Any]:
    nodes = dict(walk(_schema(kind)))
    return nodes[path]


# -- checked-in files --


def test_checked_in_crds_equal_the_generator_output() -> None:
    assert sorted(p.name for p in CRDS.glob("*.yaml")) == list(FILES)
    for crd in build_crds():
        path = CRDS / crd_filename(crd)
        assert path.read_text(encoding="utf-8") == render(crd), (
            f"{path} is stale: run `oam-operator crd --output-dir crds`"
        )


def test_output_is_deterministic_and_parses_back() -> None:
    first = render_all()
    assert first == render_all()
    assert first == "".join((CRDS / name).read_text(encoding="utf-8") for name in FILES)
    documents = [doc for doc in yaml.safe_load_all(first) if doc is not None]
    assert documents == json.loads(json.dumps(build_crds()))
    assert [d["metadata"]["name"] for d in documents] == [
        "applications.oam-operator.dev",
        "clusterprofiles.oam-operator.dev",
        "componentdefinitions.oam-operator.dev",
        "notifications.oam-operator.dev",
        "traitdefinitions.oam-operator.dev",
    ]


def test_cli_prints_the_crds_identical_to_the_files() -> None:
    result = CliRunner().invoke(main, ["crd"])
    assert result.exit_code == 0, result.output
    assert result.output == "".join((CRDS / name).read_text(encoding="utf-8") for name in FILES)


def test_cli_writes_one_file_per_crd(tmp_path: Path) -> None:
    target = tmp_path / "out" / "crds"
    result = CliRunner().invoke(main, ["crd", "--output-dir", str(target)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in target.iterdir()) == list(FILES)
    for name in FILES:
        assert (target / name).read_bytes() == (CRDS / name).read_bytes()


def test_cli_reports_an_unwritable_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(main, ["crd", "--output-dir", str(blocker / "sub")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot write the CRDs to {blocker / 'sub'}: ")
    assert result.output.count("\n") == 1


def test_write_crds_returns_the_paths(tmp_path: Path) -> None:
    assert [p.name for p in write_crds(tmp_path)] == list(FILES)


# -- structure --


@pytest.mark.parametrize("kind", ["Application", "ClusterProfile"])
def test_schemas_are_structural(kind: str) -> None:
    schema = _schema(kind)
    assert structural_problems(schema) == []
    for path, node in walk(schema):
        assert "type" in node, path
        assert not {"$ref", "anyOf", "allOf", "oneOf", "title", "const"} & set(node), path
        assert isinstance(node.get("additionalProperties", {}), dict), path
        named_field = not path.endswith(("[]", ".*"))  # map values and list items are described by their field
        if named_field and path != ".metadata":
            assert node.get("description"), f"{kind}{path} has no description"
    assert schema["properties"]["metadata"] == {"type": "object"}


def test_preserve_unknown_fields_only_on_free_form_objects() -> None:
    application = {path for path, node in walk(_schema("Application")) if PRESERVE in node}
    assert application == {
        ".spec.components[].properties",
        ".spec.components[].traits[].properties",
        ".spec.policies[].properties",
    }
    profile = {path for path, node in walk(_schema("ClusterProfile")) if PRESERVE in node}
    assert profile == {".spec.capabilities.*.rendering"}
    for kind, paths in (("Application", application), ("ClusterProfile", profile)):
        for path in paths:
            node = _node(kind, path)
            assert node["type"] == "object" and node[PRESERVE] is True and "properties" not in node


def test_list_types_and_map_keys() -> None:
    components = _node("Application", ".spec.components")
    assert components["x-kubernetes-list-type"] == "map"
    assert components["x-kubernetes-list-map-keys"] == ["name"]
    assert (components["minItems"], components["maxItems"]) == (1, 1000)
    assert components["items"]["required"] == ["name", "type"]
    policies = _node("Application", ".spec.policies")
    assert policies["x-kubernetes-list-type"] == "map"
    assert policies["x-kubernetes-list-map-keys"] == ["name"]
    assert policies["maxItems"] == 100
    assert policies["items"]["required"] == ["name", "type"]
    traits = _node("Application", ".spec.components[].traits")
    assert traits["x-kubernetes-list-type"] == "atomic"
    assert traits["maxItems"] == 64
    assert traits["items"]["required"] == ["type"]
    conditions = _node("Application", ".status.conditions")
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert "type" in conditions["items"]["required"]


def test_string_limits_and_patterns() -> None:
    assert _node("Application", ".spec.components[].name").items() >= {"minLength": 1, "maxLength": 253}.items()
    assert _node("Application", ".spec.components[].type")["minLength"] == 1
    assert _node("Application", ".spec.components[].traits[].type")["minLength"] == 1
    assert _node("Application", ".spec.policies[].name").items() >= {"minLength": 1, "maxLength": 253}.items()
    assert _node("Application", ".spec.profile")["maxLength"] == 253
    account = _node("Application", ".spec.serviceAccountName")
    assert account["maxLength"] == 253
    assert account["pattern"] == r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$"
    annotations = _node("Application", ".spec.components[].annotations")
    assert annotations == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": annotations["description"],
    }


@pytest.mark.parametrize(
    ("field", "minimum", "message"),
    [
        ("interval", "30s", "interval must be at least 30s"),
        ("timeout", "10s", "timeout must be at least 10s"),
    ],
)
def test_durations_carry_the_pattern_and_cel_rule(field: str, minimum: str, message: str) -> None:
    node = _node("Application", f".spec.{field}")
    assert node["type"] == "string"
    assert node["pattern"] == r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
    assert node["x-kubernetes-validations"] == [
        {"rule": f"duration(self) >= duration('{minimum}')", "message": message}
    ]
    assert "default" not in node


def test_enums() -> None:
    assert _node("Application", ".spec.adoptionPolicy")["enum"] == ["Never", "IfUnowned", "Always"]
    assert _node("Application", ".spec.updatePolicy")["enum"] == ["Recreate", "Replace", "SsaMerge", "SsaOverride"]
    assert _node("Application", ".spec.deletePolicy")["enum"] == ["Delete", "Orphan"]
    assert _node("Application", ".status.state")["enum"] == [
        "Ready",
        "Pending",
        "Processing",
        "DeletionPending",
        "Deleting",
        "Error",
        "Waiting",
    ]
    assert _node("Application", ".status.bundles[].state")["enum"] == ["Pending", "Applying", "Ready"]
    assert _node("Application", ".status.conditions[].status")["enum"] == ["True", "False", "Unknown"]
    assert _node("ClusterProfile", ".spec.gitopsEngine")["enum"] == ["fluxcd"]


def test_defaults_only_where_constant_and_never_in_status() -> None:
    defaults = {path: node["default"] for path, node in walk(_schema("Application")) if "default" in node}
    assert defaults == {
        ".spec.components[].properties": {},
        ".spec.components[].traits": [],
        ".spec.components[].traits[].properties": {},
        ".spec.policies": [],
        ".spec.policies[].properties": {},
        ".spec.profile": "",
        ".spec.serviceAccountName": "",
        ".spec.suspend": False,
        ".spec.deletePolicy": "Delete",
    }
    assert not any("default" in node for _, node in walk(_schema("ClusterProfile")))


def test_drift_is_one_of_two_values_and_reported_by_object_and_field() -> None:
    drift = _node("Application", ".spec.drift")
    assert (drift["type"], drift["enum"], "default" in drift) == ("string", ["Correct", "Report"], False)
    entry = _node("Application", ".status.drift[]")
    assert sorted(entry["properties"]) == ["apiVersion", "deleted", "fields", "heldUntil", "kind", "name", "namespace"]
    assert sorted(entry["required"]) == ["apiVersion", "kind", "name"]


def test_a_hook_run_declares_what_makes_it_crash_safe() -> None:
    entry = _node("Application", ".status.hooks[]")
    assert sorted(entry["properties"]) == ["apiVersion", "deletePolicy", "kind", "message", "name", "namespace",
                                           "phase", "run", "startedAt", "state", "timeout"]
    assert sorted(entry["required"]) == ["apiVersion", "deletePolicy", "kind", "name", "phase", "run", "state",
                                         "timeout"]


def test_status_declares_every_field_of_section_1_4() -> None:
    status = _node("Application", ".status")
    assert sorted(status["properties"]) == sorted(
        [
            "observedGeneration",
            "state",
            "conditions",
            "summary",
            "objects",
            "readyObjects",
            "bundles",
            "inventory",
            "compactInventory",  # issue 18, docs/operator.md#identity-hostile-input-and-limits:
            # what the operator writes; inventory is still read
            "profile",
            "clusters",  # docs/multicluster.md#topology: with a topology policy, each cluster
            "clusterSummary",
            "rollout",  # docs/multicluster.md#rollout
            "rolledBack",  # docs/operator.md#automatic-rollback
            "appliedGeneration",
            "lastAppliedAt",
            "processingDigest",
            "processingSince",
            "lastProcessingDigest",
            "revisionDigest",  # the revision's digest while the two above keep the previous release's form
            "revision",
            "lastHandledReconcileAt",
            "dependencies",  # app-dependency policies (issue 15)
            "drift",  # drift not corrected (issue 23, docs/operator.md#drift)
            "hooks",  # each lifecycle hook's last run (issue 40, docs/operator.md#lifecycle-hooks)
            "cluster",  # the remote cluster holding the objects (issue 24, docs/multicluster.md)
            "timeline",  # per revision, when each wave became Ready (issue 42, docs/operator.md#the-timeline)
        ]
    )
    dependency = _node("Application", ".status.dependencies[]")
    assert sorted(dependency["properties"]) == ["name", "namespace", "ready", "state"]
    assert sorted(dependency["required"]) == ["name", "namespace", "ready", "state"]
    for field in ("observedGeneration", "appliedGeneration", "revision"):
        assert status["properties"][field].items() >= {"type": "integer", "format": "int64"}.items()
    for field in ("lastAppliedAt", "processingSince"):
        assert status["properties"][field].items() >= {"type": "string", "format": "date-time"}.items()
    bundle = _node("Application", ".status.bundles[]")
    assert sorted(bundle["properties"]) == ["dependsOn", "name", "objects", "ready", "state", "waves"]
    assert sorted(bundle["properties"]["waves"]["properties"]) == ["first", "last"]
    condition = _node("Application", ".status.conditions[]")
    assert sorted(condition["properties"]) == sorted(
        ["type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"]
    )


def test_inventory_item_schema_declares_every_field_with_its_type() -> None:
    item = _node("Application", ".status.inventory[]")
    types = {name: node["type"] for name, node in item["properties"].items()}
    assert types == {
        "group": "string",
        "version": "string",
        "kind": "string",
        "namespace": "string",
        "name": "string",
        "adoptionPolicy": "string",
        "reconcilePolicy": "string",
        "updatePolicy": "string",
        "deletePolicy": "string",
        "applyOrder": "integer",
        "deleteOrder": "integer",
        "managedTypes": "array",
        "digest": "string",
        "phase": "string",
        "status": "string",
        "lastAppliedAt": "string",
        "adopted": "boolean",
    }
    assert item["properties"]["lastAppliedAt"]["format"] == "date-time"
    assert sorted(item["properties"]["managedTypes"]["items"]["properties"]) == ["group", "kind", "version"]
    assert item["properties"]["deletePolicy"]["enum"] == ["Delete", "Orphan", "OrphanOnApply", "OrphanOnDelete"]
    assert item["properties"]["reconcilePolicy"]["enum"] == ["OnObjectChange", "OnObjectOrComponentChange", "Once"]
    assert "" not in item["properties"]["phase"]["enum"]


# -- presentation --


def test_application_names_scope_subresource_and_columns() -> None:
    crd = _crds()["Application"]
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "applications.oam-operator.dev"
    assert spec["group"] == "oam-operator.dev" and spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": "Application",
        "listKind": "ApplicationList",
        "plural": "applications",
        "singular": "application",
        "shortNames": ["oamapp", "oapp"],
        "categories": ["oam"],
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"] == [
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Status", "type": "string", "jsonPath": ".status.summary"},
        {"name": "Clusters", "type": "string", "jsonPath": ".status.clusterSummary"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "State", "type": "string", "jsonPath": ".status.state", "priority": 1},
        {"name": "Objects", "type": "integer", "jsonPath": ".status.objects", "priority": 1},
        {"name": "Revision", "type": "integer", "jsonPath": ".status.revision", "priority": 1},
        {
            "name": "Message",
            "type": "string",
            "jsonPath": '.status.conditions[?(@.type=="Ready")].message',
            "priority": 1,
        },
        {"name": "Drift", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Drifted")].message',
         "priority": 1},
    ]
    assert version["schema"]["openAPIV3Schema"]["required"] == ["spec"]


def test_cluster_profile_names_scope_and_columns() -> None:
    crd = _crds()["ClusterProfile"]
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "clusterprofiles.oam-operator.dev"
    assert spec["scope"] == "Cluster"
    assert spec["names"]["shortNames"] == ["oamprofile", "oamprofiles"]  # the plural is shared (KEP-4322)
    assert spec["names"]["categories"] == ["oam"]
    assert spec["names"]["singular"] == "clusterprofile"
    (version,) = spec["versions"]
    assert version["subresources"] == {"status": {}}  # written by the operator (docs/multicluster.md)
    assert version["additionalPrinterColumns"] == [
        {"name": "Engine", "type": "string", "jsonPath": ".spec.gitopsEngine"},
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Message", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].message',
         "priority": 1},
    ]
    capabilities = _node("ClusterProfile", ".spec.capabilities")
    assert capabilities["type"] == "object" and "additionalProperties" in capabilities
