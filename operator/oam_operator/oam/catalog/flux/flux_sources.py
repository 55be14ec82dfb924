"""Flux source objects and the configs that generate them (docs/transform.md#generated-sources,
docs/transform.md#the-helm-component, docs/transform.md#the-oci-component).

A ``helm`` inline source and a shared ``oci`` source are *generated sources*: the engine asks a
consumer for its :class:`SourceSpec`, groups consumers by identity and builds one
:class:`FluxSourceConfig` per source through ``SourceSpec.build_source``. An ``oci``
component alone on its artifact emits the same object itself, so both paths share
:func:`source_object`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.engine.tree import TreeApplication

SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1"
HELM_REPOSITORY = "HelmRepository"
OCI_REPOSITORY = "OCIRepository"
HELM_CHART = "HelmChart"
SHARED_HELM_INTERVAL = "1h0m0s"
DIGEST_PREFIX = "sha256:"


@dataclass(frozen=True)
class SourceRef:
    """What an OCIRepository points at: a tag, or a digest for ``sha256:…`` versions (oci only)."""

    version: str
    digest_allowed: bool = False

    def render(self) -> dict[str, str]:
        if self.digest_allowed and self.version.startswith(DIGEST_PREFIX):
            return {"digest": self.version}
        return {"tag": self.version}


def source_object(kind: str, name: str, namespace: str, url: str, interval: str, ref: SourceRef | None) -> Object:
    """``source.toolkit.fluxcd.io/v1 <kind> <name>``: ``spec: {url, interval, ref?}``."""
    spec: dict[str, object] = {"url": url, "interval": interval}
    if ref is not None and ref.version:
        spec["ref"] = ref.render()
    return {
        "apiVersion": SOURCE_API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


@dataclass
class FluxSourceConfig:
    """A generated source: one Flux source object in the application bundle."""

    kind: str
    name: str
    url: str
    interval: str
    ref: SourceRef | None = None

    def generate(self, app: TreeApplication) -> list[Object]:
        return [source_object(self.kind, self.name, app.namespace, self.url, self.interval, self.ref)]


def go_json_string(value: str) -> str:
    """A string as Go's ``encoding/json`` writes it (HTML-safe escapes), for identity hashing."""
    text = json.dumps(value, ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def oci_artifact_identity(url: str, version: str, interval: str) -> str:
    """``oci-artifact:{"url":…,"version":…,"interval":…}`` (docs/transform.md#generated-sources), with the effective
    interval."""
    fields = ",".join(
        f"{go_json_string(key)}:{go_json_string(value)}"
        for key, value in (("url", url), ("version", version), ("interval", interval))
    )
    return "oci-artifact:{" + fields + "}"
