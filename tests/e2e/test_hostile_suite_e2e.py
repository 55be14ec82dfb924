"""220 seeded hostile Applications thrown at a running operator
(issue 18 point 8, docs/operator.md#identity-hostile-input-and-limits).

Each generated Application carries the outcome it must reach: the API server's own refusal
(status code and message) or the operator's (state, reason, exact Ready message). The
operator runs with its defaults (least privilege: the namespace's ``default`` ServiceAccount,
which holds the namespace's ``admin`` role as a tenant's would) next to healthy Applications.
At the end: the operator process never exited, every healthy Application is Ready and still
reconciles a change, nothing outside the tenant namespace changed, and every hostile
Application shows exactly its refusal.
"""

from __future__ import annotations

import json
import random
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from e2ekit import GROUP, VERSION, Kube, condition, configmap_component
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from oam_operator.oam.document.document import COMPONENT_TYPES
from oam_operator.oam.formatting.choices import closest
from tools.devcluster.pytest_plugin import default_wait, wait_until

SEED = 18
COUNT = 220
HEALTHY = 5
RBAC = "rbac.authorization.k8s.io"
DEPTH = "spec.components[{index}] nests more than 100 levels below spec; an Application may nest at most 100"
DNS1123_LABEL = ("a DNS-1123 label (at most 63 characters: lower-case letters, digits and '-', starting and ending "
                 "with a letter or digit)")


@dataclass
class Case:
    name: str
    category: str
    spec: Any
    expected: tuple[Any, ...]  # ("api", code, message) or (state, reason, message)


def passthrough(name: str, obj: dict[str, Any], cluster_scoped: bool = False) -> dict[str, Any]:
    properties: dict[str, Any] = {"object": obj}
    if cluster_scoped:
        properties["clusterScoped"] = True
    return {"name": name, "type": "passthrough", "properties": properties}


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


