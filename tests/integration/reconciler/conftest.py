"""Fixtures for the reconciler's integration tests (docs/reconciler.md#the-reconciler).

Test CRDs live in group ``testing.oam-operator.dev``: ``Foo`` and ``Bar`` are installed once
per session, ``Baz`` is applied by the tests that need it. ``Foo`` defaults its status to
``{observedGeneration: -1}``, so a fresh Foo is ``InProgress`` until the test "observes" it.
The inventory is persisted as JSON between calls, exactly as the operator does.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import TransientApiError
from oam_operator.reconciler.inventory import InventoryItem, dump_inventory, load_inventory
from oam_operator.reconciler.objectpolicies import UpdatePolicy
from oam_operator.reconciler.options import ReconcilerOptions
from oam_operator.reconciler.ratelimit import RateLimiter
from oam_operator.reconciler.reconciler import Reconciler
from oam_operator.reconciler.typeinfo import TypeInfo
from tools.devcluster.pytest_plugin import default_wait, wait_until

NAME = "reconciler.testing.oam-operator.dev"
GROUP = "testing.oam-operator.dev"
TEST_FINALIZER = "testing.oam-operator.dev/test-finalizer"
OWNER_KEY = f"{NAME}/owner-id"
DIGEST_KEY = f"{NAME}/digest"


def crd_manifest(kind: str, *, scope: str = "Namespaced", default_status: bool = False) -> dict[str, Any]:
    plural = kind.lower() + "s"
    status: dict[str, Any] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "observedGeneration": {"type": "integer"},
            "conditions": {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
    }
    if default_status:
        status["default"] = {"observedGeneration": -1}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "scope": scope,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                "status": status,
                            },
                        }
                    },
                }
            ],
        },
    }


class Kube:
    """A thin helper over the test's own ``ClusterClient`` (its requests are not counted
    against the reconciler's accounting)."""

    def __init__(self, client: ClusterClient, wait: float) -> None:
        self.client = client
        self.wait = wait

    def resource(self, api_version: str, kind: str) -> Any:
        res = self.client.resource_for(api_version, kind)
        if res is None:
            self.client.discovery.invalidate()
            res = self.client.resource_for(api_version, kind)
        assert res is not None, f"no mapping for {api_version} {kind}"
        return res

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        res = self.client.resource_for(api_version, kind)
        if res is None:
            return None
        return self.client.get(res, namespace, name)

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        res = self.resource(obj["apiVersion"], obj["kind"])
        return self.client.create(res, obj["metadata"].get("namespace", ""), obj, field_manager="test")

    def apply(self, obj: Mapping[str, Any], manager: str = "test", force: bool = True) -> dict[str, Any]:
        res = self.resource(obj["apiVersion"], obj["kind"])
        return self.client.patch(
            res,
            obj["metadata"].get("namespace", ""),
            obj["metadata"]["name"],
            obj,
            content_type="application/apply-patch+yaml",
            field_manager=manager,
            force=force,
        )

    def merge(
        self, api_version: str, kind: str, name: str, namespace: str, patch: Any, manager: str = "test"
    ) -> dict[str, Any]:
        res = self.resource(api_version, kind)
        return self.client.patch(
            res, namespace, name, patch, content_type="application/merge-patch+json", field_manager=manager
        )

    def delete(self, api_version: str, kind: str, name: str, namespace: str = "") -> None:
        res = self.client.resource_for(api_version, kind)
        if res is not None:
            self.client.delete(res, namespace, name)

    def observe(self, kind: str, name: str, namespace: str) -> None:
        """Set ``status.observedGeneration = generation`` and ``Ready=True``."""
        obj = self.get(f"{GROUP}/v1", kind, name, namespace)
        assert obj is not None
        res = self.resource(f"{GROUP}/v1", kind)
        self.client.request(
            "status",
            "PATCH",
            res.path(namespace, name) + "/status",
            body={
                "status": {
                    "observedGeneration": obj["metadata"]["generation"],
                    "conditions": [{"type": "Ready", "status": "True", "reason": "Test", "message": "observed"}],
                }
            },
            content_type="application/merge-patch+json",
        )

    def finalize(self, api_version: str, kind: str, name: str, namespace: str = "") -> None:
        obj = self.get(api_version, kind, name, namespace)
        if obj is None:
            return
        remaining = [f for f in obj["metadata"].get("finalizers") or [] if f != TEST_FINALIZER]
        self.merge(api_version, kind, name, namespace, {"metadata": {"finalizers": remaining}})

    def wait_gone(self, api_version: str, kind: str, name: str, namespace: str = "") -> None:
        wait_until(
            lambda: self.get(api_version, kind, name, namespace) is None,
            self.wait,
            f"{kind} {namespace}/{name} to disappear",
        )

    def remove_crd(self, crd_name: str) -> None:
        """Delete a test CRD for good: clear every finalizer of its instances and of the CRD."""
        crd = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd_name)
        if crd is None:
            return
        spec = crd["spec"]
        res = self.client.resource_for(f"{spec['group']}/v1", spec["names"]["kind"])
        if res is not None:
            for obj in self.client.list(res):
                ns = obj["metadata"].get("namespace", "")
                if obj["metadata"].get("finalizers"):
                    self.merge(
                        obj["apiVersion"], obj["kind"], obj["metadata"]["name"], ns, {"metadata": {"finalizers": []}}
                    )
        if crd["metadata"].get("finalizers"):
            self.merge(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                crd_name,
                "",
                {"metadata": {"finalizers": ["customresourcecleanup.apiextensions.k8s.io"]}},
            )
        self.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd_name)
        self.wait_gone("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd_name)
        self.client.discovery.invalidate()

    def wait_established(self, crd_name: str) -> None:
        def established() -> bool:
            crd = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd_name)
            conditions = ((crd or {}).get("status") or {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        wait_until(established, self.wait, f"CRD {crd_name} to be established")


@pytest.fixture(scope="session")
def test_crds(cluster: Any) -> Iterator[None]:
    """Install Foo and Bar once per session."""
    client = ClusterClient.from_kubeconfig(cluster.kubeconfig, rate_limiter=RateLimiter(0, 1))
    kube = Kube(client, default_wait(cluster))
    for manifest in (crd_manifest("Foo", default_status=True), crd_manifest("Bar")):
        kube.apply(manifest)
        kube.wait_established(manifest["metadata"]["name"])
    client.discovery.invalidate()
    yield
    client.close()


@pytest.fixture
def kube(cluster: Any, kube_api: Any, test_crds: None) -> Iterator[Kube]:
    client = ClusterClient(kube_api, rate_limiter=RateLimiter(0, 1), user_agent="reconciler-test-helper")
    yield Kube(client, default_wait(cluster))
    client.close()


@pytest.fixture
def baz_crd(kube: Kube) -> Iterator[dict[str, Any]]:
    """The Baz CRD manifest; whatever a test did with it, it is removed afterwards."""
    kube.remove_crd(f"bazs.{GROUP}")
    yield crd_manifest("Baz")
    kube.remove_crd(f"bazs.{GROUP}")


@pytest.fixture(params=[True, False], ids=["batched", "get-only"])
def batch_reads(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


class Harness:
    """Runs reconciler calls the way the operator does: the inventory is persisted as JSON
    after every call, successful or not, and reloaded for the next one."""

    def __init__(self, reconciler: Reconciler, client: ClusterClient, namespace: str, owner_id: str) -> None:
        self.reconciler = reconciler
        self.client = client
        self.namespace = namespace
        self.owner_id = owner_id
        self.stored = "[]"

    @property
    def inventory(self) -> list[InventoryItem]:
        return load_inventory(self.stored)

    def _persist(self, inventory: Sequence[InventoryItem]) -> None:
        self.stored = json.dumps(dump_inventory(inventory), separators=(",", ":"))

    def apply(self, objects: Sequence[Mapping[str, Any]], component_digest: str = "c1") -> bool:
        inventory = self.inventory
        writes_before = self._object_writes()
        try:
            return self.reconciler.apply(inventory, objects, self.namespace, self.owner_id, component_digest)
        finally:
            self._persist(inventory)
            if self.reconciler.report.outcome == "checkpoint":
                # No object is ever written before its inventory item is persisted
                # (docs/reconciler.md#steps-of-an-apply-call).
                assert self._object_writes() == writes_before

    def apply_checkpointed(
        self, objects: Sequence[Mapping[str, Any]], window: Callable[[], None] | None = None
    ) -> bool:
        """``apply`` with an in-call checkpoint (docs/reconciler.md#in-call-checkpoint) that
        persists the items it is given, after checking that no object was written yet; then
        runs ``window`` (what may happen between the checkpoint and the creates)."""
        inventory = self.inventory
        writes_before = self._object_writes()
        self.checkpoints: list[list[InventoryItem]] = []

        def checkpoint(items: Sequence[InventoryItem]) -> None:
            assert self._object_writes() == writes_before
            self._persist(items)
            self.checkpoints.append(list(items))
            if window is not None:
                window()

        try:
            return self.reconciler.apply(
                inventory, objects, self.namespace, self.owner_id, "c1", checkpoint=checkpoint
            )
        finally:
            self._persist(inventory)

    def _object_writes(self) -> int:
        acc = self.client.accounting
        return sum(acc.count(verb=v) for v in ("create", "apply", "update", "patch", "delete"))

    def delete(self) -> bool:
        inventory = self.inventory
        try:
            return self.reconciler.delete(inventory, self.owner_id)
        finally:
            self._persist(inventory)

    def allowed(self) -> tuple[bool, str]:
        """is_deletion_allowed(); a 429 while a new CRD's storage initialises is retried, as
        the driver would."""
        result: list[tuple[bool, str]] = []

        def attempt() -> bool:
            try:
                result[:] = [self.reconciler.is_deletion_allowed(self.inventory, self.owner_id)]
            except TransientApiError as exc:
                if exc.status != 429:
                    raise
                return False
            return True

        wait_until(attempt, 30, "is_deletion_allowed() to answer")
        return result[0]

    def state(self) -> dict[str, tuple[str, str]]:
        """``{name: (phase, status)}`` of every item."""
        return {i.name: (i.phase.value, i.status) for i in self.inventory}

    def phases(self) -> dict[str, str]:
        return {i.name: i.phase.value for i in self.inventory}

    def item(self, name: str) -> InventoryItem:
        return next(i for i in self.inventory if i.name == name)

    def apply_until(
        self, objects: Sequence[Mapping[str, Any]], done: Callable[[bool], bool], what: str, timeout: float = 60.0
    ) -> bool:
        """Call ``apply`` until ``done(result)``; for transitions the API server makes
        asynchronously (a CRD becoming Established)."""
        last: list[bool] = []

        def step() -> bool:
            last[:] = [self.apply(objects)]
            return done(last[0])

        wait_until(step, timeout, what, step=0.2)
        return last[0]


HarnessFactory = Callable[..., Harness]


@pytest.fixture
def make_harness(
    cluster: Any, kube_api: Any, namespace: str, test_crds: None, batch_reads: bool
) -> Iterator[HarnessFactory]:
    """Build a reconciler under test: name ``reconciler.testing.oam-operator.dev``,
    ``SsaOverride``, additional managed type ``{testing.oam-operator.dev, Bar}``, reapply
    interval 9 minutes, events off, unless overridden. Every scenario runs twice: with
    batched reads and with GETs only (docs/reconciler.md#batched-reads);
    tests that measure one mode set it explicitly."""
    clients: list[ClusterClient] = []
    cluster_id = str(uuid.uuid4())

    def factory(*, owner: str = "app", namespace_: str | None = None, **overrides: Any) -> Harness:
        from datetime import timedelta

        client = overrides.pop("client", None)
        if client is None:
            client = ClusterClient(kube_api, rate_limiter=RateLimiter(0, 1))
            clients.append(client)
        settings: dict[str, Any] = {
            "update_policy": UpdatePolicy.SSA_OVERRIDE,
            "additional_managed_types": (TypeInfo(GROUP, "Bar"),),
            "reapply_interval": timedelta(minutes=9),
            "enable_events": False,
            "batch_reads": batch_reads,
        }
        settings.update(overrides)
        ns = namespace_ or namespace
        reconciler = Reconciler(NAME, client, ReconcilerOptions(**settings))
        return Harness(reconciler, client, ns, f"{cluster_id}/{ns}/{owner}")

    yield factory
    for c in clients:
        c.close()


def configmap(
    name: str, namespace: str = "", data: Mapping[str, str] | None = None, **annotations: str
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = {f"{NAME}/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data or {"k": "v"})}


def secret(name: str, namespace: str = "", **annotations: str) -> dict[str, Any]:
    obj = configmap(name, namespace, **annotations)
    obj["kind"] = "Secret"
    obj["stringData"] = obj.pop("data")
    return obj


def custom(
    kind: str,
    name: str,
    namespace: str = "",
    spec: Mapping[str, Any] | None = None,
    finalizer: bool = False,
    **annotations: str,
) -> dict[str, Any]:
    obj = configmap(name, namespace, **annotations)
    obj["apiVersion"] = f"{GROUP}/v1"
    obj["kind"] = kind
    del obj["data"]
    obj["spec"] = dict(spec or {"size": 1})
    if finalizer:
        obj["metadata"]["finalizers"] = [TEST_FINALIZER]
    return obj
