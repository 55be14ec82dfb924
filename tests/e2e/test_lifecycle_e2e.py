"""The operator process from Application to Ready, through changes, to deletion
(docs/operator.md#states-and-phases)."""

from __future__ import annotations

import signal
from datetime import datetime
from typing import Any

from e2ekit import (
    DOMAIN,
    Kube,
    condition,
    configmap_component,
    dependency,
    deployment_component,
    inventory,
    sleep_briefly,
)
from kubernetes.client.exceptions import ApiException

from tools.devcluster.pytest_plugin import default_wait, wait_until


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_an_application_reaches_ready_and_stays_quiet(start_operator: Any, kube: Kube) -> None:
    operator = start_operator(kube.namespace)
    kube.apply_app("one", {"components": [configmap_component("settings")]})
    app = kube.wait_ready("one")
    status = app["status"]
    assert DOMAIN in app["metadata"]["finalizers"]
    assert status["state"] == "Ready"
    assert status["revision"] == 1
    assert status["objects"] == status["readyObjects"] == 1
    assert condition(app, "Reconciling") is None and condition(app, "Stalled") is None
    assert condition(app, "Ready")["message"] == "Applied revision 1: 1 objects ready"
    assert condition(app, "Ready")["observedGeneration"] == app["metadata"]["generation"]
    item = inventory({"status": status})[0]
    assert (item["kind"], item["name"], item["phase"], item["status"]) == ("ConfigMap", "settings", "Ready", "Current")
    cm = kube.core.read_namespaced_config_map("settings", kube.namespace)
    assert cm.metadata.labels[f"{DOMAIN}/component"] == "settings"
    assert f"{DOMAIN}/owner-id" in cm.metadata.labels
    assert cm.metadata.annotations[f"{DOMAIN}/owner-id"].endswith(f"/{kube.namespace}/one")
    reasons = [e.reason for e in kube.events("one")]
    assert reasons.count("Ready") == 1

    # Steady state: nothing is written. The pass writes the Ready status before it records the
    # revision (a ControllerRevision) and logs "pass finished": count from that line on.
    wait_until(lambda: any(e.get("msg") == "pass finished" and e.get("name") == "one" and e.get("state") == "Ready"
                           for e in operator.logs()), default_wait(kube.cluster), "the Ready pass to finish")
    writes = operator.write_requests()
    sleep_briefly(5)
    assert operator.write_requests() == writes
    resource_version = kube.app("one")["metadata"]["resourceVersion"]
    sleep_briefly(3)
    assert kube.app("one")["metadata"]["resourceVersion"] == resource_version


def test_groups_become_ready_in_order_and_deletion_runs_in_reverse(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    spec = {
        "components": [deployment_component("db"), deployment_component("web"), configmap_component("web-config")],
        "policies": [dependency(("web", ["db"]), ("web-config", ["db"]))],
    }
    kube.apply_app("shop", spec)
    app = kube.wait_ready("shop")
    bundles = app["status"]["bundles"]
    assert [(b["name"], b["dependsOn"], b["objects"], b["ready"], b["state"]) for b in bundles] == [
        ("shop-00", [], 1, 1, "Ready"),
        ("shop-01", ["shop-00"], 2, 2, "Ready"),
    ]
    db = kube.apps.read_namespaced_deployment("db", kube.namespace)
    available = next(c for c in db.status.conditions if c.type == "Available")
    for later in (kube.apps.read_namespaced_deployment("web", kube.namespace),
                  kube.core.read_namespaced_config_map("web-config", kube.namespace)):
        # Nothing of shop-01 was created before everything of shop-00 was ready.
        assert later.metadata.creation_timestamp >= available.last_transition_time.replace(microsecond=0)

    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications", "shop")

    def gone() -> bool:
        return kube.app_or_none("shop") is None

    wait_until(gone, default_wait(kube.cluster), "the Application to be deleted")
    assert kube.owned() == []


def test_removing_a_component_prunes_its_objects(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("keep"), configmap_component("drop")]})
    kube.wait_ready("app")
    keep_version = kube.core.read_namespaced_config_map("keep", kube.namespace).metadata.resource_version
    kube.apply_app("app", {"components": [configmap_component("keep")]})
    app = kube.wait_ready("app")
    assert app["status"]["revision"] == 2
    assert app["status"]["appliedGeneration"] == app["metadata"]["generation"]
    assert kube.owned() == [("ConfigMap", "keep")]
    assert [i["name"] for i in inventory(app)] == ["keep"]
    # the unchanged object received no write
    assert kube.core.read_namespaced_config_map("keep", kube.namespace).metadata.resource_version == keep_version


