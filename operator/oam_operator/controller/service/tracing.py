"""Traces over OTLP/HTTP with the OpenTelemetry SDK: one trace per revision (docs/operator.md#tracing).

Off unless an OTLP endpoint is configured (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``); ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none``
turn it off again. Every other ``OTEL_*`` variable means what the SDK says (headers, timeout,
sampler, batch delays, resource attributes).

A revision outlives a pass and may outlive the process, so its spans are not held open: the
revision's root, its waves and their gating objects are built from ``status.timeline`` when the
revision ends, with their recorded start and end times and ids derived from the Application's
uid and the revision's key (timeline.py); a pass's own span is exported when the pass ends, as a
child of that root, whose id is known before the root itself is sent.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from oam_operator.api.timeline import Outcome, TimelineEntry
from oam_operator.controller.reconcile.timeline import PassSpan, Traced, parse_started, span_id

__all__ = ["RevisionTracer", "tracing_refusal"]

log = logging.getLogger("oam_operator.controller")

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def tracing_refusal(environ: Mapping[str, str]) -> str | None:
    """Why tracing is configured but cannot run as asked: only OTLP over HTTP/protobuf is exported."""
    exporter = environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
    if exporter not in ("otlp", "none"):
        return f"OTEL_TRACES_EXPORTER={exporter} is not supported: traces are exported with otlp only"
    for name in PROTOCOLS:
        protocol = environ.get(name, "").strip()
        if protocol and protocol != "http/protobuf":
            return f"{name}={protocol} is not supported: traces are exported over http/protobuf only"
    return None


def enabled(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces (an endpoint, not disabled)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


class _PinnedIds(IdGenerator):
    """Random ids, but the ones pinned for the span being started in this thread (a revision's own)."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()
        self._local = threading.local()

    @contextmanager
    def pinned(self, trace_id: int, span: int) -> Iterator[None]:
        self._local.ids = (trace_id, span)
        try:
            yield
        finally:
            self._local.ids = None

    def generate_span_id(self) -> int:
        ids = getattr(self._local, "ids", None)
        return ids[1] if ids else self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        ids = getattr(self._local, "ids", None)
        return ids[0] if ids else self._random.generate_trace_id()


class RevisionTracer:
    """Turns what passes hand over (``Traced``) into spans, through one SDK tracer provider."""

    def __init__(self, processor: SpanProcessor, resource: Resource | None = None) -> None:
        self._ids = _PinnedIds()
        self.provider = TracerProvider(resource=resource or Resource.create({SERVICE_NAME: "oam-operator"}),
                                       id_generator=self._ids)
        self.provider.add_span_processor(processor)
        self._tracer = self.provider.get_tracer("oam_operator")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> RevisionTracer | None:
        """The tracer the ``OTEL_*`` variables ask for, ``None`` when tracing is off."""
        if not enabled(environ):
            return None
        refusal = tracing_refusal(environ)
        if refusal is not None:
            raise ValueError(refusal)
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        named = environ.get("OTEL_SERVICE_NAME") or "service.name=" in environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        resource = Resource.create({} if named else {SERVICE_NAME: "oam-operator"})
        return cls(BatchSpanProcessor(OTLPSpanExporter()), resource)

    def export(self, traced: Traced) -> None:
        """The revisions that ended, then the pass's own span; a failure is logged, never raised."""
        try:
            for entry in traced.ended:
                self._revision(traced, entry)
            if traced.pass_span is not None:
                self._pass(traced, traced.pass_span)
        except Exception as error:  # tracing never fails a pass
            log.warning("exporting spans failed: %s", error)

    def shutdown(self) -> None:
        self.provider.shutdown()

    def _revision(self, traced: Traced, entry: TimelineEntry) -> None:
        trace_hex = entry.trace_id
        if trace_hex is None or entry.ended_ms is None:
            return
        started = parse_started(entry)
        root = span_id(trace_hex, "revision")
        attributes: dict[str, str | int] = {
            "k8s.namespace.name": traced.namespace, "oam.application": traced.name,
            "oam.revision": entry.revision or 0, "oam.outcome": entry.outcome or ""}
        failed = entry.outcome == Outcome.FAILED
        self._span(f"revision {entry.revision or 0}", trace_hex, root, None, started,
                   started + timedelta(milliseconds=entry.ended_ms), attributes, failed)
        since = started + timedelta(milliseconds=entry.applied_ms or 0)  # the first wave: from the first apply
        for wave in entry.waves or ():
            ready = started + timedelta(milliseconds=wave.ready_ms)
            wave_id = span_id(trace_hex, "wave", str(wave.wave))
            self._span(f"wave {wave.wave}", trace_hex, wave_id, root, since, ready, {"oam.wave": wave.wave}, False)
            for gate in wave.gates or ():
                kind, _, name = gate.partition("/")
                self._span(f"{kind} {name}", trace_hex, span_id(trace_hex, "wave", str(wave.wave), gate), wave_id,
                           since, ready, {"k8s.object.kind": kind, "k8s.object.name": name}, False)
            since = ready
        unfinished = entry.applying
        if unfinished is not None and all(wave.wave != unfinished for wave in entry.waves or ()):
            end = started + timedelta(milliseconds=entry.ended_ms)  # the wave the revision ended in
            self._span(f"wave {unfinished}", trace_hex, span_id(trace_hex, "wave", str(unfinished)), root, since,
                       end, {"oam.wave": unfinished}, failed)

    def _pass(self, traced: Traced, span: PassSpan) -> None:
        parent = _context(span.trace_id, span.parent_id)
        attributes: dict[str, str | int] = {"oam.outcome": span.outcome, "oam.writes": span.writes,
                                            "oam.revision": span.revision or 0}
        started = self._tracer.start_span("pass", context=parent, start_time=_ns(span.started),
                                          attributes=attributes)
        started.end(end_time=_ns(span.ended))

    def _span(self, name: str, trace_hex: str, span_hex: str, parent_hex: str | None, start: datetime,
              end: datetime, attributes: Mapping[str, str | int], failed: bool) -> None:
        context = _context(trace_hex, parent_hex) if parent_hex is not None else None
        with self._ids.pinned(int(trace_hex, 16), int(span_hex, 16)):
            span = self._tracer.start_span(name, context=context, start_time=_ns(start), attributes=attributes)
        if failed:
            span.set_status(Status(StatusCode.ERROR, "the revision failed"))
        span.end(end_time=_ns(end))


def _context(trace_hex: str, span_hex: str) -> Context:
    parent = SpanContext(int(trace_hex, 16), int(span_hex, 16), is_remote=True,
                         trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(parent))


def _ns(moment: datetime) -> int:
    return round(moment.timestamp() * 1_000_000_000)
