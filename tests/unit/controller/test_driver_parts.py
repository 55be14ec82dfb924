"""Pure parts of the driver: backoff, jitter, digest, progress messages, status patches."""

from __future__ import annotations

import random

import pytest

from oam_operator.controller.reconcile.backoff import Backoff, ErrorBackoff, Jitter, backoff_delay
from oam_operator.controller.reconcile.digest import component_digest, legacy_component_digest
from oam_operator.controller.reconcile.progress import apply_progress, capitalised, delete_progress
from oam_operator.controller.reconcile.statuswriter import status_patch
from oam_operator.controller.reconcile.tenancy import (
    NO_DEFAULT_MESSAGE,
    NOT_PERMITTED_MESSAGE,
    NotPermitted,
    TenantClients,
)
from oam_operator.reconciler.inventory import InventoryItem, Phase
from oam_operator.reconciler.report import CallReport


def test_backoff_schedule() -> None:
    assert [backoff_delay(n) for n in (1, 2, 3, 4, 5, 6, 20, 21, 50, 51, 500)] == [
        0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 2.0, 2.0, 10.0, 10.0]


def test_switching_activity_restarts_the_count() -> None:
    backoff = Backoff()
    assert [backoff.next("Processing") for _ in range(3)] == [0.05, 0.1, 0.2]
    assert backoff.next("Retrying") == 0.05
    backoff.reset()
    assert backoff.next("Retrying") == 0.05


def test_error_backoff_doubles_up_to_the_interval() -> None:
    errors = ErrorBackoff()
    assert [errors.next("ApiError", 30) for _ in range(5)] == [5, 10, 20, 30, 30]
    assert errors.next("InvalidObjects", 30) == 5


def test_jitter_adds_a_whole_one_to_five_percent() -> None:
    jitter = Jitter(random.Random(7))
    seen = {round(jitter(100.0), 6) for _ in range(200)}
    assert seen == {101.0, 102.0, 103.0, 104.0, 105.0}
    assert jitter(0) == 0


def test_digest_is_canonical_and_ignores_key_order() -> None:
    a = component_digest("d", {"components": [{"name": "a", "type": "x"}]}, "", None)
    b = component_digest("d", {"components": [{"type": "x", "name": "a"}]}, "", None)
    assert a == b and len(a) == 64
    assert component_digest("d", {"components": [{"name": "a", "type": "y"}]}, "", None) != a
    assert component_digest("d", {"components": [{"name": "a", "type": "x"}]}, "p", {"x": 1}) != a
    # a known vector: sha256 of {"domain":"d","profile":{"name":"","spec":null},"spec":{}}
    import hashlib

    canonical = '{"domain":"d","profile":{"name":"","spec":null},"spec":{}}'
    assert component_digest("d", {}, "", None) == hashlib.sha256(canonical.encode()).hexdigest()


def test_digest_counts_only_what_is_applied() -> None:
    """Suspend then resume, a new interval, timeout or history limit: the same revision."""
    spec = {"components": [{"name": "a", "type": "x"}]}
    a = component_digest("d", spec, "", None)
    knobs = {"suspend": False, "interval": "5m", "timeout": "1m", "revisionHistoryLimit": 3}
    assert component_digest("d", spec | knobs, "", None) == a
    assert component_digest("d", spec | {"updatePolicy": "Replace"}, "", None) != a


def test_legacy_digest_is_the_one_earlier_operators_wrote() -> None:
    import hashlib

    canonical = '{"domain":"d","generation":1,"profile":{"name":"","spec":null},"spec":{}}'
    assert legacy_component_digest("d", 1, {}, "", None) == hashlib.sha256(canonical.encode()).hexdigest()


def item(kind: str, name: str, namespace: str = "shop") -> InventoryItem:
    return InventoryItem(group="apps", version="v1", kind=kind, namespace=namespace, name=name,
                         phase=Phase.CREATING)


