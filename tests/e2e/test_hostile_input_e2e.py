"""Hostile input never stops the operator or widens a tenant's rights
(issue 18 points 1-7, docs/operator.md#identity-hostile-input-and-limits).

Every test runs the operator as a real process against the full control plane, next to
healthy Applications where that matters, and asserts the exact refusal.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from e2ekit import DOMAIN, GROUP, VERSION, Kube, condition, configmap_component, inventory, sleep_briefly
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster.pytest_plugin import default_wait, wait_until

RBAC = "rbac.authorization.k8s.io"


@pytest.fixture
def deep_recursion() -> Iterator[None]:
    """The test process itself encodes and decodes 10,000-level documents."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(60_000)
    yield
    sys.setrecursionlimit(before)


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def delete_app(kube: Kube, name: str) -> None:
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications", name)


def wait_gone(kube: Kube, name: str, timeout: float | None = None) -> None:
    wait_until(lambda: kube.app_or_none(name) is None, timeout or default_wait(kube.cluster),
               f"Application {name} to be deleted")


def ready_message(app: dict[str, Any]) -> str:
    ready = condition(app, "Ready")
    assert ready is not None
    return str(ready["message"])


def stalled(app: dict[str, Any]) -> bool:
    found = condition(app, "Stalled")
    return found is not None and found["status"] == "True"


# -- issue 18 point 1: deep nesting -------------------------------------------------------------


def test_deep_applications_never_stop_the_operator(start_operator: Any, kube: Kube, deep_recursion: None) -> None:
    operator = start_operator(kube.namespace)
    kube.apply_app("healthy", {"components": [configmap_component("cfg")]})
    kube.wait_ready("healthy")

    def deep(levels: int) -> dict[str, Any]:
        return {"components": [{"name": "deep", "type": "passthrough", "properties": nested(levels)}]}

    # 10,000 levels of properties exceed the API server's own decoding limit: it refuses them
    with pytest.raises(ApiException) as info:
        kube.apply_app("deep-10000", deep(10_000))
    assert info.value.status == 400
    assert json.loads(info.value.body)["message"] == (
        "error decoding patch: error converting YAML to JSON: yaml: exceeded max depth of 10000")
    # 1,000 levels and the deepest the API server accepts: stored, watched, refused by the operator
    for levels in (1_000, 9_990):
        kube.apply_app(f"deep-{levels}", deep(levels))
    for levels in (1_000, 9_990):
        app = kube.wait_state(f"deep-{levels}", "Error", "TransformFailed")
        assert ready_message(app) == (
            "spec.components[0] nests more than 100 levels below spec; an Application may nest at most 100")
        assert stalled(app)
        assert DOMAIN in app["metadata"]["finalizers"]  # kopf did not skip it
    # the operator is still up and the healthy Application still reconciles a change
    assert operator.process.poll() is None
    kube.apply_app("healthy", {"components": [configmap_component("cfg", {"key": "changed"})]})
    wait_until(lambda: kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "changed"},
               default_wait(kube.cluster), "the healthy Application to apply its change")
    kube.wait_ready("healthy")
    for levels in (1_000, 9_990):
        delete_app(kube, f"deep-{levels}")
        wait_gone(kube, f"deep-{levels}")
    assert operator.process.poll() is None
    assert not [e for e in operator.logs() if "RecursionError" in json.dumps(e)]


# -- issue 18 point 2: least privilege ----------------------------------------------------------


def _cluster_admin_binding() -> dict[str, Any]:
    binding = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "take-over"},
               "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "default"}]}
    return {"name": "escalate", "type": "passthrough", "properties": {"object": binding}}


