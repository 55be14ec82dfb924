"""The shipped health library (docs/health.md#the-library): every kind's rule judged against the
realistic objects in tests/fixtures/health/<group>/<Kind>/<case>.yaml, each of which says on its
first line what it must be (``# expect: Current|InProgress|Failed``)."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
import yaml

from oam_operator.oam.health.library import find_rule, library_rules
from oam_operator.oam.health.rules import CURRENT, FAILED, IN_PROGRESS, HealthRules

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "health"
FIXTURE_FILES = sorted(FIXTURES.rglob("*.yaml"))
EXPECT_PREFIX = "# expect: "
MIN_KINDS = 24
MIN_FIXTURES_PER_KIND = 3


def _expectation(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(EXPECT_PREFIX), f"{path}: the first line must be '{EXPECT_PREFIX}<status>'"
    expect = first.removeprefix(EXPECT_PREFIX).strip()
    assert expect in (CURRENT, IN_PROGRESS, FAILED), f"{path}: unknown expectation {expect!r}"
    return expect


def _load(path: Path) -> dict[str, Any]:
    obj = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(obj, dict), f"{path}: not an object"
    return obj


def _kind_key(path: Path) -> tuple[str, str]:
    """(group, Kind) from the fixture's folder: tests/fixtures/health/<group>/<Kind>/<case>.yaml."""
    relative = path.relative_to(FIXTURES)
    assert len(relative.parts) == 3, f"{path}: expected <group>/<Kind>/<case>.yaml"
    return relative.parts[0], relative.parts[1]


def _fixture_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES).with_suffix(""))


def _verdict_message(relative: str) -> str:
    obj = _load(FIXTURES / f"{relative}.yaml")
    group = obj["apiVersion"].rpartition("/")[0]
    verdict = find_rule(f"{obj['kind']}.{group}").evaluate(obj)
    assert verdict.status == FAILED
    return verdict.message


def test_fixtures_exist() -> None:
    assert FIXTURE_FILES, f"no fixtures under {FIXTURES}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=_fixture_id)
def test_fixture_verdict(path: Path) -> None:
    expect = _expectation(path)
    obj = _load(path)
    group, kind = _kind_key(path)
    assert obj.get("kind") == kind, f"{path}: kind {obj.get('kind')!r} is not its folder's {kind!r}"
    assert obj.get("apiVersion", "").rpartition("/")[0] == group, f"{path}: apiVersion {obj.get('apiVersion')!r} is not of group {group!r}"
    assert isinstance(obj.get("metadata", {}).get("generation"), int), f"{path}: metadata.generation is required"
    assert "spec" in obj, f"{path}: spec is required"
    rule = find_rule(f"{kind}.{group}")
    verdict = rule.evaluate(obj)
    assert verdict.status == expect, f"{path}: {verdict.status} ({verdict.message}), expected {expect}"
    # The rule the operator picks for the object (by apiVersion and kind) is the same one.
    assert HealthRules(library_rules()).evaluate(obj) == verdict


def test_library_size() -> None:
    kinds = {(rule.group, rule.kind) for rule in library_rules()}
    assert len(kinds) == len(library_rules())
    assert len(kinds) >= MIN_KINDS


def test_every_kind_has_its_fixtures() -> None:
    found: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for path in FIXTURE_FILES:
        found[_kind_key(path)][_expectation(path)] += 1
    missing: list[str] = []
    for rule in library_rules():
        name = f"{rule.kind}.{rule.group}"
        counts = found.pop((rule.group, rule.kind), collections.Counter())
        if sum(counts.values()) < MIN_FIXTURES_PER_KIND:
            missing.append(f"{name}: {sum(counts.values())} fixtures, at least {MIN_FIXTURES_PER_KIND} needed")
        for status in (CURRENT, IN_PROGRESS):
            if not counts[status]:
                missing.append(f"{name}: no {status} fixture")
        if rule.failed and not counts[FAILED]:
            missing.append(f"{name}: has a failed expression but no Failed fixture")
        if not rule.failed and counts[FAILED]:
            missing.append(f"{name}: has no failed expression but a Failed fixture")
    assert not missing, "\n".join(missing)
    assert not found, f"fixtures for kinds the library does not have: {sorted(found)}"


