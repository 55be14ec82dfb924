"""The one composition root of the operator's transform (docs/architecture.md#the-transform-pipeline).

The operator, its admission webhook and ``oam-operator diff`` must transform an Application
the same way, or a refusal or a preview stops being what the operator does (``diff`` once
refused every ``app-dependency`` because it built its own pipeline without the operator's
policies). So the pipeline is assembled here once: ``build_pipeline`` with the operator's
options, the operator's policies registered on it, and the transform of one Application.

What differs between the three is named here too. Applications are written by tenants, so
every URL the operator fetches on their behalf may reach only public addresses unless the
platform team allowed a network, and URL sources can be switched off
(docs/operator.md#url-sources-and-charts); the refusals name the setting that changes them.
Admission never reads the network (``without_network``, docs/admission.md). The operator keeps
URL sources parsed between passes, per Application (docs/operator.md#url-sources-are-cached).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

from oam_operator.controller.reconcile.settings import Settings
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.document.document import application_from_object, cluster_profile_from_object
from oam_operator.oam.engine.duplicates import check_duplicate_trait_objects
from oam_operator.oam.engine.transformer import TransformResult
from oam_operator.oam.errors import OamError, TransformError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.pipeline import Pipeline, PipelineOptions, ProfileNotEvaluated, build_pipeline
from oam_operator.oam.remote.addresses import AddressPolicy, parse_networks
from oam_operator.oam.remote.noticed import noticed
from oam_operator.operatorpolicies import register_operator_policies

from .autoscaled import release_autoscaled_replicas
from .encode import EncodedTree, encode
from .fleetns import target as target_namespace
from .inventory import transform_view
from .verdicts import VerdictMemo

ALLOW_HINT = "the operator allows internal networks listed in --url-source-allowed-networks"
DISABLED_HINT = "this operator runs with --no-url-sources: put the manifests inline"
PLACEHOLDER_GROUP = "deferred.admission.oam-operator.dev"


#: The most the kept URL sources take, as compressed JSON (docs/operator.md#url-sources-are-cached).
URL_SOURCE_CACHE_BYTES = 16 * 1024 * 1024


def operator_pipeline_options(settings: Settings) -> PipelineOptions:
    policy = AddressPolicy(allowed=parse_networks(settings.url_source_allowed_networks), hint=ALLOW_HINT)
    return PipelineOptions(
        url_sources=settings.url_sources,
        url_sources_disabled_hint=DISABLED_HINT,
        address_policy=policy,
        helm_binary=settings.helm_binary,
        url_cache_bytes=URL_SOURCE_CACHE_BYTES,
    )


class DeferringAdapters:
    """The ``UrlReader`` and ``ChartRenderer`` of a transform that never touches the network.

    A URL source reads as one placeholder CustomResourceDefinition (acceptable to both the
    ``manifests`` and the ``crd`` component, named uniquely so two sources never collide;
    ``is_placeholder`` tells the checks to leave it out), a chart renders as no objects. So the
    transform goes on past remote content and every other component is still generated and
    checked.
    """

    def __init__(self) -> None:
        self._numbers = itertools.count(1)

    def read(self, url: str) -> bytes:
        plural = f"deferred{next(self._numbers)}s"
        return (f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                f"metadata: {{name: {plural}.{PLACEHOLDER_GROUP}}}\n"
                f"spec: {{group: {PLACEHOLDER_GROUP}, scope: Namespaced, names: {{plural: {plural}, kind: Deferred}},"
                f" versions: [{{name: v1, served: true, storage: true}}]}}\n").encode()

    def render(self, chart_url: str, version: str, values: dict[str, Any]) -> str:
        return ""


def is_placeholder(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` stands in for remote content that a network-free transform did not read."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    return obj.get("kind") == "CustomResourceDefinition" and name.endswith(f".{PLACEHOLDER_GROUP}")


class OperatorTransform:
    """The operator's pipeline (every built-in handler and the operator's policies) and the
    transform of one Application as a pass performs it."""

    def __init__(self, pipeline: Pipeline, *, reads_network: bool = True) -> None:
        self.pipeline = pipeline
        self.reads_network = reads_network
        #: The ``overrides`` check's verdicts (a ``checks.Refusal`` or ``None``) between the passes
        #: of each Application (verdicts.py); admission's network-free transform keeps none.
        self.override_verdicts: VerdictMemo[Any] | None = VerdictMemo() if reads_network else None

    @classmethod
    def from_settings(cls, settings: Settings) -> OperatorTransform:
        pipeline = build_pipeline(operator_pipeline_options(settings))
        # Reads outside the cluster are noticed: such an Application's routine pass is never skipped (quiet.py).
        pipeline.url_reader, pipeline.chart_renderer = noticed(pipeline.url_reader), noticed(pipeline.chart_renderer)
        register_operator_policies(pipeline.transformer)
        DefinitionCatalog.beside(pipeline.transformer)  # filled by the watch (docs/definitions.md#the-operator)
        return cls(pipeline)

    def forget(self, namespace: str, name: str) -> None:
        """The Application is being deleted: the URL sources only it read, and its verdicts, are dropped."""
        if self.pipeline.sources is not None:
            self.pipeline.sources.forget(f"{namespace}/{name}")
        if self.override_verdicts is not None:
            self.override_verdicts.forget(f"{namespace}/{name}")

    def without_network(self) -> OperatorTransform:
        """The same transformer, with URL sources and charts deferred (admission's transform)."""
        adapters = DeferringAdapters()
        return OperatorTransform(Pipeline(self.pipeline.transformer, adapters, adapters, self.pipeline.options),
                                 reads_network=False)

    def transform(self, body: Mapping[str, Any], *, cluster_id: str, domain: str,
                  profile: Mapping[str, Any] | None, profile_name: str = "") -> tuple[EncodedTree, TransformResult]:
        """The Application's objects and bundle plan, and the transform's result. Raises ``OamError``."""
        transformer = self.pipeline.transformer
        meta = body.get("metadata") or {}
        spec = body.get("spec") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        document = {
            "apiVersion": body.get("apiVersion"),
            "kind": body.get("kind"),
            "metadata": {"name": name, "namespace": namespace},
            "spec": {key: spec[key] for key in ("components", "policies") if key in spec},
        }
        app = application_from_object(
            document, component_types=transformer.component_types(), trait_types=transformer.trait_types(),
            open_types=transformer.definitions is not None,
        )
        # docs/transform.md#the-clusterprofile-document: a bad profile fails every Application that uses it.
        parsed = None
        if profile is not None:
            try:
                parsed = cluster_profile_from_object(transform_view(profile))
            except OamError as error:
                raise TransformError(f"ClusterProfile {go_quote(profile_name)}", error) from None
        sources = self.pipeline.sources
        try:
            with sources.reading_for(f"{namespace}/{name}") if sources is not None else nullcontext():
                # A cluster Application renders into its topology's namespace (docs/multicluster.md#topology).
                result = self.pipeline.transform(app, profile=parsed, namespace=target_namespace(body, domain),
                                                 domain=domain, component_label=True, cluster_id=cluster_id)
        except ProfileNotEvaluated as error:
            raise TransformError(f"ClusterProfile {go_quote(profile_name)}", error.cause) from None
        # Two objects of one identity cannot both be applied; kurel prints both, so ``build`` does
        # too, and the operator refuses here, naming the trait (docs/transform.md#duplicate-objects-of-traits).
        check_duplicate_trait_objects(result.cluster)
        encoded = encode(result.cluster, domain)
        released = [dict(obj) for obj in release_autoscaled_replicas(encoded.objects)]
        return dataclasses.replace(encoded, objects=released), result
