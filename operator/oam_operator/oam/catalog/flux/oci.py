"""The ``oci`` component (docs/transform.md#the-oci-component): a Flux Kustomization of an OCI artifact.

Alone on its artifact, a component keeps its ``OCIRepository`` among its own objects, so
placing or ordering the component moves the source with it. Several components on the same
artifact (same url, version and effective interval) share one generated source, applied with
the application bundle before every group; each then emits only its Kustomization.

Decision recorded here: an empty ``path`` or ``interval`` is unset (the default applies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.flux.flux_sources import (
    OCI_REPOSITORY,
    FluxSourceConfig,
    SourceRef,
    oci_artifact_identity,
    source_object,
)
from oam_operator.oam.catalog.shared.typed_props import Props
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, ComponentConfig, Object, Schema, SourceSpec
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.duration import DurationError, normalize_duration
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

TYPE = "oci"
PREFIX = "oci: "
DEFAULT_PATH = "./"
DEFAULT_INTERVAL = "60m"
KUSTOMIZATION_API_VERSION = "kustomize.toolkit.fluxcd.io/v1"


def oci_schema() -> Schema:
    return {
        "source": PropertySchema(
            type="object",
            required=True,
            description="The OCI artifact holding the manifests.",
            properties={
                "url": PropertySchema(
                    type="string", required=True, description="Artifact repository URL (oci:// scheme)."
                )
            },
        ),
        "version": PropertySchema(
            type="string", required=True, description="Artifact tag, or sha256:<digest> to pin a digest."
        ),
        "path": PropertySchema(
            type="string", default=DEFAULT_PATH, description="Path of the kustomization inside the artifact."
        ),
        "prune": PropertySchema(
            type="boolean", default=True, description="Flux deletes objects that leave the artifact."
        ),
        "interval": PropertySchema(
            type="string",
            default=DEFAULT_INTERVAL,
            description="Reconcile interval (Go duration) of the Kustomization and of the artifact's source.",
        ),
        "targetNamespace": PropertySchema(
            type="string", description="Namespace the artifact's objects are placed in (never defaulted)."
        ),
    }


class OciConfig:
    """``OCIRepository C`` (unless the source is shared) then ``Kustomization C``."""

    def __init__(
        self, name: str, url: str, version: str, path: str, prune: bool, interval: str, target_namespace: str
    ) -> None:
        self.name = name
        self.url = url
        self.version = version
        self.path = path
        self.prune = prune
        self.interval = interval
        self.target_namespace = target_namespace
        self.shared_source: str | None = None

    def source_identity(self) -> SourceSpec:
        identity = oci_artifact_identity(self.url, self.version, self.interval)
        return SourceSpec(identity, OCI_REPOSITORY, True, self._build_source)

    def _build_source(self, name: str, shared: bool) -> ComponentConfig:
        return FluxSourceConfig(OCI_REPOSITORY, name, self.url, self.interval, self._ref())

    def _ref(self) -> SourceRef:
        return SourceRef(self.version, digest_allowed=True)

    def bind_source(self, name: str, shared: bool) -> None:
        if shared:
            self.shared_source = name

    def generate(self, app: TreeApplication) -> list[Object]:
        objects: list[Object] = []
        if self.shared_source is None:
            objects.append(
                source_object(OCI_REPOSITORY, self.name, app.namespace, self.url, self.interval, self._ref())
            )
        spec: dict[str, object] = {
            "interval": self.interval,
            "path": self.path,
            "prune": self.prune,
            "sourceRef": {"kind": OCI_REPOSITORY, "name": self.shared_source or self.name},
        }
        if self.target_namespace:
            spec["targetNamespace"] = self.target_namespace
        objects.append(
            {
                "apiVersion": KUSTOMIZATION_API_VERSION,
                "kind": "Kustomization",
                "metadata": {"name": self.name, "namespace": app.namespace},
                "spec": spec,
            }
        )
        return objects


@component(TYPE)
class OciHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return oci_schema()

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> OciConfig:
        props = Props(component.properties, PREFIX)
        source = component.properties.get("source")
        if not isinstance(source, dict):
            raise ValidationError(f"{PREFIX}source is required")
        url = Props(source, PREFIX, "source.").string("url")
        if not url:
            raise ValidationError(f"{PREFIX}source.url is required")
        if not url.startswith("oci://"):
            raise ValidationError(f"{PREFIX}source.url {go_quote(url)} must use the oci:// scheme")
        version = props.string("version")
        if not version:
            raise ValidationError(f"{PREFIX}version is required (a tag, or sha256:<digest>)")
        interval_text = props.string("interval", DEFAULT_INTERVAL)
        try:
            interval = normalize_duration(interval_text)
        except DurationError:
            raise ValidationError(
                f"{PREFIX}interval {go_quote(interval_text)} is invalid: must be a valid Go duration (e.g. 10m, 1h30m)"
            ) from None
        return OciConfig(
            component.name,
            url,
            version,
            props.string("path", DEFAULT_PATH),
            props.boolean("prune", True),
            interval,
            props.string("targetNamespace"),
        )
