"""Prometheus metrics of the operator (docs/operator.md#metrics).

``OperatorMetrics`` owns its own ``CollectorRegistry`` (with the process, platform and GC
collectors the default registry would have), so tests and several operators in one process do
not collide. Label values with a fixed set (branches, results, actions, states, error types)
are initialised at zero so dashboards see every series from the start; per-Application series
(``namespace``, ``name``) exist only while the Application does (``remove_application``); they
are what the chart's alerts name (docs/chart.md#alerts-and-dashboard).
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import Metric
from prometheus_client.exposition import ThreadingWSGIServer, choose_encoder

from oam_operator import __version__
from oam_operator.api.conditions import State

from .appseries import ApplicationSeries, Family

__all__ = [
    "BRANCHES",
    "ERROR_TYPES",
    "OPERATIONS",
    "RECONCILE_BUCKETS",
    "RESULTS",
    "TRANSFORM_BUCKETS",
    "OperatorMetrics",
    "reconcile_result",
]

PREFIX = "oam_operator_"
BRANCHES = ("apply", "delete")
RESULTS = ("ready", "progressing", "pending", "error", "deleted")
ERROR_TYPES = ("transform", "validation", "conflict", "other")  # plus HTTP status codes of API errors
OPERATIONS = ("read", "list", "create", "update", "delete", "orphan")
TRANSFORM_RESULTS = ("success", "error")
RECONCILE_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_EOF = "# EOF\n"
#: the per-Application series, in the order ``ApplicationSeries`` takes them
PER_APPLICATION = (
    Family(PREFIX + "dependents", "Inventory items of an Application.", "gauge"),
    Family(PREFIX + "unready_dependents",
           "Inventory items of an Application that are neither Completed nor Ready and Current.", "gauge"),
    Family(PREFIX + "application_not_ready_seconds",
           "Seconds since an Application's Ready condition left True, measured when scraped; 0 while it is "
           "Ready or suspended (the alert OamApplicationNotReady compares it with its timeout).", "gauge"),
    Family(PREFIX + "application_timeout_seconds", "An Application's timeout: spec.timeout, else --default-timeout.",
           "gauge"),
    Family(PREFIX + "application_rolled_back",
           "1 while a rollback policy holds an Application at an earlier revision because its spec failed "
           "(status.rolledBack; docs/operator.md#automatic-rollback), else 0.", "gauge"),
    Family(PREFIX + "application_errors",
           "Passes of an Application ending in an error (reconcile_errors_total by Application).", "counter"),
    Family(PREFIX + "application_drift_corrections",
           "Objects of an Application re-applied because of drift (drift_corrections_total by Application).",
           "counter"),
)
TRANSFORM_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# The results each branch can produce (the delete branch never ends "ready", the apply branch never "deleted").
_BRANCH_RESULTS = {
    "apply": ("ready", "progressing", "pending", "error"),
    "delete": ("deleted", "progressing", "pending", "error"),
}
_STATE_RESULTS = {
    State.READY: "ready",
    State.PROCESSING: "progressing",
    State.DELETING: "progressing",
    State.PENDING: "pending",
    State.DELETION_PENDING: "pending",
    State.ERROR: "error",
    State.WAITING: "pending",
}


def reconcile_result(state: State | None) -> str:
    """The ``result`` label of a pass that ended in ``state``; ``None`` = the Application is gone."""
    return "deleted" if state is None else _STATE_RESULTS[state]


WATCH_STATES = ("synced", "down", "forbidden")


class PassQueue(Protocol):
    """What the pass-queue gauges read (``passlimiter.PassLimiter``)."""

    @property
    def queued(self) -> int: ...
    @property
    def waiting_keys(self) -> int: ...
    @property
    def deepest(self) -> int: ...


class OperatorMetrics:
    """Every metric of docs/operator.md#metrics, registered in ``self.registry``."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process_collectors: bool = True,
                 clock: Callable[[], float] = time.time) -> None:
        #: everything but the per-Application series (``appseries.py``), which a scrape renders apart
        self.common = registry if registry is not None else CollectorRegistry()
        self.per_application = ApplicationSeries(PER_APPLICATION, clock)
        #: every series, for whatever reads a registry (``get_sample_value``, ``generate_latest``)
        self.registry = CollectorRegistry()
        self.registry.register(_Registered(self.common))
        self.registry.register(self.per_application)
        if process_collectors:
            ProcessCollector(registry=self.common)
            PlatformCollector(registry=self.common)
            GCCollector(registry=self.common)
        r = self.common
        self.build_info = Gauge(PREFIX + "build_info", "Build information.", ["version"], registry=r)
        self.reconcile_total = Counter(
            PREFIX + "reconcile_total", "Passes by branch and outcome.", ["branch", "result"], registry=r
        )
        self.reconcile_errors_total = Counter(
            PREFIX + "reconcile_errors_total",
            "Passes ending in an exception or a transform failure, by error type "
            "(HTTP status of an API error, else transform, validation, conflict or other).",
            ["type"],
            registry=r,
        )
        self.reconcile_duration_seconds = Histogram(
            PREFIX + "reconcile_duration_seconds",
            "Duration of a pass.",
            ["branch"],
            buckets=RECONCILE_BUCKETS,
            registry=r,
        )
        self.transform_duration_seconds = Histogram(
            PREFIX + "transform_duration_seconds",
            "Duration of the OAM transform.",
            ["result"],
            buckets=TRANSFORM_BUCKETS,
            registry=r,
        )
        self.api_requests_total = Counter(
            PREFIX + "api_requests_total",
            "Kubernetes API requests of the operator's clients, by method and HTTP status (or error).",
            ["method", "code"],
            registry=r,
        )
        self.lease_requests_total = Counter(
            PREFIX + "lease_requests_total",
            "Kubernetes API requests of leader election (its Lease), by method and HTTP status (or error): "
            "an instance's own, whatever the number of Applications, so apart from api_requests_total.",
            ["method", "code"],
            registry=r,
        )
        self.operations_total = Counter(
            PREFIX + "operations_total", "Operations of the object reconciler.", ["action"], registry=r
        )
        self.applications = Gauge(PREFIX + "applications", "Applications per state.", ["state"], registry=r)
        self.dependency_wakeups_total = Counter(
            PREFIX + "dependency_wakeups_total",
            "Applications woken because an Application they depend on, or that depends on them, changed "
            "(app-dependency policies).",
            registry=r,
        )
        self.concurrency_limit = Gauge(
            PREFIX + "concurrency_limit",
            "Passes allowed to run at once now: the adaptive limit, at most --max-concurrent-reconciles.",
            registry=r,
        )
        # Fair queues (docs/operator.md#fair-queues): no namespace label, the namespaces are unbounded.
        self.pass_queue_depth = Gauge(
            PREFIX + "pass_queue_depth", "Passes waiting for a slot, all namespaces together.", registry=r)
        self.pass_queue_namespaces = Gauge(
            PREFIX + "pass_queue_namespaces", "Namespaces with passes waiting for a slot.", registry=r)
        self.pass_queue_deepest = Gauge(
            PREFIX + "pass_queue_deepest", "Passes waiting in the longest queue of one namespace.", registry=r)
        self.readiness_wakeups_total = Counter(
            PREFIX + "readiness_wakeups_total",
            "Applications woken because a workload they wait for is no longer progressing (readiness watch).",
            registry=r,
        )
        self.quiet_passes_total = Counter(
            PREFIX + "quiet_passes_total",
            "Routine passes skipped: their last full pass confirmed the Application from the watches, "
            "which would have woken it for any change (docs/operator.md#quiet-routine-passes).",
            registry=r,
        )
        self.routine_full_passes_total = Counter(
            PREFIX + "routine_full_passes_total",
            "Routine passes run in full, by why they could not be skipped: first-pass, not-ready, drift, requests, "
            "outside-reads, policies, reapply-due, unwritten, generation, relisted, due "
            "(docs/operator.md#quiet-routine-passes).",
            ["reason"],
            registry=r,
        )
        self.drift_wakeups_total = Counter(
            PREFIX + "drift_wakeups_total",
            "Ready Applications woken because an object of theirs drifted or reported drift may be resolved.",
            registry=r,
        )
        self.drift_corrections_total = Counter(
            PREFIX + "drift_corrections_total",
            "Objects re-applied because another field manager changed a field the Application sets, or "
            "deleted them (spec.drift: Correct).",
            registry=r,
        )
        self.watch_cache_objects = Gauge(
            PREFIX + "watch_cache_objects",
            "Objects the watches of owned objects keep (measured when scraped, at most every 5 s).",
            registry=r,
        )
        self.watch_cache_bytes = Gauge(
            PREFIX + "watch_cache_bytes",
            "Bytes the watches of owned objects keep for them: keys, entries and field sets "
            "(measured when scraped, at most every 5 s).",
            registry=r,
        )
        self.watches = Gauge(
            PREFIX + "watches",
            "Watches of owned objects by kind and state (1 for the current one): synced, down or forbidden "
            "(then its drift is found at the reapply interval).",
            ["group", "kind", "state"],
            registry=r,
        )
        self.leader = Gauge(
            PREFIX + "leader",
            "1 while this instance holds its shard's Lease and reconciles, 0 while it stands by "
            "(docs/operator.md#leader-election); 1 on every instance without leader election.",
            ["shard"],
            registry=r,
        )
        self._initialise()

    def _initialise(self) -> None:
        self.build_info.labels(version=__version__).set(1)
        for branch, results in _BRANCH_RESULTS.items():
            self.reconcile_duration_seconds.labels(branch=branch)
            for result in results:
                self.reconcile_total.labels(branch=branch, result=result)
        for error_type in ERROR_TYPES:
            self.reconcile_errors_total.labels(type=error_type)
        for result in TRANSFORM_RESULTS:
            self.transform_duration_seconds.labels(result=result)
        for action in OPERATIONS:
            self.operations_total.labels(action=action)
        self.count_states_when_scraped(dict)

    # -- helpers used by the driver --

    def observe_pass(self, branch: str, result: str, seconds: float) -> None:
        """Count one pass and record its duration."""
        self.reconcile_total.labels(branch=branch, result=result).inc()
        self.reconcile_duration_seconds.labels(branch=branch).observe(seconds)

    def count_error(self, error_type: str | int) -> None:
        """Count a pass that ended in an error (an HTTP status, or transform/validation/conflict/other)."""
        self.reconcile_errors_total.labels(type=str(error_type)).inc()

    def count_request(self, method: str, status: int | None, *, lease: bool = False) -> None:
        """Count one API request; ``status`` ``None`` or 0 means no response arrived (``code="error"``);
        ``lease``: one of leader election's."""
        counter = self.lease_requests_total if lease else self.api_requests_total
        counter.labels(method=method.upper(), code=str(status) if status else "error").inc()

    def watch_pass_queue(self, queue: PassQueue) -> None:
        """The pass-queue gauges read ``queue`` (the pass limiter) when scraped."""
        self.pass_queue_depth.set_function(lambda: float(queue.queued))
        self.pass_queue_namespaces.set_function(lambda: float(queue.waiting_keys))
        self.pass_queue_deepest.set_function(lambda: float(queue.deepest))

    def count_states_when_scraped(self, counts: Callable[[], Mapping[State | str, int]]) -> None:
        """The Applications-per-state gauge reads ``counts()`` (state -> Applications; missing
        states are 0) when scraped: counting every Application after each pass would make a
        fleet's passes cost the square of its size."""
        def reader(state: State) -> Callable[[], float]:
            return lambda: float(sum(value for key, value in counts().items() if State(key) is state))

        for state in State:
            self.applications.labels(state=state.value).set_function(reader(state))

    def set_watch_state(self, group: str, kind: str, state: str) -> None:
        """The watch of owned objects of (group, kind) is now in ``state``; the others are 0."""
        for each in WATCH_STATES:
            self.watches.labels(group=group, kind=kind, state=each).set(1 if each == state else 0)

    def set_application(self, namespace: str, name: str, dependents: int, unready: int) -> None:
        """Set the per-Application gauges."""
        self.per_application.set_dependents(namespace, name, dependents, unready)

    def track_application(self, namespace: str, name: str, *, not_ready_since: float | None,
                          timeout_seconds: float, errors: int = 0, drift_corrections: int = 0,
                          rolled_back: bool = False) -> None:
        """After a pass of the Application: since when (epoch seconds) it is not Ready (``None``: Ready
        or suspended), its timeout, the errors and drift corrections of the pass, whether it is rolled
        back (docs/operator.md#automatic-rollback). The earliest
        start is kept while it stays not Ready: the Ready condition's ``lastTransitionTime`` moves
        from Unknown (Processing) to False (Error) too. Its counters start at 0 on its first pass,
        so ``increase()`` sees the first error too."""
        self.per_application.track(namespace, name, not_ready_since=not_ready_since, timeout_seconds=timeout_seconds,
                                   errors=errors, drift_corrections=drift_corrections, rolled_back=rolled_back)

    def remove_application(self, namespace: str, name: str) -> None:
        """Drop every series of the Application (it is gone); a no-op when it has none."""
        self.per_application.remove(namespace, name)

    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """A scrape's body and content type: prometheus-client's exposition of ``common`` (OpenMetrics
        when ``accept`` asks for it) with the per-Application series rendered into it."""
        encoder, content_type = choose_encoder(accept or "")
        body = encoder(self.common).decode()
        openmetrics = content_type.startswith("application/openmetrics-text")
        if openmetrics and body.endswith(_EOF):
            return (body[:-len(_EOF)] + self.per_application.render(openmetrics=True) + _EOF).encode(), content_type
        return (body + self.per_application.render()).encode(), content_type

    def serve(self, port: int, addr: str = "0.0.0.0") -> tuple[WSGIServer, threading.Thread] | None:
        """Serve ``/metrics`` (any path) on ``port`` in a daemon thread; port 0 disables it (returns
        ``None``). Returns ``(server, thread)``; ``server.shutdown()`` stops it."""
        if port == 0:
            return None
        server = make_server(addr, port, self._wsgi, ThreadingWSGIServer, handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever, name="oam-metrics", daemon=True)
        thread.start()
        return server, thread

    def _wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        body, content_type = self.exposition(environ.get("HTTP_ACCEPT"))
        headers = [("Content-Type", content_type)]
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            body = gzip.compress(body, compresslevel=6)
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [body]


class _Registered:
    """A registry as one collector of another (``OperatorMetrics.registry``)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.inner = registry

    def collect(self) -> Iterator[Metric]:
        return iter(self.inner.collect())

    def describe(self) -> list[Metric]:
        return []  # its own registry checked its names


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log line per scrape."""
