"""The ``helm`` component and its alias ``helmchart`` (docs/transform.md#the-helm-component).

One handler serves both names; messages start with the type as authored, so kurel documents
keep their texts, and both report the contract family ``helm``. Native delivery (``flux`` is a
synonym) hands the chart to Flux as a ``HelmRelease``; an inline chart source is a generated
source (docs/transform.md#generated-sources) applied with the application bundle before every group. Template delivery
renders the chart when objects are generated and emits what it renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.flux.helm_release import HelmReleaseConfig, HelmTemplateConfig
from oam_operator.oam.catalog.flux.helm_settings import DEFAULT_INTERVAL, DELIVERIES, NATIVE, read_settings
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, ComponentConfig, ContractMetadata, Schema
from oam_operator.oam.engine.registry import component

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

FAMILY = "helm"
TYPES = ("helm", "helmchart")


def _text(description: str) -> PropertySchema:
    return PropertySchema(type="string", description=description)


def helm_schema() -> Schema:
    return {
        "source": PropertySchema(
            type="object",
            required=True,
            additional_properties=True,
            description=(
                "Where the chart comes from: inline {url, kind?} (a generated Flux source) or a reference "
                "{name, kind, namespace?} to an existing HelmRepository, OCIRepository or HelmChart."
            ),
            properties={
                "url": _text(
                    "Inline source URL: https:// or http:// for a HelmRepository, oci:// for an OCIRepository."
                ),
                "kind": _text(
                    "Source kind: HelmRepository or OCIRepository inline (inferred from the URL when unset); "
                    "HelmRepository, OCIRepository or HelmChart for a reference (required there)."
                ),
                "name": _text("Name of an existing Flux source to reference instead of an inline URL."),
                "namespace": _text("Namespace of the referenced source (reference form only)."),
            },
        ),
        "chart": _text("Chart name within a HelmRepository source."),
        "version": _text("Chart version; for an inline oci:// source, the OCIRepository tag."),
        "delivery": PropertySchema(
            type="string",
            enum=list(DELIVERIES),
            default=NATIVE,
            description=(
                "How the chart is delivered: native (a Flux HelmRelease; flux is a synonym) or template "
                "(rendered at transform time, objects emitted as rendered)."
            ),
        ),
        "interval": PropertySchema(
            type="string",
            default=DEFAULT_INTERVAL,
            description="Reconcile interval (Go duration) of the HelmRelease and of a source only this component uses.",
        ),
        "releaseName": _text("Helm release name (defaults to Flux's own choice)."),
        "targetNamespace": _text("Namespace the chart's objects are installed into."),
        "values": PropertySchema(type="object", additional_properties=True, description="Helm values for the chart."),
        "valuesFrom": PropertySchema(
            type="array",
            description="ConfigMaps or Secrets whose content is merged into the values by Flux.",
            items=PropertySchema(
                type="object",
                additional_properties=True,
                description="One values reference.",
                properties={
                    "kind": PropertySchema(type="string", required=True, description="ConfigMap or Secret."),
                    "name": PropertySchema(
                        type="string", required=True, description="Name of the ConfigMap or Secret."
                    ),
                    "valuesKey": _text("Key holding the values (Flux defaults to values.yaml)."),
                    "targetPath": _text("Values path the referenced value is written to."),
                },
            ),
        ),
        "driftDetection": PropertySchema(
            type="object",
            additional_properties=True,
            description="Flux drift detection of the release.",
            properties={"mode": _text("enabled, warn or disabled.")},
        ),
        "install": PropertySchema(
            type="object",
            additional_properties=True,
            description="Install settings of the release.",
            properties={"crds": _text("CRD policy on install: Skip, Create or CreateReplace.")},
        ),
        "upgrade": PropertySchema(
            type="object",
            additional_properties=True,
            description="Upgrade settings of the release.",
            properties={"crds": _text("CRD policy on upgrade: Skip, Create or CreateReplace.")},
        ),
    }


@component(*TYPES)
class HelmHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return helm_schema()

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=FAMILY)

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> ComponentConfig:
        settings = read_settings(component.type, component.properties)
        if settings.native:
            return HelmReleaseConfig(component.name, settings)
        return HelmTemplateConfig(component.name, settings, ctx.chart_renderer)
