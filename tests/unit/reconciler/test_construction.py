"""Constructor and option validation, metrics wiring, report defaults
(docs/reconciler.md#constructing-a-reconciler, docs/reconciler.md#options, docs/reconciler.md#operation-counters)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from kubernetes.client import ApiClient, Configuration
from prometheus_client import CollectorRegistry, Counter

from oam_operator.reconciler import ClusterClient, RateLimiter, Reconciler, ReconcilerOptions
from oam_operator.reconciler.metrics import ReconcilerMetrics, prometheus_metrics


@pytest.fixture
def client() -> Iterator[ClusterClient]:
    configuration = Configuration()
    configuration.host = "https://127.0.0.1:1"
    api = ApiClient(configuration)
    c = ClusterClient(api, rate_limiter=RateLimiter(0, 1))
    yield c
    c.close()
    api.close()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (
            "Oam-Operator.dev",
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character",
        ),
        (
            "-x",
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character",
        ),
        ("a" * 254, "must be no more than 253 characters"),
    ],
)
def test_invalid_names(client: ClusterClient, name: str, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        Reconciler(name, client)
    assert str(info.value) == f"invalid reconciler name {name}: {reason}"


def test_defaults(client: ClusterClient) -> None:
    r = Reconciler("oam-operator.dev", client)
    assert r.field_owner == r.finalizer == "oam-operator.dev"
    assert r.report.outcome == "done"
    custom = Reconciler("oam-operator.dev", client, ReconcilerOptions(field_owner="fo", finalizer="x.dev/fin"))
    assert (custom.field_owner, custom.finalizer) == ("fo", "x.dev/fin")


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (ReconcilerOptions(concurrency=0), "concurrency"),
        (ReconcilerOptions(batch_read_threshold=0), "batch_read_threshold"),
        (ReconcilerOptions(field_validation="Loose"), "field_validation"),  # type: ignore[arg-type]
        (ReconcilerOptions(reclaimed_field_managers=("",)), "reclaimed_field_managers"),
        (ReconcilerOptions(adoption_policy="Always"), "adoption_policy"),  # type: ignore[arg-type]
        (ReconcilerOptions(field_owner=""), "field_owner"),
    ],
)
def test_invalid_options_name_the_field(client: ClusterClient, options: ReconcilerOptions, field: str) -> None:
    with pytest.raises(ValueError, match=rf"^invalid reconciler option {field}: "):
        Reconciler("oam-operator.dev", client, options)


def test_prometheus_metrics_wiring() -> None:
    registry = CollectorRegistry()
    counter = Counter("oam_operator_operations", "ops", ["action"], registry=registry)
    metrics = prometheus_metrics(counter)
    metrics.inc("create")
    metrics.inc("create")
    metrics.inc("orphan")
    assert registry.get_sample_value("oam_operator_operations_total", {"action": "create"}) == 2
    assert registry.get_sample_value("oam_operator_operations_total", {"action": "orphan"}) == 1
    ReconcilerMetrics().inc("read")  # unset counters are ignored


def test_no_kopf_and_no_transform_imports() -> None:
    code = (
        "import sys, oam_operator.reconciler.reconciler\n"
        "bad = [m for m in sys.modules if m == 'kopf' or m.startswith(('kopf.', 'oam_operator.oam',"
        " 'oam_operator.controller'))]\n"
        "print(','.join(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
