"""Operator metrics (docs/operator.md#metrics): names, types, labels, per-Application series, serving."""

from __future__ import annotations

import gzip
import re
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families

from oam_operator import __version__
from oam_operator.api import State
from oam_operator.controller.service.metrics import (
    RECONCILE_BUCKETS,
    TRANSFORM_BUCKETS,
    OperatorMetrics,
    reconcile_result,
)
from tools.operatorprocess import free_port

# name (without the _total suffix of counters) → (type, label names)
EXPECTED = {
    "oam_operator_build_info": ("gauge", {"version"}),
    "oam_operator_reconcile": ("counter", {"branch", "result"}),
    "oam_operator_reconcile_errors": ("counter", {"type"}),
    "oam_operator_reconcile_duration_seconds": ("histogram", {"branch"}),
    "oam_operator_transform_duration_seconds": ("histogram", {"result"}),
    "oam_operator_api_requests": ("counter", {"method", "code"}),
    "oam_operator_lease_requests": ("counter", {"method", "code"}),
    "oam_operator_operations": ("counter", {"action"}),
    "oam_operator_applications": ("gauge", {"state"}),
    "oam_operator_dependents": ("gauge", {"namespace", "name"}),
    "oam_operator_unready_dependents": ("gauge", {"namespace", "name"}),
    "oam_operator_dependency_wakeups": ("counter", set()),
    "oam_operator_readiness_wakeups": ("counter", set()),
    "oam_operator_concurrency_limit": ("gauge", set()),
    "oam_operator_pass_queue_depth": ("gauge", set()),
    "oam_operator_pass_queue_namespaces": ("gauge", set()),
    "oam_operator_pass_queue_deepest": ("gauge", set()),
    "oam_operator_drift_wakeups": ("counter", set()),
    "oam_operator_quiet_passes": ("counter", set()),
    "oam_operator_routine_full_passes": ("counter", {"reason"}),
    "oam_operator_drift_corrections": ("counter", set()),
    "oam_operator_watch_cache_objects": ("gauge", set()),
    "oam_operator_watch_cache_bytes": ("gauge", set()),
    "oam_operator_watches": ("gauge", {"group", "kind", "state"}),
    "oam_operator_leader": ("gauge", {"shard"}),
    "oam_operator_application_not_ready_seconds": ("gauge", {"namespace", "name"}),
    "oam_operator_application_timeout_seconds": ("gauge", {"namespace", "name"}),
    "oam_operator_application_rolled_back": ("gauge", {"namespace", "name"}),
    "oam_operator_application_errors": ("counter", {"namespace", "name"}),
    "oam_operator_application_drift_corrections": ("counter", {"namespace", "name"}),
}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "operator.md"