def _grant_admin_to_default(kube: Kube) -> None:
    """The tenant's namespace admin rights, as a namespace owner would give them to its account."""
    client.RbacAuthorizationV1Api(kube.api).create_namespaced_role_binding(kube.namespace, {
        "metadata": {"name": "default-admin"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": kube.namespace}]})


def test_by_default_an_application_cannot_bind_cluster_admin(start_operator: Any, kube: Kube) -> None:
    _grant_admin_to_default(kube)
    start_operator(kube.namespace, "--no-use-operator-identity")
    kube.apply_app("tenant", {"components": [_cluster_admin_binding()]})
    # The API server refuses the escalation; the review names the right the tenant lacks
    # (docs/operator.md#not-permitted-and-the-role-it-needs): binding cluster-admin.
    app = kube.wait_state("tenant", "Error", "NotPermitted")
    assert ready_message(app) == (
        f"ServiceAccount {kube.namespace}/default may not bind clusterroles.{RBAC} cluster-admin in namespace "
        f"{kube.namespace}; the Application's objects need it. `oam-operator rbac tenant -n {kube.namespace}` "
        "prints a Role and RoleBinding that grant it")
    assert stalled(app)
    rbac = client.RbacAuthorizationV1Api(kube.api)
    assert "take-over" not in {b.metadata.name for b in rbac.list_namespaced_role_binding(kube.namespace).items}


def test_the_operator_identity_is_an_explicit_opt_in(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace, "--use-operator-identity")
    kube.apply_app("trusted", {"components": [_cluster_admin_binding()]})
    kube.wait_ready("trusted")
    binding = client.RbacAuthorizationV1Api(kube.api).read_namespaced_role_binding("take-over", kube.namespace)
    assert binding.role_ref.name == "cluster-admin"


# -- issue 18 point 3: permanent API errors -----------------------------------------------------


def test_a_typed_patch_failure_is_stalled_not_retried(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "typed"},
           "spec": {"replicas": "two", "selector": {"matchLabels": {"app": "typed"}},
                    "template": {"metadata": {"labels": {"app": "typed"}},
                                 "spec": {"containers": [{"name": "main", "image": "registry.invalid/app:1"}]}}}}
    kube.apply_app("typed", {"components": [{"name": "typed", "type": "passthrough", "properties": {"object": obj}}]})
    app = kube.wait_state("typed", "Error", "ApiError")
    assert ready_message(app).startswith(
        f"Error creating object apps/v1, Kind=Deployment {kube.namespace}/typed: 500 Internal Server Error: "
        "failed to create typed patch object")
    assert stalled(app)


# -- issue 18 point 4: names --------------------------------------------------------------------


# The names the API server would refuse are refused by the transform, a pure pass: the case is
# in tests/unit/controller/test_passes.py ("a transform failure touches nothing").


# -- issue 18 point 5: deletion always finishes -------------------------------------------------


def test_an_application_larger_than_the_annotation_limit_is_deleted(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    big = configmap_component("big", {"blob": "x" * 300_000})  # > 256 KiB, the limit of all annotations
    kube.apply_app("big", {"components": [big]})
    app = kube.wait_ready("big")
    annotations = app["metadata"].get("annotations") or {}
    assert f"{DOMAIN}/last-handled-configuration" not in annotations  # no diff base is written (diffbase.py)
    assert sum(len(k) + len(v) for k, v in annotations.items()) < 1_000
    delete_app(kube, "big")
    wait_gone(kube, "big")
    assert kube.owned() == []


def _tenant_namespace(kube: Kube) -> str:
    name = f"t18-ns-{secrets.token_hex(3)}"
    kube.core.create_namespace({"metadata": {"name": name, "labels": {"oam-operator.dev/test-run": "e2e"}}})
    return name


def test_deleting_the_namespace_finishes_after_the_tenants_binding_is_gone(
    start_operator: Any, kube: Kube
) -> None:
    namespace = _tenant_namespace(kube)
    tenant = Kube(kube.api, namespace, kube.cluster)
    rbac = client.RbacAuthorizationV1Api(kube.api)
    tenant.core.create_namespaced_service_account(namespace, {"metadata": {"name": "deployer"}})
    rbac.create_namespaced_role(namespace, {"metadata": {"name": "deployer"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create", "update",
                                                                   "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "deployer"}, "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": namespace}]})
    start_operator(namespace)
    tenant.apply_app("app", {"serviceAccountName": "deployer", "components": [configmap_component("cfg")]})
    tenant.wait_ready("app")
    # a finalizer of someone else keeps the ConfigMap, so the status can be seen saying what it waits for
    tenant.core.patch_namespaced_config_map("cfg", namespace, {"metadata": {"finalizers": ["e2e.test/hold"]}})
    # what the namespace controller may do first: remove the tenant's RoleBinding
    rbac.delete_namespaced_role_binding("deployer", namespace)
    kube.core.delete_namespace(namespace)

    def waiting() -> dict[str, Any] | None:
        app = tenant.app_or_none("app")
        return app if app is not None and (app.get("status") or {}).get("state") == "Deleting" else None

    app = wait_until(waiting, default_wait(kube.cluster), "the Application to report its deletion")
    assert ready_message(app) == (
        f"Namespace {namespace} is being deleted: its objects are deleted with the operator's identity: "
        "Deleting dependent objects: waiting for ConfigMap cfg (Deleting)")
    tenant.core.patch_namespaced_config_map("cfg", namespace, {"metadata": {"finalizers": None}})
    wait_until(lambda: namespace not in {n.metadata.name for n in kube.core.list_namespace().items},
               default_wait(kube.cluster) + 60, "the namespace to be deleted")


# -- issue 18 point 6: the hard limit -----------------------------------------------------------


def test_past_the_hard_limit_the_application_is_stalled_and_nothing_is_created(
    start_operator: Any, kube: Kube
) -> None:
    start_operator(kube.namespace)
    components = []
    for part in range(11):
        count = 1_000 if part < 10 else 1
        docs = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{part}-{n}}}\n" for n in range(count))
        components.append({"name": f"part-{part}", "type": "manifests", "properties": {"inline": docs}})
    kube.apply_app("huge", {"components": components})
    app = kube.wait_state("huge", "Error", "InvalidObjects", timeout=default_wait(kube.cluster) + 120)
    assert ready_message(app) == (
        "The Application has 10001 objects; at most 10000 fit into one Application's status "
        "(split it into several Applications)")
    assert stalled(app)
    assert kube.core.list_namespaced_config_map(kube.namespace, label_selector=f"{DOMAIN}/owner-id").items == []
    assert inventory(app) == []


SIZE_REFUSAL = re.compile(
    r"The Application's status would be (\d+) bytes; the limit is (\d+) bytes, what is left of etcd's request "
    r"limit of 1572864 bytes after the spec and metadata \((\d+) bytes\) and 4096 bytes for the request itself "
    r"\(shorten the spec or split the Application\)")


def test_a_spec_that_leaves_no_room_for_the_status_is_refused_up_front_with_the_figures(
    start_operator: Any, kube: Kube
) -> None:
    """Issue 27 point 6: about 1.3 MB of spec and 4,000 objects. The spec fits, the status of
    4,000 objects beside it would not: refused before anything is created, and the status says
    so (no StatusWriteFailed)."""
    operator = start_operator(kube.namespace)
    padding = "p" * 250
    docs = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c-{n:04d}}}\ndata: {{k: {padding}}}\n"
                   for n in range(4_000))
    # Created with the operator's finalizer already on it: kopf's patch adding it (about 250 bytes of
    # metadata with its managedFields entry) could otherwise land between the first pass and the
    # second, and the figures would rightly differ.
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": "wide", "namespace": kube.namespace, "finalizers": [DOMAIN]},
            "spec": {"components": [{"name": "all", "type": "manifests", "properties": {"inline": docs}}]}}
    kube.dynamic.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Application").server_side_apply(
        body=body, namespace=kube.namespace, field_manager="e2e-user", force_conflicts=True)
    app = kube.wait_state("wide", "Error", "InvalidObjects", timeout=default_wait(kube.cluster) + 120)
    found = SIZE_REFUSAL.fullmatch(ready_message(app))
    assert found is not None, ready_message(app)
    status, limit, rest = (int(group) for group in found.groups())
    assert limit == 1_572_864 - 4_096 - rest and status > limit
    stored = len(json.dumps({k: v for k, v in app.items() if k != "status"}, separators=(",", ":")).encode())
    assert abs(stored - rest) < 2_048  # measured by the operator on its copy of the object
    # the inventory (4,000 entries of about 62 bytes, the namespace and the name), its header and
    # type, one bundle, the reserve for conditions and small fields
    inventory_bytes = 4_000 * (62 + len(kube.namespace) + len("c-0000"))
    assert inventory_bytes + 4_096 + 100 < status < inventory_bytes + 4_096 + 400
    assert stalled(app)
    assert kube.core.list_namespaced_config_map(kube.namespace, label_selector=f"{DOMAIN}/owner-id").items == []
    assert inventory(app) == []
    # The next pass (after the status write, on the error backoff) finds the same figures: no
    # second write, no second Event.
    wait_until(lambda: len([e for e in operator.logs() if e.get("msg") == "pass failed" and e.get("name") == "wide"])
               >= 2, default_wait(kube.cluster) + 30, "a second pass of the refused Application")
    assert ready_message(kube.app("wide")) == found.group(0)
    assert [e.reason for e in kube.events("wide") if e.type == "Warning"] == ["InvalidObjects"]


