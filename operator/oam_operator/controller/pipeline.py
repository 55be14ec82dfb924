"""The operator's transform pipeline, from its settings (docs/operator.md#url-sources-and-charts).

The operator uses the same ``build_pipeline`` as ``oam-operator build``; what differs is that
Applications are written by tenants, so every URL the operator fetches on their behalf (URL
sources and chart downloads) may reach only public addresses unless the platform team allowed
a network, and URL sources can be switched off. The refusals name the setting that changes them.
"""

from __future__ import annotations

from oam_operator.controller.settings import Settings
from oam_operator.oam.pipeline import Pipeline, PipelineOptions, build_pipeline
from oam_operator.oam.remote.addresses import AddressPolicy, parse_networks

ALLOW_HINT = "the operator allows internal networks listed in --url-source-allowed-networks"
DISABLED_HINT = "this operator runs with --no-url-sources: put the manifests inline"


def operator_pipeline_options(settings: Settings) -> PipelineOptions:
    policy = AddressPolicy(allowed=parse_networks(settings.url_source_allowed_networks), hint=ALLOW_HINT)
    return PipelineOptions(
        url_sources=settings.url_sources,
        url_sources_disabled_hint=DISABLED_HINT,
        address_policy=policy,
        helm_binary=settings.helm_binary,
    )


def operator_pipeline(settings: Settings) -> Pipeline:
    return build_pipeline(operator_pipeline_options(settings))
