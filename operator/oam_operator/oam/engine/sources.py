"""Generated sources (docs/transform.md#generated-sources).

A component config may report a source identity (a chart repository, an OCI artifact).
Identities are grouped over the whole document: a source several components share is generated
once, named after the application, owned by the document; a single consumer's source is named
after the component (or, for ``shared_only`` kinds such as ``oci``, stays among the
component's own objects). Generated sources are applied with the application bundle, before
every group, so no tier or dependency may name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oam_operator.common.dns1123 import DNS1123_SUBDOMAIN_MAX
from oam_operator.oam.document.names import digest, shorten_with_suffix
from oam_operator.oam.engine.handlers import ComponentConfig, SourceSpec, bind_source, source_identity
from oam_operator.oam.errors import OrderingError
from oam_operator.oam.formatting.gofmt import go_quote


@dataclass
class GeneratedSource:
    """A source applied with the application bundle, in the order of its first consumer."""

    name: str
    kind: str
    owner: str | None  # the single consumer's owning component; None = the document
    config: ComponentConfig
    shared: bool
    consumers: list[str] = field(default_factory=list)

    @property
    def type_label(self) -> str:
        """The lower-case kind that names the source in messages (``helmrepository``)."""
        return self.kind.lower()


@dataclass
class SourceConsumerEntry:
    name: str
    owner: str
    config: ComponentConfig


def shared_source_name(app_name: str, identity: str) -> str:
    return shorten_with_suffix(app_name, "-source-" + digest(identity)[:10], DNS1123_SUBDOMAIN_MAX)


def collect_sources(app_name: str, entries: list[SourceConsumerEntry]) -> list[GeneratedSource]:
    """Group source identities, bind every consumer to its source, return the generated ones."""
    groups: dict[str, list[tuple[SourceConsumerEntry, SourceSpec]]] = {}
    for entry in entries:
        spec = source_identity(entry.config)
        if spec is not None:
            groups.setdefault(spec.identity, []).append((entry, spec))
    component_names = {entry.name for entry in entries}
    sources: list[GeneratedSource] = []
    for identity, consumers in groups.items():
        first, spec = consumers[0]
        if len(consumers) == 1:
            if spec.shared_only:
                continue
            name = first.name
            source = GeneratedSource(name, spec.kind, first.owner, spec.build_source(name, False), False, [name])
            bind_source(first.config, name, False)
        else:
            name = shared_source_name(app_name, identity)
            if name in component_names:
                raise OrderingError(
                    f"generated source {go_quote(name)} has the same name as component {go_quote(name)}"
                )
            source = GeneratedSource(
                name, spec.kind, None, spec.build_source(name, True), True, [entry.name for entry, _ in consumers]
            )
            for entry, _ in consumers:
                bind_source(entry.config, name, True)
        sources.append(source)
    return sources