def test_an_invalid_update_keeps_everything_applied_before(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("a"), configmap_component("b")]})
    ready = kube.wait_ready("app")
    versions = {name: kube.core.read_namespaced_config_map(name, kube.namespace).metadata.resource_version
                for name in ("a", "b")}
    broken = {"components": [configmap_component("a"), {"name": "b", "type": "no-such-type"}]}
    kube.apply_app("app", broken)
    app = kube.wait_state("app", "Error", "TransformFailed")
    message = condition(app, "Ready")["message"]
    assert message == 'component "b": no definition for component type "no-such-type"'
    assert condition(app, "Ready")["status"] == "False"
    assert condition(app, "Stalled")["status"] == "True"
    assert inventory(app) == inventory(ready)
    assert app["status"]["bundles"] == ready["status"]["bundles"]
    warnings = [e for e in kube.events("app") if e.type == "Warning" and e.reason == "TransformFailed"]
    assert len(warnings) == 1 and warnings[0].message == message
    for name, version in versions.items():
        assert kube.core.read_namespaced_config_map(name, kube.namespace).metadata.resource_version == version
    kube.apply_app("app", {"components": [configmap_component("a"), configmap_component("b", {"key": "new"})]})
    kube.wait_ready("app")
    assert kube.core.read_namespaced_config_map("b", kube.namespace).data == {"key": "new"}


def test_killing_the_operator_mid_apply_loses_nothing(start_operator: Any, kube: Kube) -> None:
    components = [configmap_component(f"cm-{i:02d}") for i in range(30)]
    components += [deployment_component(f"dep-{i}") for i in range(3)]
    spec = {"components": components, "policies": [dependency(*[(f"cm-{i:02d}", ["dep-0"]) for i in range(30)])]}
    kube.apply_app("big", spec)
    # Each new instance waits for the killed one's Lease to expire: a short lease keeps that short.
    lease = ("--leader-election-lease-duration=5s", "--leader-election-renew-deadline=3s",
             "--leader-election-retry-period=1s")
    for attempt in range(3):
        if kube.ready("big"):
            break  # the last instance finished the apply before its kill: no later pass persists anything
        before = kube.app("big")["metadata"]["resourceVersion"]
        operator = start_operator(kube.namespace, *lease)

        def progressed(before: str = before) -> bool:
            # the operator persisted something (a checkpoint or a pass): kill it right there
            return bool(kube.app("big")["metadata"]["resourceVersion"] != before)

        wait_until(progressed, default_wait(kube.cluster), f"progress before kill {attempt + 1}")
        operator.stop(signal.SIGKILL)
        recorded = {(i["kind"], i["name"]) for i in inventory(kube.app("big"))}
        # no object exists in the cluster that the persisted inventory does not record
        assert set(kube.owned()) <= recorded
    start_operator(kube.namespace, *lease)
    app = kube.wait_ready("big")
    recorded = {(i["kind"], i["name"]) for i in inventory(app)}
    assert len(recorded) == len(inventory(app)) == 33
    # every object in the cluster carrying the owner label is in the inventory
    assert set(kube.owned()) == recorded


def test_deletion_is_blocked_while_a_foreign_custom_resource_exists(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace, "--allow-cluster-scoped-objects")
    plural = f"gadgets{kube.namespace.rsplit('-', 1)[-1]}"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.e2e.oam-operator.dev"},
        "spec": {"group": "e2e.oam-operator.dev", "scope": "Namespaced",
                 "names": {"plural": plural, "singular": plural[:-1], "kind": "Gadget" + plural[7:]},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }
    kube.apply_app("owner", {"components": [{"name": "gadgets", "type": "passthrough",
                                              "properties": {"object": crd, "clusterScoped": True}}]})
    kube.wait_ready("owner")
    kind = crd["spec"]["names"]["kind"]
    kube.custom.create_namespaced_custom_object("e2e.oam-operator.dev", "v1", kube.namespace, plural,
                                                {"apiVersion": "e2e.oam-operator.dev/v1", "kind": kind,
                                                 "metadata": {"name": "foreign"}})
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications",
                                                "owner")
    app = kube.wait_state("owner", "Deleting", "DeletionBlocked")
    assert condition(app, "Ready")["message"] == (
        f"Deletion blocked: crd {plural}.e2e.oam-operator.dev is still in use (instances exist)")
    kube.custom.delete_namespaced_custom_object("e2e.oam-operator.dev", "v1", kube.namespace, plural, "foreign")
    wait_until(lambda: kube.app_or_none("owner") is None, default_wait(kube.cluster), "the Application to go")
    try:
        kube.dynamic.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition").get(
            name=f"{plural}.e2e.oam-operator.dev")
        still_there = True
    except ApiException:
        still_there = False
    except Exception:  # the dynamic client raises its own NotFoundError
        still_there = False
    assert not still_there