class Generator:
    """Seeded hostile Applications for one tenant namespace."""

    def __init__(self, rng: random.Random, namespace: str, sibling: str) -> None:
        self.rng, self.ns, self.sibling = rng, namespace, sibling

    def word(self, length: int = 6) -> str:
        return "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(length - 1)) + "x"

    def valid(self, count: int) -> list[dict[str, Any]]:
        return [configmap_component(f"ok-{n}") for n in range(count)]

    def deep(self, name: str) -> Case:
        index = self.rng.randrange(4)
        components = self.valid(4)
        components.insert(index, {"name": "deep", "type": "passthrough",
                                  "properties": nested(self.rng.randrange(101, 3_000))})
        return Case(name, "deep", {"components": components},
                    ("Error", "TransformFailed", DEPTH.format(index=index)))

    def dotted(self, name: str) -> Case:
        comp = f"{self.word(4)}.{self.word(3)}"
        web = {"name": comp, "type": "webservice", "properties": {"image": "nginx:1", "port": 80}}
        message = (f'component "{comp}": Deployment "{comp}": spec.template.spec.containers[0].name "{comp}" is not '
                   + DNS1123_LABEL)
        return Case(name, "name", {"components": [web]}, ("Error", "TransformFailed", message))

    def long_name(self, name: str) -> Case:
        comp = self.word(self.rng.randrange(64, 120))
        web = {"name": comp, "type": "webservice", "properties": {"image": "nginx:1", "port": 80}}
        message = f'component "{comp}": Deployment "{comp}": metadata.labels[app] "{comp}": must be no more than 63 characters'
        return Case(name, "name", {"components": [web]}, ("Error", "TransformFailed", message))

    def long_job(self, name: str) -> Case:
        job = "j" + self.word(self.rng.randrange(63, 100))
        obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job},
               "spec": {"template": {"spec": {"restartPolicy": "Never",
                                              "containers": [{"name": "main", "image": "registry.invalid/x:1"}]}}}}
        message = (f'component "job": Job "{job}": metadata.name "{job}" is not a DNS-1123 subdomain of at most 63 '
                   "characters (a Job's limit: its name becomes a label value)")
        return Case(name, "name", {"components": [passthrough("job", obj)]}, ("Error", "TransformFailed", message))

    def foreign(self, name: str) -> Case:
        target = self.rng.choice(["kube-system", "default", self.sibling])
        cm = self.word()
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": cm, "namespace": target},
               "data": {"k": "v"}}
        message = (f"Object /v1, Kind=ConfigMap {target}/{cm} is in namespace {target}; only objects in "
                   f"namespace(s) {self.ns} are allowed")
        return Case(name, "foreign", {"components": [passthrough("cm", obj)]}, ("Error", "InvalidObjects", message))

    def cluster_scoped(self, name: str) -> Case:
        obj_name = f"hostile-{self.word()}"
        kinds: list[tuple[str, dict[str, Any]]] = [
            (f"{RBAC}/v1", {"kind": "ClusterRole", "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}),
            (f"{RBAC}/v1", {"kind": "ClusterRoleBinding", "subjects": [{"kind": "ServiceAccount", "name": "default",
                                                                        "namespace": self.ns}],
                            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"}}),
            ("v1", {"kind": "Namespace"}),
            ("admissionregistration.k8s.io/v1", {"kind": "ValidatingWebhookConfiguration", "webhooks": []}),
            ("admissionregistration.k8s.io/v1", {"kind": "MutatingWebhookConfiguration", "webhooks": []}),
            ("scheduling.k8s.io/v1", {"kind": "PriorityClass", "value": 1_000_000_000}),
        ]
        api_version, body = self.rng.choice(kinds)
        obj = {"apiVersion": api_version, "metadata": {"name": obj_name}, **body}
        group_version = api_version if "/" in api_version else f"/{api_version}"
        message = (f"Object {group_version}, Kind={body['kind']} {obj_name} is cluster-scoped; cluster-scoped objects "
                   "are not allowed")
        return Case(name, "cluster-scoped", {"components": [passthrough("obj", obj, cluster_scoped=True)]},
                    ("Error", "InvalidObjects", message))

    def escalation(self, name: str) -> Case:
        """A Role granting everything, or a binding to cluster-admin: the review names the
        ``escalate``/``bind`` right the tenant lacks (docs/operator.md#not-permitted-and-the-role-it-needs)."""
        obj_name = self.word()
        tail = (f"in namespace {self.ns}; the Application's objects need it. `oam-operator rbac {name} -n {self.ns}` "
                "prints a Role and RoleBinding that grant it")
        if self.rng.random() < 0.5:
            obj = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": obj_name},
                   "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cluster-admin"},
                   "subjects": [{"kind": "ServiceAccount", "name": "default"}]}
            message = f"ServiceAccount {self.ns}/default may not bind clusterroles.{RBAC} cluster-admin {tail}"
        else:
            obj = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": obj_name},
                   "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
            message = f"ServiceAccount {self.ns}/default may not escalate roles.{RBAC} {obj_name} {tail}"
        return Case(name, "escalation", {"components": [passthrough("rbac", obj)]}, ("Error", "NotPermitted", message))

    def huge(self, name: str) -> Case:
        cm = self.word()
        blob = "x" * self.rng.randrange(1_050_000, 1_350_000)  # the Application fits etcd; the ConfigMap cannot
        message = (f"Error creating object /v1, Kind=ConfigMap {self.ns}/{cm}: 422 Unprocessable Entity: "
                   f'ConfigMap "{cm}" is invalid: []: Too long: may not be more than 1048576 bytes')
        return Case(name, "huge", {"components": [configmap_component(cm, {"blob": blob})]},
                    ("Error", "ApiError", message))

    def wrong_type(self, name: str) -> Case:
        comp = self.word()
        choice = self.rng.randrange(5)
        if choice == 0:
            message = (f"failed to create typed patch object ({self.ns}/{name}; {GROUP}/{VERSION}, Kind=Application): "
                       ".spec.components: expected list, got &{x}")
            return Case(name, "wrong-type", {"components": "x"}, ("api", 500, message))
        if choice == 1:
            props, message = {"image": "a", "port": "eighty"}, (
                f'component "{comp}" (type "webservice"): properties.port: expected integer, got string (eighty)')
        elif choice == 2:
            props, message = {"image": 7}, f'component "{comp}" (type "webservice"): properties.image: expected string, got int'
        elif choice == 3:
            component = {"name": comp, "type": "passthrough", "properties": {"object": "notamap"}}
            return Case(name, "wrong-type", {"components": [component]}, ("Error", "TransformFailed",
                        f'component "{comp}" (type "passthrough"): properties.object: expected object, got string'))
        else:
            kind = f"no{self.word(5)}"
            component = {"name": comp, "type": kind, "properties": {}}
            # A misspelt built-in keeps its hint; any other unknown type may be a definition's
            # (docs/definitions.md#using-a-definition).
            near = closest(kind, COMPONENT_TYPES)
            expected = (f'component "{comp}": unknown type "{kind}" (valid: {", ".join(sorted(COMPONENT_TYPES))}); '
                        f'did you mean "{near}"?' if near else f'component "{comp}": no definition for component type "{kind}"')
            return Case(name, "wrong-type", {"components": [component]}, ("Error", "TransformFailed", expected))
        return Case(name, "wrong-type", {"components": [{"name": comp, "type": "webservice", "properties": props}]},
                    ("Error", "TransformFailed", message))

    def url(self, name: str) -> Case:
        host, what = self.rng.choice([
            ("127.0.0.1", "a loopback address"), (f"127.{self.rng.randrange(256)}.0.1", "a loopback address"),
            ("169.254.169.254", "a link-local address"),
            (f"10.{self.rng.randrange(256)}.{self.rng.randrange(256)}.{self.rng.randrange(1, 255)}", "a private address"),
            (f"192.168.{self.rng.randrange(256)}.{self.rng.randrange(1, 255)}", "a private address"),
            (f"172.{self.rng.randrange(16, 32)}.0.{self.rng.randrange(1, 255)}", "a private address"),
        ])
        url = f"http://{host}:{self.rng.randrange(1, 65535)}/{self.word()}.yaml"
        message = (f'manifests component "src": manifest source: reading "{url}": refused to connect to {host}: {what} '
                   "(URL sources may reach only public addresses); the operator allows internal networks listed in "
                   "--url-source-allowed-networks")
        component = {"name": "src", "type": "manifests", "properties": {"url": url}}
        return Case(name, "url", {"components": [component]}, ("Error", "TransformFailed", message))

    def itself(self, name: str) -> Case:
        me = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": name},
              "spec": {"components": []}}
        message = f'Application {self.ns}/{name} includes itself: component "self" creates Application {self.ns}/{name}'
        return Case(name, "itself", {"components": [passthrough("self", me)]}, ("Error", "InvalidObjects", message))

    def cases(self, count: int) -> list[Case]:
        makers: list[Callable[[str], Case]] = [
            self.deep, self.dotted, self.long_name, self.long_job, self.foreign, self.cluster_scoped, self.escalation,
            self.wrong_type, self.url, self.itself]
        out = [makers[n % len(makers)](f"h-{n:03d}") for n in range(count - 10)]
        out += [self.huge(f"h-{n:03d}") for n in range(count - 10, count)]  # a few near the size limit
        return out


def snapshot(kube: Kube, sibling: str) -> dict[str, Any]:
    """What a tenant must not change: cluster-scoped kinds, other namespaces' objects."""
    rbac = client.RbacAuthorizationV1Api(kube.api)
    admission = client.AdmissionregistrationV1Api(kube.api)
    scheduling = client.SchedulingV1Api(kube.api)
    ext = client.ApiextensionsV1Api(kube.api)

    def names(items: Any) -> list[tuple[str, str]]:
        return sorted((i.metadata.name, i.metadata.resource_version) for i in items)

    return {
        "namespaces": sorted(n.metadata.name for n in kube.core.list_namespace().items
                             if "oam-operator.dev/test-run" not in (n.metadata.labels or {})),
        "clusterroles": names(rbac.list_cluster_role().items),
        "clusterrolebindings": names(rbac.list_cluster_role_binding().items),
        "validating": names(admission.list_validating_webhook_configuration().items),
        "mutating": names(admission.list_mutating_webhook_configuration().items),
        "priorityclasses": names(scheduling.list_priority_class().items),
        "crds": names(ext.list_custom_resource_definition().items),
        **{f"configmaps/{ns}": names(kube.core.list_namespaced_config_map(ns).items)
           for ns in ("default", sibling)},
        "kube-system configmaps": sorted(c.metadata.name for c in kube.core.list_namespaced_config_map("kube-system").items),
        f"rolebindings/{sibling}": names(rbac.list_namespaced_role_binding(sibling).items),
    }


@pytest.fixture
def deep_recursion() -> Iterator[None]:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    yield
    sys.setrecursionlimit(before)


def test_hostile_applications_never_stop_the_operator_nor_reach_outside(
    start_operator: Any, kube: Kube, deep_recursion: None
) -> None:
    sibling = f"t18-sibling-{secrets.token_hex(3)}"
    kube.core.create_namespace({"metadata": {"name": sibling, "labels": {"oam-operator.dev/test-run": "e2e"}}})
    kube.core.create_namespaced_config_map(sibling, {"metadata": {"name": "precious"}, "data": {"k": "v"}})
    client.RbacAuthorizationV1Api(kube.api).create_namespaced_role_binding(kube.namespace, {
        "metadata": {"name": "default-admin"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": kube.namespace}]})
    operator = start_operator(kube.namespace, "--no-use-operator-identity")
    for n in range(HEALTHY):
        kube.apply_app(f"healthy-{n}", {"components": [configmap_component(f"healthy-{n}")]})
    for n in range(HEALTHY):
        kube.wait_ready(f"healthy-{n}")
    before = snapshot(kube, sibling)

    cases = Generator(random.Random(SEED), kube.namespace, sibling).cases(COUNT)
    assert len(cases) >= 200 and len({c.category for c in cases}) == 9
    api_refusals: dict[str, tuple[int, str]] = {}
    for case in cases:
        try:
            kube.apply_app(case.name, case.spec)
        except ApiException as error:
            api_refusals[case.name] = (error.status, json.loads(error.body)["message"])

    expected_operator = {c.name: c.expected for c in cases if c.expected[0] != "api"}

    def outcomes() -> dict[str, tuple[Any, ...]] | None:
        listed = kube.custom.list_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications")
        seen = {}
        for app in listed["items"]:
            status, ready = app.get("status") or {}, condition(app, "Ready") or {}
            seen[app["metadata"]["name"]] = (status.get("state"), ready.get("reason"), ready.get("message"))
        done = all(seen.get(name, (None,))[0] == "Error" for name in expected_operator)
        return seen if done else None

    started = time.monotonic()
    seen = wait_until(outcomes, default_wait(kube.cluster) + 240, "every hostile Application to be refused")
    took = time.monotonic() - started
    mismatches = [(c.name, c.category, c.expected, seen.get(c.name) if c.expected[0] != "api" else
                   api_refusals.get(c.name)) for c in cases
                  if (c.expected[0] == "api" and api_refusals.get(c.name) != c.expected[1:])
                  or (c.expected[0] != "api" and seen.get(c.name) != c.expected)]
    assert mismatches == [], f"{len(mismatches)} refusals differ (after {took:.0f}s): {mismatches[:3]}"
    assert set(api_refusals) == {c.name for c in cases if c.expected[0] == "api"}

    # the operator never exited, the healthy Applications stayed Ready and still reconcile a change
    assert operator.process.poll() is None
    for n in range(HEALTHY):
        assert seen[f"healthy-{n}"][0] == "Ready"
    kube.apply_app("healthy-0", {"components": [configmap_component("healthy-0", {"key": "changed"})]})
    wait_until(lambda: kube.core.read_namespaced_config_map("healthy-0", kube.namespace).data == {"key": "changed"},
               default_wait(kube.cluster), "a healthy Application to apply a change")
    # nothing outside the tenant namespace changed
    assert snapshot(kube, sibling) == before
    assert kube.core.read_namespaced_config_map("precious", sibling).data == {"k": "v"}
    # and no refused Application created anything: only the healthy ConfigMaps carry an owner label
    owned = kube.core.list_namespaced_config_map(kube.namespace, label_selector="oam-operator.dev/owner-id").items
    assert sorted(c.metadata.name for c in owned) == [f"healthy-{n}" for n in range(HEALTHY)]
    assert operator.process.poll() is None