def test_an_object_without_status_is_in_progress_for_every_kind() -> None:
    for rule in library_rules():
        obj = {"apiVersion": rule.api_version, "kind": rule.kind,
               "metadata": {"name": "x", "namespace": "default", "generation": 1}, "spec": {}}
        verdict = rule.evaluate(obj)
        assert verdict.status == IN_PROGRESS, f"{rule.kind}.{rule.group}: {verdict}"


def test_required_kinds() -> None:
    names = {f"{rule.kind}.{rule.group}" for rule in library_rules()}
    required = {
        "Certificate.cert-manager.io", "Issuer.cert-manager.io", "ClusterIssuer.cert-manager.io",
        "CertificateRequest.cert-manager.io",
        "GitRepository.source.toolkit.fluxcd.io", "HelmRepository.source.toolkit.fluxcd.io",
        "HelmChart.source.toolkit.fluxcd.io", "Bucket.source.toolkit.fluxcd.io",
        "OCIRepository.source.toolkit.fluxcd.io", "HelmRelease.helm.toolkit.fluxcd.io",
        "Kustomization.kustomize.toolkit.fluxcd.io", "Cluster.postgresql.cnpg.io",
        "ExternalSecret.external-secrets.io", "SecretStore.external-secrets.io",
        "ClusterSecretStore.external-secrets.io", "Provider.pkg.crossplane.io", "Configuration.pkg.crossplane.io",
        "CompositeResourceDefinition.apiextensions.crossplane.io", "Gateway.gateway.networking.k8s.io",
        "Rollout.argoproj.io", "ScaledObject.keda.sh", "Kafka.kafka.strimzi.io", "Prometheus.monitoring.coreos.com",
        "Cluster.cluster.x-k8s.io",
    }
    assert required <= names, sorted(required - names)


# The verdict's message is a contract (it is shown on the Application): the expression that
# decided, then the object's own condition that explains it.

def test_certificate_failed_message() -> None:
    assert _verdict_message("cert-manager.io/Certificate/issuance-failed") == (
        r'''health expression failed (library) is true: status.?conditions.orValue([]).exists(e, e.type == 'Ready' && e.status == 'False' && e.?observedGeneration.orValue(metadata.generation) == metadata.generation && e.?reason.orValue('') != 'InProgress'); condition Ready=False (DoesNotExist): "Issuing certificate as Secret does not exist"'''
    )


def test_helmrelease_failed_message() -> None:
    assert _verdict_message("helm.toolkit.fluxcd.io/HelmRelease/upgrade-failed") == (
        r'''health expression failed (library) is true: status.?conditions.orValue([]).exists(e, (e.type == 'Stalled' && e.status == 'True') || (e.type == 'Ready' && e.status == 'False' && e.?observedGeneration.orValue(metadata.generation) == metadata.generation && e.?reason.orValue('') in ['InstallFailed', 'UpgradeFailed', 'TestFailed', 'RollbackFailed', 'UninstallFailed', 'RetriesExceeded', 'InitFailed'])); condition Ready=False (UpgradeFailed): "Helm upgrade failed for release shop/cache with chart redis@19.6.4: cannot patch \"cache-redis-master\" with kind StatefulSet: StatefulSet.apps \"cache-redis-master\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"'''
    )


def test_cnpg_cluster_failed_message() -> None:
    assert _verdict_message("postgresql.cnpg.io/Cluster/unrecoverable") == (
        r'''health expression failed (library) is true: status.?phase.orValue('') in ['Cluster is unrecoverable and needs manual intervention', 'Cluster is in an unrecoverable state, needs manual intervention', 'Cluster has incomplete or invalid image catalog', 'Cluster cannot proceed to reconciliation due to an unknown plugin being required', 'Cluster cannot proceed to reconciliation due to an error while interacting with plugins', 'Unable to create required cluster objects', 'Cluster cannot execute instance online upgrade due to missing architecture binary']; condition Ready=False (ClusterIsNotReady): "Cluster Is Not Ready"'''
    )