# -- issue 18 point 7: no accidental adoption ---------------------------------------------------


def test_an_existing_namespace_is_not_adopted_and_never_deleted(start_operator: Any, kube: Kube) -> None:
    """Issue 18 point 7 and issue 27 point 7: neither the default policy nor the object's own
    ``adoption-policy: Always`` adopts another tenant's Namespace; only the operator's
    --cluster-scoped-adoption-policy can, and an adopted Namespace is never deleted."""
    operator = start_operator(kube.namespace, "--allow-cluster-scoped-objects")
    victim = _tenant_namespace(kube)
    kube.core.create_namespaced_config_map(victim, {"metadata": {"name": "data"}, "data": {"k": "v"}})
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": victim}}
    component = {"name": "ns", "type": "passthrough", "properties": {"object": namespace, "clusterScoped": True}}
    refusal = (f"Found existing cluster-scoped object /v1, Kind=Namespace {victim} without owner; the adoption "
               "policy for cluster-scoped objects (Never) does not allow adopting it")
    kube.apply_app("grab", {"components": [component]})
    app = kube.wait_state("grab", "Error", "OwnershipConflict")
    assert ready_message(app) == refusal
    # the tenant's own Always, on the object or on the Application, changes nothing
    namespace["metadata"]["annotations"] = {f"{DOMAIN}/adoption-policy": "Always"}
    kube.apply_app("grab", {"adoptionPolicy": "Always", "components": [component]})

    def refused_again() -> dict[str, Any] | None:
        """The new generation's pass ended (not only begun: it says "Restarting processing" first)."""
        app = kube.app("grab")
        status = app.get("status") or {}
        ended = status.get("observedGeneration") == app["metadata"]["generation"] and status.get("state") == "Error"
        return app if ended else None

    app = wait_until(refused_again, default_wait(kube.cluster), "the pass of the new generation to end")
    assert ready_message(app) == refusal
    assert kube.core.read_namespace(victim).metadata.labels.get(f"{DOMAIN}/owner-id") is None
    # the platform's setting adopts it, but deleting the Application leaves the Namespace and its data
    operator.stop()
    start_operator(kube.namespace, "--allow-cluster-scoped-objects", "--cluster-scoped-adoption-policy", "IfUnowned")
    app = kube.wait_ready("grab")
    assert [i.get("adopted") for i in inventory(app)] == [True]
    delete_app(kube, "grab")
    wait_gone(kube, "grab")
    live = kube.core.read_namespace(victim)
    assert live.metadata.deletion_timestamp is None
    assert kube.core.read_namespaced_config_map("data", victim).data == {"k": "v"}