def _families(metrics: OperatorMetrics) -> dict[str, object]:
    text = generate_latest(metrics.registry).decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def _value(metrics: OperatorMetrics, metric: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(metric, labels)


def test_every_metric_has_its_name_type_and_labels() -> None:
    metrics = OperatorMetrics()
    metrics.count_request("GET", 200)
    metrics.count_request("PUT", 200, lease=True)
    metrics.set_application("shop", "shop", 6, 3)
    metrics.track_application("shop", "shop", not_ready_since=None, timeout_seconds=600)
    metrics.set_watch_state("apps", "Deployment", "synced")
    metrics.leader.labels(shard="eu-1").set(1)
    metrics.routine_full_passes_total.labels("first-pass").inc()
    families = _families(metrics)
    ours = {name for name in families if name.startswith("oam_operator_") and not name.endswith("_created")}
    assert ours == set(EXPECTED)
    for name, (kind, labels) in EXPECTED.items():
        family = families[name]
        assert family.type == kind, name  # type: ignore[attr-defined]
        samples = [s for s in family.samples if not s.name.endswith("_created")]  # type: ignore[attr-defined]
        assert samples, f"{name} has no series"
        for sample in samples:
            assert set(sample.labels) - {"le"} == labels, (name, sample.labels)


def test_the_docs_table_lists_every_metric() -> None:
    section = DOCS.read_text().split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(oam_operator_[a-z_]+)` \|", section, re.MULTILINE))
    suffix = {name: "_total" if kind == "counter" else "" for name, (kind, _) in EXPECTED.items()}
    assert documented == {name + suffix[name] for name in EXPECTED}


def test_the_concurrency_limit_gauge() -> None:
    metrics = OperatorMetrics(process_collectors=False)
    assert _value(metrics, "oam_operator_concurrency_limit") == 0
    metrics.concurrency_limit.set(4)
    assert _value(metrics, "oam_operator_concurrency_limit") == 4


def test_default_process_and_python_collectors_are_registered() -> None:
    families = _families(OperatorMetrics())
    assert "process_cpu_seconds" in families
    assert "python_info" in families
    assert not any(name.startswith("process_") for name in _families(OperatorMetrics(process_collectors=False)))


def test_fixed_label_sets_are_initialised_at_zero() -> None:
    metrics = OperatorMetrics()
    assert _value(metrics, "oam_operator_build_info", version=__version__) == 1
    for branch, result in [
        ("apply", "ready"),
        ("apply", "progressing"),
        ("apply", "pending"),
        ("apply", "error"),
        ("delete", "deleted"),
        ("delete", "progressing"),
        ("delete", "pending"),
        ("delete", "error"),
    ]:
        assert _value(metrics, "oam_operator_reconcile_total", branch=branch, result=result) == 0
    assert _value(metrics, "oam_operator_reconcile_total", branch="apply", result="deleted") is None
    for error_type in ("transform", "validation", "conflict", "other"):
        assert _value(metrics, "oam_operator_reconcile_errors_total", type=error_type) == 0
    for action in ("read", "list", "create", "update", "delete", "orphan"):
        assert _value(metrics, "oam_operator_operations_total", action=action) == 0
    for state in State:
        assert _value(metrics, "oam_operator_applications", state=state.value) == 0
    for branch in ("apply", "delete"):
        assert _value(metrics, "oam_operator_reconcile_duration_seconds_count", branch=branch) == 0
    for result in ("success", "error"):
        assert _value(metrics, "oam_operator_transform_duration_seconds_count", result=result) == 0


def test_histogram_buckets_span_the_documented_ranges() -> None:
    assert (RECONCILE_BUCKETS[0], RECONCILE_BUCKETS[-1]) == (0.01, 120.0)
    assert (TRANSFORM_BUCKETS[0], TRANSFORM_BUCKETS[-1]) == (0.001, 30.0)
    metrics = OperatorMetrics()
    metrics.observe_pass("apply", "ready", 0.2)
    assert _value(metrics, "oam_operator_reconcile_duration_seconds_bucket", branch="apply", le="120.0") == 1
    assert _value(metrics, "oam_operator_reconcile_duration_seconds_bucket", branch="apply", le="0.1") == 0
    metrics.transform_duration_seconds.labels(result="success").observe(0.0005)
    assert _value(metrics, "oam_operator_transform_duration_seconds_bucket", result="success", le="0.001") == 1


def test_helpers_update_the_series() -> None:
    metrics = OperatorMetrics()
    metrics.observe_pass("apply", "ready", 1.5)
    metrics.observe_pass("delete", reconcile_result(None), 0.5)
    assert _value(metrics, "oam_operator_reconcile_total", branch="apply", result="ready") == 1
    assert _value(metrics, "oam_operator_reconcile_total", branch="delete", result="deleted") == 1
    assert _value(metrics, "oam_operator_reconcile_duration_seconds_sum", branch="apply") == 1.5
    metrics.count_error(403)
    metrics.count_error("transform")
    assert _value(metrics, "oam_operator_reconcile_errors_total", type="403") == 1
    assert _value(metrics, "oam_operator_reconcile_errors_total", type="transform") == 1
    metrics.count_request("patch", 200)
    metrics.count_request("GET", None)
    metrics.count_request("GET", 0)
    assert _value(metrics, "oam_operator_api_requests_total", method="PATCH", code="200") == 1
    assert _value(metrics, "oam_operator_api_requests_total", method="GET", code="error") == 2
    metrics.count_request("put", 200, lease=True)
    assert _value(metrics, "oam_operator_lease_requests_total", method="PUT", code="200") == 1
    assert _value(metrics, "oam_operator_api_requests_total", method="PUT", code="200") is None
    metrics.operations_total.labels(action="create").inc()
    assert _value(metrics, "oam_operator_operations_total", action="create") == 1
    counts: dict[State | str, int] = {State.READY: 3, "Error": 1}
    metrics.count_states_when_scraped(lambda: counts)
    assert _value(metrics, "oam_operator_applications", state="Ready") == 3
    assert _value(metrics, "oam_operator_applications", state="Error") == 1
    counts = {State.PENDING: 2}
    assert _value(metrics, "oam_operator_applications", state="Ready") == 0
    assert _value(metrics, "oam_operator_applications", state="Pending") == 2


@pytest.mark.parametrize(
    ("state", "result"),
    [
        (State.READY, "ready"),
        (State.PROCESSING, "progressing"),
        (State.DELETING, "progressing"),
        (State.PENDING, "pending"),
        (State.DELETION_PENDING, "pending"),
        (State.ERROR, "error"),
        (State.WAITING, "pending"),
        (None, "deleted"),
    ],
)
def test_reconcile_result(state: State | None, result: str) -> None:
    assert reconcile_result(state) == result


def test_per_application_series_are_removed() -> None:
    metrics = OperatorMetrics()
    metrics.set_application("a", "one", 5, 2)
    metrics.set_application("a", "two", 1, 0)
    assert _value(metrics, "oam_operator_dependents", namespace="a", name="one") == 5
    assert _value(metrics, "oam_operator_unready_dependents", namespace="a", name="one") == 2
    metrics.remove_application("a", "one")
    metrics.remove_application("a", "one")  # idempotent
    metrics.remove_application("never", "seen")
    assert _value(metrics, "oam_operator_dependents", namespace="a", name="one") is None
    assert _value(metrics, "oam_operator_unready_dependents", namespace="a", name="one") is None
    assert _value(metrics, "oam_operator_dependents", namespace="a", name="two") == 1


def test_not_ready_seconds_are_measured_when_scraped_and_counters_start_at_zero() -> None:
    now = [1000.0]
    metrics = OperatorMetrics(clock=lambda: now[0])
    metrics.track_application("a", "slow", not_ready_since=940.0, timeout_seconds=30)
    metrics.track_application("a", "fine", not_ready_since=None, timeout_seconds=600)
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="slow") == 60
    now[0] = 1010.0
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="slow") == 70
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="fine") == 0
    assert _value(metrics, "oam_operator_application_timeout_seconds", namespace="a", name="slow") == 30
    # Processing (Ready Unknown) became Error (Ready False): a later lastTransitionTime, the same episode
    metrics.track_application("a", "slow", not_ready_since=1005.0, timeout_seconds=30)
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="slow") == 70
    metrics.track_application("a", "slow", not_ready_since=None, timeout_seconds=30)  # Ready: the episode ends
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="slow") == 0
    metrics.track_application("a", "slow", not_ready_since=1008.0, timeout_seconds=30)
    assert _value(metrics, "oam_operator_application_not_ready_seconds", namespace="a", name="slow") == 2
    assert _value(metrics, "oam_operator_application_errors_total", namespace="a", name="fine") == 0
    metrics.track_application("a", "fine", not_ready_since=None, timeout_seconds=600, errors=1, drift_corrections=2)
    metrics.track_application("a", "fine", not_ready_since=None, timeout_seconds=600, drift_corrections=1)
    assert _value(metrics, "oam_operator_application_errors_total", namespace="a", name="fine") == 1
    assert _value(metrics, "oam_operator_application_drift_corrections_total", namespace="a", name="fine") == 3
    assert _value(metrics, "oam_operator_application_rolled_back", namespace="a", name="fine") == 0
    metrics.track_application("a", "fine", not_ready_since=1008.0, timeout_seconds=600, rolled_back=True)
    assert _value(metrics, "oam_operator_application_rolled_back", namespace="a", name="fine") == 1
    metrics.remove_application("a", "fine")
    for metric in ("oam_operator_application_not_ready_seconds", "oam_operator_application_timeout_seconds",
                   "oam_operator_application_rolled_back",
                   "oam_operator_application_errors_total", "oam_operator_application_drift_corrections_total"):
        assert _value(metrics, metric, namespace="a", name="fine") is None



def test_registries_are_independent() -> None:
    first, second = OperatorMetrics(), OperatorMetrics(CollectorRegistry())
    first.count_error("other")
    assert _value(second, "oam_operator_reconcile_errors_total", type="other") == 0


def _samples(text: str, *, openmetrics: bool = False) -> list[tuple[str, str, tuple[tuple[str, str], ...], float]]:
    """(family, sample name, labels, value) of every sample, ``_created`` ones left out."""
    parse = openmetrics_families if openmetrics else text_string_to_metric_families
    return sorted((family.name, sample.name, tuple(sorted(sample.labels.items())), sample.value)
                  for family in parse(text) for sample in family.samples if not sample.name.endswith("_created"))


def _fleet(metrics: OperatorMetrics) -> None:
    metrics.set_application("shop", "web", 6, 2)
    metrics.track_application("shop", "web", not_ready_since=940.0, timeout_seconds=30, errors=1,
                              drift_corrections=2, rolled_back=True)
    metrics.set_application("odd", 'a"b\\c', 1, 0)  # escaped in the label text
    metrics.track_application("odd", 'a"b\\c', not_ready_since=None, timeout_seconds=600.5)
    metrics.set_application("blog", "untracked", 3, 3)  # its gauges without its pass's series


def test_a_scrape_renders_the_per_application_series_as_prometheus_client_would() -> None:
    """docs/operator.md#metrics: the scrape's own rendering of the per-Application series
    (appseries.py) parses to exactly the samples of prometheus-client's exposition of them."""
    metrics = OperatorMetrics(process_collectors=False, clock=lambda: 1000.0)  # values that do not move
    _fleet(metrics)
    expected = _samples(generate_latest(metrics.registry).decode())
    body, content_type = metrics.exposition()
    assert content_type.startswith("text/plain; version=0.0.4")
    assert _samples(body.decode()) == expected
    ours = [entry for entry in expected if entry[2] and ("name", "web") in entry[2]]
    assert [(sample, value) for _, sample, _, value in ours] == [
        ("oam_operator_application_drift_corrections_total", 2.0), ("oam_operator_application_errors_total", 1.0),
        ("oam_operator_application_not_ready_seconds", 60.0), ("oam_operator_application_rolled_back", 1.0),
        ("oam_operator_application_timeout_seconds", 30.0), ("oam_operator_dependents", 6.0),
        ("oam_operator_unready_dependents", 2.0)]
    assert [sample for _, sample, labels, _ in expected if ("name", "untracked") in labels] == [
        "oam_operator_dependents", "oam_operator_unready_dependents"]
    assert "_created" not in body.decode().split("oam_operator_dependents", 1)[1]  # none per Application


def test_an_openmetrics_scrape_has_the_per_application_series_before_its_end() -> None:
    metrics = OperatorMetrics(process_collectors=False, clock=lambda: 1000.0)  # values that do not move
    _fleet(metrics)
    body, content_type = metrics.exposition("application/openmetrics-text; version=1.0.0,text/plain;q=0.5")
    assert content_type.startswith("application/openmetrics-text")
    text = body.decode()
    assert text.endswith("# EOF\n") and text.count("# EOF") == 1
    assert _samples(text, openmetrics=True) == _samples(generate_latest(metrics.registry).decode())


def test_serve_exposes_metrics_and_port_zero_disables_it() -> None:
    metrics = OperatorMetrics()
    metrics.set_application("shop", "web", 6, 2)
    assert metrics.serve(0) is None
    served = metrics.serve(free_port(), addr="127.0.0.1")
    assert served is not None
    server, thread = served
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{server.server_port}/metrics", timeout=5) as response:
            body = response.read().decode()
        assert "oam_operator_build_info" in body
        assert 'oam_operator_dependents{namespace="shop",name="web"} 6' in body.splitlines()
        asked = urllib.request.Request(f"http://127.0.0.1:{server.server_port}/metrics",
                                       headers={"Accept-Encoding": "gzip"})
        with opener.open(asked, timeout=5) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert 'oam_operator_dependents{namespace="shop",name="web"} 6' in \
                gzip.decompress(response.read()).decode().splitlines()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_watch_and_drift_metrics() -> None:
    """docs/operator.md#metrics: the watches of owned objects and what they find."""
    metrics = OperatorMetrics()
    metrics.set_watch_state("apps", "Deployment", "synced")
    metrics.set_watch_state("", "ConfigMap", "forbidden")
    metrics.set_watch_state("apps", "Deployment", "down")
    assert [(_value(metrics, "oam_operator_watches", group="apps", kind="Deployment", state=state))
            for state in ("synced", "down", "forbidden")] == [0.0, 1.0, 0.0]
    assert _value(metrics, "oam_operator_watches", group="", kind="ConfigMap", state="forbidden") == 1.0
    metrics.drift_corrections_total.inc(3)
    metrics.drift_wakeups_total.inc()
    metrics.watch_cache_objects.set(10)
    metrics.watch_cache_bytes.set(4096)
    assert (_value(metrics, "oam_operator_drift_corrections_total"), _value(metrics, "oam_operator_drift_wakeups_total"),
            _value(metrics, "oam_operator_watch_cache_objects"), _value(metrics, "oam_operator_watch_cache_bytes")) == (
        3.0, 1.0, 10.0, 4096.0)


def test_the_watch_cache_is_measured_at_most_every_interval_however_often_scraped() -> None:
    from oam_operator.controller.service.runtime import MeasuredAtMost

    now = [100.0]
    measured: list[float] = []

    def measure() -> tuple[int, int]:
        measured.append(now[0])
        return len(measured), 10 * len(measured)

    sizes = MeasuredAtMost(measure, 5.0, clock=lambda: now[0])
    assert (sizes(), sizes()) == ((1, 10), (1, 10))
    now[0] = 104.9
    assert sizes() == (1, 10)
    now[0] = 105.0
    assert sizes() == (2, 20)
    assert measured == [100.0, 105.0]
