"""The chart's `tracing` values (docs/chart.md#tracing): the OTEL_* variables of every Deployment, off by default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.unitkit import of_kind

Render = Callable[..., list[dict[str, Any]]]


def otel_env(deployment: dict[str, Any]) -> dict[str, str]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container.get("env") or () if e["name"].startswith("OTEL_")}


def test_tracing_is_off_by_default(render: Render) -> None:
    assert [otel_env(d) for d in of_kind(render(), "Deployment")] == [{}]


def test_tracing_sets_the_endpoint_the_service_name_and_more_variables_on_every_shard(render: Render) -> None:
    values = {"tracing": {"enabled": True, "endpoint": "http://otel-collector.observability:4318",
                          "env": {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}},
              "sharding": {"shards": ["blue"]}}
    expected = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4318",
                "OTEL_SERVICE_NAME": "oam-oam-operator", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "0.1"}
    assert [otel_env(d) for d in of_kind(render(values), "Deployment")] == [expected, expected]


@pytest.mark.parametrize(("values", "message"), [
    ({"tracing": {"enabled": True}}, "tracing.enabled=true needs tracing.endpoint (the collector's OTLP/HTTP base URL)"),
    ({"tracing": {"env": {"HTTP_PROXY": "x"}}}, "'HTTP_PROXY' does not match pattern '^OTEL_[A-Z0-9_]+$'"),
    ({"tracing": {"endpoint": "otel:4318"}}, "at '/tracing/endpoint': 'otel:4318' does not match pattern '^(https?://.+)?$'"),
])
def test_bad_tracing_values_fail_with_a_message(helm: Path, helm_home: Path, values: dict[str, Any],
                                                message: str) -> None:
    from tools.devcluster.helm import HelmError, template

    with pytest.raises(HelmError) as error:
        template(helm, helm_home, values=values)
    assert message in str(error.value)
