"""Spans of a revision, built with the OpenTelemetry SDK into an in-memory exporter (controller/service/tracing.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from oam_operator.api.timeline import TimelineEntry, TimelineWave
from oam_operator.controller.reconcile.timeline import PassSpan, Traced, span_id, trace_id
from oam_operator.controller.service.tracing import RevisionTracer, enabled, tracing_refusal

T0 = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC)
TRACE = trace_id("uid-1", "k1")


def tracer() -> tuple[RevisionTracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    return RevisionTracer(SimpleSpanProcessor(exporter)), exporter


def ended(outcome: str = "Ready") -> TimelineEntry:
    return TimelineEntry(revision=3, key="k1", started="2026-12-06T12:00:00.000Z", ended_ms=10100, outcome=outcome,
                         trace_id=TRACE, applied_ms=600,
                         waves=[TimelineWave(wave=0, ready_ms=8100, gates=["StatefulSet/db"]),
                                TimelineWave(wave=1, ready_ms=10100, gates=["Deployment/web", "Service/web"])])


def test_a_revision_is_one_root_with_a_child_per_wave_and_a_grandchild_per_gate() -> None:
    revisions, exporter = tracer()
    revisions.export(Traced("uid-1", "shop", "app", None, (ended(),)))
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert sorted(spans) == ["Deployment web", "Service web", "StatefulSet db", "revision 3", "wave 0", "wave 1"]
    root = spans["revision 3"]
    assert root.parent is None and f"{root.context.trace_id:032x}" == TRACE
    assert f"{root.context.span_id:016x}" == span_id(TRACE, "revision")
    assert (root.end_time - root.start_time) / 1e9 == pytest.approx(10.1)
    assert root.start_time == round(T0.timestamp() * 1e9)
    assert dict(root.attributes or {}) == {"k8s.namespace.name": "shop", "oam.application": "app",
                                           "oam.revision": 3, "oam.outcome": "Ready"}
    assert root.status.status_code is StatusCode.UNSET
    wave0, wave1 = spans["wave 0"], spans["wave 1"]
    assert wave0.parent is not None and wave0.parent.span_id == root.context.span_id
    assert (wave0.start_time, wave0.end_time) == (root.start_time + 600_000_000, root.start_time + 8_100_000_000)
    assert (wave1.start_time, wave1.end_time) == (wave0.end_time, root.end_time)
    db = spans["StatefulSet db"]
    assert db.parent is not None and db.parent.span_id == wave0.context.span_id
    assert (db.start_time, db.end_time) == (wave0.start_time, wave0.end_time)
    assert {span.context.trace_id for span in spans.values()} == {root.context.trace_id}


def test_a_failed_revision_s_root_and_its_unfinished_wave_have_the_error_status() -> None:
    revisions, exporter = tracer()
    entry = ended("Failed").model_copy(update={"waves": ended().waves[:1], "applying": 1})  # type: ignore[index]
    revisions.export(Traced("uid-1", "shop", "app", None, (entry,)))
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert sorted(spans) == ["StatefulSet db", "revision 3", "wave 0", "wave 1"]
    root, wave1 = spans["revision 3"], spans["wave 1"]
    assert root.status.status_code is StatusCode.ERROR and root.status.description == "the revision failed"
    assert wave1.status.status_code is StatusCode.ERROR
    assert wave1.parent is not None and wave1.parent.span_id == root.context.span_id
    assert (wave1.start_time, wave1.end_time) == (spans["wave 0"].end_time, root.end_time)
    assert f"{wave1.context.span_id:016x}" == span_id(TRACE, "wave", "1")


def test_a_pass_span_is_a_child_of_the_revision_root_sent_before_it() -> None:
    revisions, exporter = tracer()
    passed = PassSpan(TRACE, span_id(TRACE, "revision"), T0, T0 + timedelta(milliseconds=120), "progressing", 2, 3)
    revisions.export(Traced("uid-1", "shop", "app", passed, ()))
    (span,) = exporter.get_finished_spans()
    assert span.name == "pass" and f"{span.context.trace_id:032x}" == TRACE
    assert span.parent is not None and f"{span.parent.span_id:016x}" == span_id(TRACE, "revision")
    assert span.context.span_id != span.parent.span_id
    assert (span.end_time - span.start_time) == 120_000_000
    assert dict(span.attributes or {}) == {"oam.outcome": "progressing", "oam.writes": 2, "oam.revision": 3}


def test_the_same_revision_exported_again_has_the_same_ids() -> None:
    first, first_spans = tracer()
    second, second_spans = tracer()
    for revisions in (first, second):
        revisions.export(Traced("uid-1", "shop", "app", None, (ended(),)))
    ids = [{(s.name, s.context.span_id) for s in exporter.get_finished_spans()} for exporter in (first_spans,
                                                                                                  second_spans)]
    assert ids[0] == ids[1]


@pytest.mark.parametrize(("environ", "on"), [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
])
def test_tracing_is_off_unless_an_endpoint_is_configured(environ: dict[str, str], on: bool) -> None:
    assert enabled(environ) is on
    assert (RevisionTracer.from_environment(environ) is not None) is on


def test_an_exporter_or_protocol_other_than_otlp_over_http_is_refused_with_its_message() -> None:
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    assert tracing_refusal(environ) == ("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: traces are exported "
                                        "over http/protobuf only")
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported"):
        RevisionTracer.from_environment(environ)
    assert tracing_refusal({"OTEL_TRACES_EXPORTER": "console"}) == (
        "OTEL_TRACES_EXPORTER=console is not supported: traces are exported with otlp only")


def test_run_refuses_a_tracing_configuration_it_cannot_honour_before_it_connects() -> None:
    from click.testing import CliRunner

    from oam_operator.cli import main

    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}
    result = CliRunner().invoke(main, ["run", "--kubeconfig", "/nonexistent/kubeconfig", "--no-leader-election"],
                                env=environ)
    assert result.exit_code == 1
    assert result.output == ("Error: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc is not supported: traces are exported "
                             "over http/protobuf only\n")