def test_progress_messages() -> None:
    pending = ((item("Deployment", "web"), "Available: 0/2"), (item("Service", "web", "other"), "Creating"),
               (item("ClusterRole", "r", ""), "Creating"), (item("ConfigMap", "c"), "Creating"),
               (item("ConfigMap", "d"), "Creating"))
    waiting = CallReport(outcome="waiting", wave=1, pending=pending)
    assert apply_progress(waiting, "shop", "shop-01", 1, 2, 0) == (
        "Waiting for bundle shop-01 (1/2 ready): Deployment web (Available: 0/2), Service other/web (Creating), "
        "ClusterRole r (Creating), and 2 more")
    assert apply_progress(CallReport(outcome="checkpoint"), "shop", None, 0, 0, 4) == (
        "Recorded 4 new objects in the inventory")
    assert apply_progress(CallReport(outcome="pruning", pending=pending[:1]), "shop", None, 0, 0, 0) == (
        "Pruning objects removed from the Application: Deployment web (Available: 0/2)")
    assert apply_progress(CallReport(outcome="purging", pending=pending[:1]), "shop", "shop-00", 0, 0, 0) == (
        "Waiting for bundle shop-00: removing completed objects: Deployment web (Available: 0/2)")
    assert delete_progress(CallReport(outcome="deleting", pending=pending[:1]), "shop") == (
        "Deleting dependent objects: waiting for Deployment web (Available: 0/2)")
    assert capitalised("error creating x") == "Error creating x"


def test_status_patch_nulls_vanished_fields() -> None:
    assert status_patch({"a": 1, "processingSince": "t"}, {"a": 2}) == {"processingSince": None, "a": 2}


def test_tenancy_choice() -> None:
    class FakeClient:
        def impersonating(self, user: str) -> str:
            return f"as {user}"

    clients = TenantClients(FakeClient(), default_service_account="", require_service_account=True)  # type: ignore[arg-type]
    assert clients.for_application("ns", "deployer") == "as system:serviceaccount:ns:deployer"  # type: ignore[comparison-overlap]
    try:
        clients.for_application("ns", "")
    except NotPermitted as error:
        assert str(error) == NOT_PERMITTED_MESSAGE
    else:
        raise AssertionError("an Application without a ServiceAccount must be refused")
    assert NOT_PERMITTED_MESSAGE == (
        "spec.serviceAccountName is required (the operator runs with --require-service-account)")
    fallback = TenantClients(FakeClient(), default_service_account="runner")  # type: ignore[arg-type]
    assert fallback.for_application("ns", "") == "as system:serviceaccount:ns:runner"  # type: ignore[comparison-overlap]


def test_least_privilege_by_default_and_the_operator_identity_only_on_request() -> None:
    class FakeClient:
        def impersonating(self, user: str) -> str:
            return f"as {user}"

    operator = FakeClient()
    default = TenantClients(operator)  # type: ignore[arg-type]
    assert default.for_application("ns", "") == "as system:serviceaccount:ns:default"  # type: ignore[comparison-overlap]
    opted_in = TenantClients(operator, use_operator_identity=True)  # type: ignore[arg-type]
    assert opted_in.for_application("ns", "") is operator
    assert opted_in.for_application("ns", "x") == "as system:serviceaccount:ns:x"  # type: ignore[comparison-overlap]
    none = TenantClients(operator, default_service_account="")  # type: ignore[arg-type]
    with pytest.raises(NotPermitted) as info:
        none.for_application("ns", "")
    assert str(info.value) == NO_DEFAULT_MESSAGE == (
        'spec.serviceAccountName is required (the operator runs with --default-service-account "" '
        "and without --use-operator-identity)")
    # deletion never refuses: objects created before the rule are deleted with the operator's identity
    required = TenantClients(operator, require_service_account=True)  # type: ignore[arg-type]
    assert required.for_deletion("ns", "") is operator
    assert none.for_deletion("ns", "") is operator


def test_inside_namespace_routes_only_that_namespaces_objects() -> None:
    from oam_operator.controller.reconcile.tenancy import _in_namespace

    inside = _in_namespace("shop")
    assert inside("/api/v1/namespaces/shop/configmaps/a")
    assert inside("/apis/apps/v1/namespaces/shop/deployments?labelSelector=x")
    assert not inside("/api/v1/namespaces/shop")  # the Namespace object itself
    assert not inside("/api/v1/namespaces/shopping/configmaps/a")
    assert not inside("/apis/rbac.authorization.k8s.io/v1/clusterroles/shop")