def test_another_applications_namespace_is_not_taken_by_an_always_annotation(start_operator: Any, kube: Kube) -> None:
    """Issue 27 point 7: another tenant's Namespace, owned by its Application; the claimant's
    conflict names that Application, not the claimant."""
    start_operator(kube.namespace, "--allow-cluster-scoped-objects", "--cluster-scoped-adoption-policy", "IfUnowned")
    name = f"t27-ns-{secrets.token_hex(3)}"
    owned = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    kube.apply_app("owner", {"components": [{"name": "ns", "type": "passthrough",
                                             "properties": {"object": owned, "clusterScoped": True}}]})
    kube.wait_ready("owner")
    claimed = {"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": name, "annotations": {f"{DOMAIN}/adoption-policy": "Always"}}}
    kube.apply_app("claimant", {"components": [{"name": "ns", "type": "passthrough",
                                                "properties": {"object": claimed, "clusterScoped": True}}]})
    app = kube.wait_state("claimant", "Error", "OwnershipConflict")
    cluster_id = kube.core.read_namespace("kube-system").metadata.uid
    assert ready_message(app) == (
        f"Owner conflict; object /v1, Kind=Namespace {name} is owned by {cluster_id}/{kube.namespace}/owner; the "
        "adoption policy for cluster-scoped objects (IfUnowned) does not allow taking it over")
    assert inventory(kube.app("owner"))[0]["name"] == name
    delete_app(kube, "claimant")
    wait_gone(kube, "claimant")
    delete_app(kube, "owner")
    wait_gone(kube, "owner")


