"""The configs a ``helm`` component builds (docs/transform.md#generated-sources, docs/transform.md#the-helm-component).

Native (``native``/``flux``) delivery emits a ``HelmRelease``; an inline source is reported as
a source identity so the engine generates it (named after the component, or shared by the
application). Template delivery renders the chart at generation time through the injected
``ChartRenderer`` and emits the rendered objects.

The spec orders a release after its generated source (docs/transform.md#rule-order); that edge points at a source and
is dropped by the ordering (sources go with the application bundle, before every group), so
the config does not declare it.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.flux.flux_sources import (
    HELM_REPOSITORY,
    OCI_REPOSITORY,
    SHARED_HELM_INTERVAL,
    FluxSourceConfig,
    SourceRef,
)
from oam_operator.oam.catalog.flux.helm_settings import HelmSettings
from oam_operator.oam.document.loader import YamlSyntaxError, load_all
from oam_operator.oam.engine.handlers import ChartRenderer, ComponentConfig, Object, SourceSpec
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError, OamError
from oam_operator.oam.formatting.gofmt import go_quote, go_value

HELM_RELEASE_API_VERSION = "helm.toolkit.fluxcd.io/v2"


class HelmReleaseConfig:
    """Native delivery: ``HelmRelease C``; an inline source becomes a generated source."""

    def __init__(self, name: str, settings: HelmSettings) -> None:
        self.name = name
        self.settings = settings
        self.source_name = name  # rebound by the engine when the source is shared

    def source_identity(self) -> SourceSpec | None:
        source = self.settings.source
        if not source.inline:
            return None
        if source.kind == HELM_REPOSITORY:
            identity = f"helm:{source.url}"
        else:
            identity = f"oci:{source.url}:{self.settings.version}"
        return SourceSpec(identity, source.kind, False, self._build_source)

    def _build_source(self, name: str, shared: bool) -> ComponentConfig:
        source = self.settings.source
        ref = SourceRef(self.settings.version) if source.kind == OCI_REPOSITORY else None
        interval = SHARED_HELM_INTERVAL if shared else self.settings.interval
        return FluxSourceConfig(source.kind, name, source.url, interval, ref)

    def bind_source(self, name: str, shared: bool) -> None:
        self.source_name = name

    def generate(self, app: TreeApplication) -> list[Object]:
        s = self.settings
        spec: dict[str, Any] = {"interval": s.interval}
        source = s.source
        ref: dict[str, str] = {"kind": source.kind, "name": source.name or self.source_name}
        if source.namespace and not source.inline:
            ref["namespace"] = source.namespace
        if source.kind == HELM_REPOSITORY:
            chart: dict[str, Any] = {"chart": s.chart, "sourceRef": ref}
            if s.version:
                chart["version"] = s.version
            spec["chart"] = {"spec": chart}
        else:
            spec["chartRef"] = ref
        for key, value in (("releaseName", s.release_name), ("targetNamespace", s.target_namespace)):
            if value:
                spec[key] = value
        if s.drift_mode:
            spec["driftDetection"] = {"mode": s.drift_mode}
        if s.install_crds:
            spec["install"] = {"crds": s.install_crds}
        if s.upgrade_crds:
            spec["upgrade"] = {"crds": s.upgrade_crds}
        if s.values:
            spec["values"] = copy.deepcopy(s.values)
        if s.values_from:
            spec["valuesFrom"] = [dict(entry) for entry in s.values_from]
        return [
            {
                "apiVersion": HELM_RELEASE_API_VERSION,
                "kind": "HelmRelease",
                "metadata": {"name": self.name, "namespace": app.namespace},
                "spec": spec,
            }
        ]


class HelmTemplateConfig:
    """Template delivery: the chart rendered at generation time, every object as rendered.

    Decisions recorded here: a renderer output that is not valid YAML fails like a renderer
    failure (``<type> "<C>": rendering chart: <cause>``); a document whose ``apiVersion`` or
    ``kind`` is absent or empty counts as missing them.
    """

    def __init__(self, name: str, settings: HelmSettings, renderer: ChartRenderer | None) -> None:
        self.name = name
        self.settings = settings
        self.renderer = renderer

    def chart_url(self) -> str:
        source = self.settings.source
        if source.kind == HELM_REPOSITORY:
            return f"{source.url.rstrip('/')}/{self.settings.chart}"
        return source.url

    def generate(self, app: TreeApplication) -> list[Object]:
        context = f"{self.settings.type_name} {go_quote(self.name)}: rendering chart"
        if self.renderer is None:
            raise GenerationError(f"{context}: no chart renderer is configured")
        try:
            text = self.renderer.render(self.chart_url(), self.settings.version, dict(self.settings.values))
            documents = load_all(text)
        except OamError as exc:
            raise GenerationError(f"{context}: {exc.message}") from exc
        except YamlSyntaxError as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            raise GenerationError(f"{context}: parsing rendered manifests: {where}{exc.cause}") from exc
        except Exception as exc:  # a renderer is foreign code: any failure is a rendering failure
            raise GenerationError(f"{context}: {exc}") from exc
        objects: list[Object] = []
        for document, _ in documents:
            if not isinstance(document, dict) or not document:
                continue
            if not document.get("apiVersion") or not document.get("kind"):
                raise GenerationError(f"rendered document is missing apiVersion or kind: {go_value(document)}")
            objects.append(document)
        return objects
