"""A pass delivering to a remote cluster (docs/multicluster.md#how-a-pass-delivers): the owner id and
client of the remote, the refusals before anything is applied, a switched profile, and deletion
waiting for the cluster. The cluster lookup (``Environment.targets``) is scripted."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.controller.reconcile.delivery import DeliveryRefused, NamespaceNotAllowed
from oam_operator.controller.reconcile.passes import apply_pass, delete_pass
from oam_operator.controller.reconcile.seams import Environment, Memory
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.controller.service.remotes import Target
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import TransientApiError
from tests.unit import unitkit
from tests.unit.unitkit import (
    Clock,
    FakeReconciler,
    application,
    compact,
    item_of,
    pass_environment,
    ready_condition,
    stamp,
)

SERVER = "https://spoke.example:6443"
CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-config", "namespace": "shop"}}


def remote_clients() -> TenantClients:
    config = Configuration()
    config.host = "http://127.0.0.1:9"
    return TenantClients(ClusterClient(ApiClient(configuration=config)), use_operator_identity=True)


TARGET = Target("spoke", SERVER, "remote-id", remote_clients(), owner_cluster="remote-id@hub-id")


@dataclasses.dataclass
class Built:
    clients: list[Any] = dataclasses.field(default_factory=list)
    owners: list[str] = dataclasses.field(default_factory=list)


@pytest.fixture
def reconciler(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeReconciler, Built]]:
    fake, built = FakeReconciler(), Built()
    apply, delete = fake.apply, fake.delete

    def recording_apply(inventory: Any, objects: Any, namespace: str, owner_id: str, digest: str, **kw: Any) -> bool:
        built.owners.append(owner_id)
        return apply(inventory, objects, namespace, owner_id, digest, **kw)

    def recording_delete(inventory: Any, owner_id: str) -> bool:
        built.owners.append(owner_id)
        return delete(inventory, owner_id)

    fake.apply, fake.delete = recording_apply, recording_delete  # type: ignore[method-assign]

    def build(domain: str, client: Any, options: Any) -> FakeReconciler:
        built.clients.append(client)
        return fake

    monkeypatch.setattr(unitkit, "_injected_reconciler", build)
    yield fake, built


def environment(answer: Any) -> Environment:
    """``answer``: the Target (or ``None``) the lookup returns, or the exception it raises."""
    profile = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": "spoke"},
               "spec": {"kubeConfig": {"secretRef": {"name": "s"}}}}
    env = pass_environment(profiles={"spoke": profile}, use_operator_identity="true")

    def targets(profile: str, body: Any, namespace: str | None) -> Target | None:
        if isinstance(answer, Exception):
            raise answer
        result: Target | None = answer
        return result

    env.targets = targets
    return env


def test_the_remote_cluster_gets_the_objects_with_its_own_owner_id(reconciler: tuple[FakeReconciler, Built]) -> None:
    _, built = reconciler
    result = apply_pass(application(profile="spoke"), Memory(), environment(TARGET))
    assert result.status["state"] == "Ready"
    assert result.status["cluster"] == "remote-id"
    assert built.owners == ["remote-id@hub-id/shop/web"]
    assert built.clients == [TARGET.clients.operator_client]
    assert result.inventory == []  # the operator's watches hold only its own cluster's objects


def test_the_operators_own_cluster_when_the_profile_names_none(reconciler: tuple[FakeReconciler, Built]) -> None:
    _, built = reconciler
    result = apply_pass(application(profile="spoke"), Memory(), environment(None))
    assert result.status["state"] == "Ready" and "cluster" not in result.status
    assert built.owners == ["c/shop/web"]
    assert result.inventory is not None and len(result.inventory) == 1


@pytest.mark.parametrize(("error", "reason"), [
    (DeliveryRefused("ClusterProfile spoke: kubeconfig Secret ops/s not found"), "ClusterUnusable"),
    (NamespaceNotAllowed("ClusterProfile spoke does not allow Applications of namespace shop "
                         "(allowedNamespaces: none)"), "NotPermitted"),
])
def test_refusals_apply_nothing(reconciler: tuple[FakeReconciler, Built], error: Exception, reason: str) -> None:
    fake, _ = reconciler
    result = apply_pass(application(profile="spoke"), Memory(), environment(error))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"], ready["message"]) == ("Error", reason, str(error))
    assert fake.calls == []


def test_an_unreachable_cluster_is_retried_naming_it(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, _ = reconciler
    error = TransientApiError(f"cluster {SERVER} (ClusterProfile spoke): connection error: refused", status=0,
                              reason="ConnectionError", verb="read")
    result = apply_pass(application(profile="spoke"), Memory(), environment(error))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"]) == ("Pending", "Retrying")
    assert ready["message"] == f"Cluster {SERVER} (ClusterProfile spoke): connection error: refused"
    assert fake.calls == []


def test_an_apply_failing_on_the_remote_names_the_cluster(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, _ = reconciler
    fake.error = TransientApiError("connection error: timed out", status=0, reason="ConnectionError", verb="read")
    result = apply_pass(application(profile="spoke"), Memory(), environment(TARGET))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"]) == ("Pending", "Retrying")
    assert ready["message"] == f"Cluster {SERVER} (ClusterProfile spoke): connection error: timed out"
    assert not result.unreachable  # the hub answers: its status says which cluster did not


def test_a_cluster_that_never_answers_runs_out_of_time(reconciler: tuple[FakeReconciler, Built]) -> None:
    """Processing starts with the first retry, though nothing could be read: past the timeout the
    pass says Pending/Timeout, what fails a rollout (docs/multicluster.md#rollout)."""
    fake, _ = reconciler
    fake.error = TransientApiError("connection error: refused", status=0, reason="ConnectionError", verb="read")
    clock, memory = Clock(), Memory()
    env = environment(TARGET)
    env.clock = clock
    body = application(profile="spoke", timeout="10s")
    first = unitkit.run_apply(body, memory, env)
    assert first.status["processingSince"] == stamp(clock.now)
    assert ready_condition(first.status)["reason"] == "Retrying"
    clock.advance(timedelta(seconds=10))
    later = unitkit.run_apply({**body, "status": first.status}, memory, env)
    ready = ready_condition(later.status)
    assert (later.status["state"], ready["reason"]) == ("Pending", "Timeout")
    assert ready["message"] == f"Cluster {SERVER} (ClusterProfile spoke): connection error: refused"


def test_a_profile_switched_to_another_cluster_is_refused(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, _ = reconciler
    status = {"observedGeneration": 1, "cluster": "old-id", "compactInventory": compact(item_of(CONFIG))}
    result = apply_pass(application(profile="spoke", status=status), Memory(), environment(TARGET))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"]) == ("Error", "ClusterSwitched")
    assert ready["message"] == ("ClusterProfile spoke now delivers to cluster remote-id, but this Application's "
                                "objects are on old-id: point the profile back, or delete the Application to delete "
                                "them there")
    assert result.status["cluster"] == "old-id"
    assert fake.calls == []


def test_deletion_goes_to_the_recorded_cluster(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, built = reconciler
    fake.deleted = True
    status = {"profile": "spoke", "cluster": "remote-id", "compactInventory": compact(item_of(CONFIG))}
    result = delete_pass(application(profile="spoke", status=status, deleting=True), Memory(), environment(TARGET))
    assert result.finished
    assert built.owners == ["remote-id@hub-id/shop/web"] and built.clients == [TARGET.clients.operator_client]


def test_deletion_waits_for_a_cluster_the_profile_no_longer_reaches(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, _ = reconciler
    status = {"profile": "spoke", "cluster": "old-id", "compactInventory": compact(item_of(CONFIG))}
    result = delete_pass(application(profile="spoke", status=status, deleting=True), Memory(), environment(TARGET))
    ready = ready_condition(result.status)
    assert not result.finished and fake.calls == []
    assert (result.status["state"], ready["reason"]) == ("DeletionPending", "DeletionRetrying")
    assert ready["message"] == ('Deletion waits for cluster old-id (ClusterProfile spoke): ClusterProfile spoke now '
                                'delivers to cluster remote-id; annotate oam-operator.dev/abandon: "true" to leave its '
                                "objects there")


def test_a_kubeconfig_of_the_operators_own_cluster_is_no_switch(reconciler: tuple[FakeReconciler, Built]) -> None:
    fake, built = reconciler
    own = Target("spoke", SERVER, "c", remote_clients())  # "c": pass_environment's cluster id
    status = {"observedGeneration": 1, "compactInventory": compact(item_of(CONFIG))}
    result = apply_pass(application(profile="spoke", status=status), Memory(), environment(own))
    assert result.status["state"] == "Ready" and built.owners == ["c/shop/web"]
    assert fake.calls == ["apply"]


def test_an_unhealthy_standard_profile_waits_pending_deleting_nothing(
        reconciler: tuple[FakeReconciler, Built]) -> None:
    """docs/multicluster.md#the-standard-cluster-inventory: ControlPlaneHealthy False is no refusal
    but a wait, on the Retrying backoff; the inventory stays as it was."""
    from oam_operator.controller.reconcile.inventory import ControlPlaneUnhealthy

    fake, _ = reconciler
    message = ("ClusterProfile fleet/spoke (multicluster.x-k8s.io): ControlPlaneHealthy is False: etcd is down; "
               "the operator connects once it is True")
    status = {"observedGeneration": 1, "cluster": "remote-id", "compactInventory": compact(item_of(CONFIG))}
    result = apply_pass(application(profile="spoke", status=status), Memory(),
                        environment(ControlPlaneUnhealthy(message)))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"], ready["message"]) == ("Pending", "Retrying", message)
    assert result.delay is not None and result.delay > 0
    assert fake.calls == [] and result.status["compactInventory"] == status["compactInventory"]


def test_an_unhealthy_standard_profile_times_out_once_processing_passed_its_timeout(
        reconciler: tuple[FakeReconciler, Built]) -> None:
    """Its timeout counts from when processing started (``processingSince``); a fresh Application's
    first pass starts processing with the retryable error, so it too times out (a rollout then
    counts the cluster as failed, docs/multicluster.md#the-standard-cluster-inventory)."""
    from oam_operator.controller.reconcile.inventory import ControlPlaneUnhealthy

    message = "ClusterProfile fleet/spoke (multicluster.x-k8s.io): ControlPlaneHealthy is Unknown: no message; " \
              "the operator connects once it is True"
    started = {"observedGeneration": 1, "cluster": "remote-id", "processingSince": "2020-01-01T00:00:00Z"}
    result = apply_pass(application(profile="spoke", status=started), Memory(),
                        environment(ControlPlaneUnhealthy(message)))
    ready = ready_condition(result.status)
    assert (result.status["state"], ready["reason"], ready["message"]) == ("Pending", "Timeout", message)
    fresh = apply_pass(application(profile="spoke"), Memory(), environment(ControlPlaneUnhealthy(message)))
    assert ready_condition(fresh.status)["reason"] == "Retrying" and "processingSince" in fresh.status


def test_deletion_waits_while_a_standard_profile_is_unhealthy(reconciler: tuple[FakeReconciler, Built]) -> None:
    from oam_operator.controller.reconcile.inventory import ControlPlaneUnhealthy

    fake, _ = reconciler
    message = ("ClusterProfile fleet/spoke (multicluster.x-k8s.io): ControlPlaneHealthy is False: etcd is down; "
               "the operator connects once it is True")
    status = {"profile": "spoke", "cluster": "remote-id", "compactInventory": compact(item_of(CONFIG))}
    result = delete_pass(application(profile="spoke", status=status, deleting=True), Memory(),
                         environment(ControlPlaneUnhealthy(message)))
    ready = ready_condition(result.status)
    assert not result.finished and fake.calls == []
    assert (result.status["state"], ready["reason"], ready["message"]) == ("DeletionPending", "DeletionRetrying",
                                                                            message)