def test_an_application_that_includes_itself_is_refused(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    me = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": {"name": "me"},
          "spec": {"components": []}}
    kube.apply_app("me", {"components": [{"name": "self", "type": "passthrough", "properties": {"object": me}}]})
    app = kube.wait_state("me", "Error", "InvalidObjects")
    assert ready_message(app) == (
        f'Application {kube.namespace}/me includes itself: component "self" creates Application {kube.namespace}/me')
    wrapper = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": {"name": "wrapper"},
               "spec": {"components": [{"name": "inner", "type": "passthrough", "properties": {"object": {
                   "apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": {"name": "outer"},
                   "spec": {"components": []}}}}]}}
    kube.apply_app("outer", {"components": [{"name": "wrap", "type": "passthrough",
                                             "properties": {"object": wrapper}}]})
    app = kube.wait_state("outer", "Error", "InvalidObjects")
    assert ready_message(app) == (
        f'Application {kube.namespace}/outer contains itself: component "wrap" creates Application '
        f"{kube.namespace}/wrapper, which contains Application {kube.namespace}/outer")
    for name in ("me", "outer"):
        delete_app(kube, name)
        wait_gone(kube, name)
    assert kube.app_or_none("wrapper") is None


def test_older_applications_can_still_be_deleted_after_require_service_account(
    start_operator: Any, kube: Kube
) -> None:
    operator = start_operator(kube.namespace)
    kube.apply_app("old", {"components": [configmap_component("cfg")]})
    kube.wait_ready("old")
    operator.stop()
    start_operator(kube.namespace, "--require-service-account")
    kube.apply_app("old", {"components": [configmap_component("cfg", {"key": "new"})]})
    kube.wait_state("old", "Error", "NotPermitted")
    delete_app(kube, "old")
    wait_gone(kube, "old")
    assert kube.owned() == []


def test_a_status_write_the_api_refuses_is_reported_not_spun_on(start_operator: Any, kube: Kube) -> None:
    """An admission policy denying this namespace's Application status writes: a Warning Event
    says so (the status cannot), and the operator waits the error backoff instead of spinning."""
    admission = client.AdmissionregistrationV1Api(kube.api)
    name = f"freeze-{kube.namespace}"[:63]
    admission.create_validating_admission_policy({
        "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
                 "matchConstraints": {"resourceRules": [{"apiGroups": ["oam-operator.dev"], "apiVersions": ["*"],
                                                         "operations": ["UPDATE"],
                                                         "resources": ["applications/status"]}]},
                 "validations": [{"expression": "false", "message": "status writes are frozen"}]}})
    admission.create_validating_admission_policy_binding({
        "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"],
                 "matchResources": {"namespaceSelector": {"matchLabels": {
                     "kubernetes.io/metadata.name": kube.namespace}}}}})
    try:
        operator = start_operator(kube.namespace)
        kube.apply_app("frozen", {"components": [configmap_component("cfg")]})

        def warned() -> list[Any]:
            return [e for e in kube.events("frozen") if e.reason == "StatusWriteFailed"]

        events = wait_until(warned, default_wait(kube.cluster), "the StatusWriteFailed Event")
        assert events[0].type == "Warning"
        assert events[0].message.startswith("The status could not be written: ")
        assert "status writes are frozen" in events[0].message
        assert kube.owned() == []  # the first pass (FirstSeen) never got its status written
        sleep_briefly(10)
        assert operator.process.poll() is None
        passes = [e for e in operator.logs() if e.get("msg") == "pass finished" and e.get("name") == "frozen"]
        # the error backoff (5 s, 10 s, …): at most 3 passes in those 10 s; the fast retry
        # backoff (50 ms doubling, then 1 s) would have made more than 12
        assert len(passes) <= 5
    finally:
        admission.delete_validating_admission_policy_binding(name)
        admission.delete_validating_admission_policy(name)
