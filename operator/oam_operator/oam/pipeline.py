"""The one assembly of the transform with its adapters (docs/architecture.md#the-transform-pipeline).

The transform is pure; reading URL sources and rendering charts are adapters injected through
the ``TransformContext``. Every consumer — ``oam-operator build`` and the operator — gets its
transformer and its contexts from ``build_pipeline``, so the two cannot drift apart: what
works offline works in the cluster, and the differences are options, named here.

- ``PipelineOptions()`` (the CLI's): URL sources read from any address the user's machine can
  reach; charts rendered by ``helm``, which downloads them itself.
- The operator's options (``controller`` builds them from its settings): an ``AddressPolicy``
  refuses internal addresses unless their network is allowed; charts are then downloaded by the
  guarded reader and rendered from the local copy; URL sources can be disabled altogether, and
  the refusal names the setting; URL sources are kept parsed between passes
  (``url_cache_bytes``, ``remote/sourcecache.py``): the operator transforms every Application on
  every pass, the CLI once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oam_operator.oam.catalog.flux.helm_renderer import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_CHART_BYTES,
    FetchingChartRenderer,
    HelmBinaryRenderer,
)
from oam_operator.oam.document.document import Application, CapabilityBinding, ClusterProfile
from oam_operator.oam.engine.handlers import ChartRenderer, UrlReader
from oam_operator.oam.engine.transformer import TransformContext, Transformer, TransformResult, new_builtin_transformer
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.remote.addresses import AddressPolicy
from oam_operator.oam.remote.fetch import MAX_BYTES, TIMEOUT_SECONDS, HttpUrlReader
from oam_operator.oam.remote.sourcecache import CachingUrlReader, SourceCache

__all__ = ["DisabledUrlReader", "Pipeline", "PipelineOptions", "ProfileNotEvaluated", "build_pipeline"]


@dataclass(frozen=True)
class PipelineOptions:
    """How the adapters behave; the defaults are the offline CLI's."""

    url_sources: bool = True
    """Whether ``manifests``/``crd`` URL sources are read at all."""
    url_sources_disabled_hint: str = ""
    """Appended to the refusal when ``url_sources`` is false (how to turn them on, or what to do instead)."""
    address_policy: AddressPolicy | None = None
    """``None``: any address; otherwise every connection (and chart download) is checked by it."""
    url_timeout: float = TIMEOUT_SECONDS
    url_max_bytes: int = MAX_BYTES
    helm_binary: str = "helm"
    helm_timeout: float = DEFAULT_TIMEOUT_SECONDS
    chart_max_bytes: int = MAX_CHART_BYTES
    url_cache_bytes: int = 0
    """More than 0: URL sources are kept parsed, up to this many bytes (``remote/sourcecache.py``)."""


class DisabledUrlReader:
    """The reader of a pipeline whose URL sources are turned off: every read is refused, saying why."""

    def __init__(self, hint: str = "") -> None:
        self.hint = hint

    def read(self, url: str) -> bytes:
        hint = f"; {self.hint}" if self.hint else ""
        raise OamError(f"reading {go_quote(url)}: URL sources are disabled{hint}")


class ProfileNotEvaluated(Exception):
    """The ClusterProfile of a transform could not be evaluated; ``cause`` is the refusal. Each
    consumer names the profile its own way (``build`` by its file, the operator by its name)."""

    def __init__(self, cause: OamError) -> None:
        super().__init__(str(cause))
        self.cause = cause


@dataclass
class Pipeline:
    """A transformer with every built-in handler and the adapters its contexts carry."""

    transformer: Transformer
    url_reader: UrlReader
    chart_renderer: ChartRenderer
    options: PipelineOptions = field(default_factory=PipelineOptions)
    sources: SourceCache | None = None
    """The kept URL sources, when ``options.url_cache_bytes`` asks for them."""

    def context(
        self,
        *,
        namespace: str | None,
        domain: str | None,
        capabilities: dict[str, CapabilityBinding] | None = None,
        component_label: bool = True,
        cluster_id: str = "local",
    ) -> TransformContext:
        """The ``TransformContext`` of one transform, with this pipeline's adapters."""
        return TransformContext(
            cluster_id=cluster_id,
            namespace=namespace,
            domain=domain,
            capabilities=dict(capabilities or {}),
            component_label=component_label,
            chart_renderer=self.chart_renderer,
            url_reader=self.url_reader,
        )

    def transform(
        self,
        app: Application,
        *,
        profile: ClusterProfile | None,
        namespace: str | None,
        domain: str | None,
        component_label: bool = True,
        cluster_id: str = "local",
    ) -> TransformResult:
        """One parsed Application transformed as every consumer does it: the profile's
        capabilities, the authored properties validated, then the transform. Raises
        ``ProfileNotEvaluated`` for the profile and ``OamError`` for the rest."""
        capabilities: dict[str, CapabilityBinding] = {}
        if profile is not None:
            try:
                capabilities = self.transformer.evaluate_profile(profile).capabilities
            except OamError as error:
                raise ProfileNotEvaluated(error) from None
        self.transformer.validate_authored_properties(app)
        context = self.context(namespace=namespace, domain=domain, capabilities=capabilities,
                               component_label=component_label, cluster_id=cluster_id)
        return self.transformer.transform(app, context)


def build_pipeline(options: PipelineOptions | None = None, transformer: Transformer | None = None) -> Pipeline:
    """Assemble the transform for one consumer (module docstring); ``transformer`` defaults to the built-ins."""
    options = options or PipelineOptions()
    helm = HelmBinaryRenderer(options.helm_binary, timeout=options.helm_timeout)
    url_reader: UrlReader
    sources = None
    if not options.url_sources:
        url_reader = DisabledUrlReader(options.url_sources_disabled_hint)
    else:
        url_reader = HttpUrlReader(options.url_timeout, options.url_max_bytes, policy=options.address_policy)
        if options.url_cache_bytes > 0:
            sources = SourceCache(options.url_cache_bytes)
            url_reader = CachingUrlReader(url_reader, sources)
    chart_renderer: ChartRenderer = helm
    if options.address_policy is not None:
        chart_reader = HttpUrlReader(options.url_timeout, options.chart_max_bytes, policy=options.address_policy)
        chart_renderer = FetchingChartRenderer(helm, chart_reader, options.address_policy.check_host)
    return Pipeline(transformer or new_builtin_transformer(), url_reader, chart_renderer, options, sources)
