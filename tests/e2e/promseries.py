"""Scrapes of a metrics endpoint as Prometheus stores them, written as ``promtool test rules``
input series (docs/chart.md#alerts-and-dashboard).

A ``Timeline`` is one scrape target over successive scrapes, each one step of the promtool
test's ``interval``. Every sample gets the target's labels (what the ServiceMonitor's scrape
attaches: ``namespace``, ``pod``, ``job``, …); a label the endpoint exposes under a target
label's name is kept as ``exported_<name>`` (Prometheus's ``honor_labels: false``, the
ServiceMonitor's default). ``failed`` is a scrape that got no answer, and a series missing from
a later scrape is gone: either way Prometheus marks it stale.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Timeline", "selector"]

Series = tuple[str, tuple[tuple[str, str], ...]]


def selector(name: str, labels: Mapping[str, str]) -> str:
    """``name{a="1",b="2"}`` in PromQL's quoting, labels sorted."""
    quoted = ",".join(f'{key}="{_escape(value)}"' for key, value in sorted(labels.items()))
    return f"{name}{{{quoted}}}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Timeline:
    """One target's series over successive scrapes."""

    def __init__(self, target: Mapping[str, str], prefixes: Iterable[str] = ("oam_operator_",)) -> None:
        self.target = dict(target)
        self.prefixes = tuple(prefixes)
        self.steps: list[dict[Series, float | None]] = []  # per step: series -> value, None = stale

    def scrape(self, text: str) -> None:
        """One scrape answered with ``text`` (the Prometheus text format)."""
        step: dict[Series, float | None] = {}
        exposed = {line.split("{", 1)[0].split(" ", 1)[0] for line in text.splitlines() if line[:1] not in ("", "#")}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if not sample.name.startswith(self.prefixes) or sample.name.endswith("_created"):
                    continue
                name = _as_exposed(sample.name, exposed)
                if math.isnan(sample.value):
                    continue
                labels = {(f"exported_{key}" if key in self.target else key): value
                          for key, value in sample.labels.items()}
                labels.update(self.target)
                step[(name, tuple(sorted(labels.items())))] = sample.value
        self._add(step)

    def failed(self) -> None:
        """A scrape that got no answer: every series of the target is stale."""
        self._add({})

    def _add(self, step: dict[Series, float | None]) -> None:
        if self.steps:
            for series, value in self.steps[-1].items():
                if series not in step and value is not None:
                    step[series] = None
        self.steps.append(step)

    def input_series(self) -> list[dict[str, str]]:
        """promtool's ``input_series``: one value per step, ``_`` before a series appears and after
        its stale marker, ``stale`` where it went away."""
        out = []
        for series in sorted({series for step in self.steps for series in step}):
            values = []
            for step in self.steps:
                value = step.get(series, math.nan)
                values.append("stale" if value is None else "_" if math.isnan(value) else repr(float(value)))
            out.append({"series": selector(series[0], dict(series[1])), "values": " ".join(values)})
        return out


def _as_exposed(name: str, exposed: set[str]) -> str:
    """The sample's name as the endpoint wrote it: prometheus_client's parser adds ``_total`` to a
    counter's samples (the API server's ``apiserver_admission_webhook_rejection_count`` has none),
    Prometheus stores the name as written."""
    if name not in exposed and name.endswith("_total") and name.removesuffix("_total") in exposed:
        return name.removesuffix("_total")
    return name
