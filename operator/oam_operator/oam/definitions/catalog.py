"""The definitions an operator or ``build --definitions`` knows, by type and version
(docs/definitions.md#versions).

The transform consults it after the built-in catalog. ``kafka-topic`` means the highest
version present, ``kafka-topic@v1`` pins one. A definition whose type is a built-in type is
refused: a platform team cannot shadow the catalog.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from oam_operator.oam.definitions.handlers import DefinitionComponentHandler, DefinitionTraitHandler
from oam_operator.oam.definitions.model import COMPONENT_KIND, TRAIT_KIND, Definition, DefinitionError, read_definition
from oam_operator.oam.formatting.gofmt import go_quote


def split_reference(type_ref: str) -> tuple[str, str | None]:
    """``("kafka-topic", "v1")`` for ``kafka-topic@v1``, ``("kafka-topic", None)`` for ``kafka-topic``."""
    name, _, version = type_ref.partition("@")
    return name, version or None


def clash_message(definition: Definition) -> str:
    noun = "component" if definition.kind == COMPONENT_KIND else "trait"
    return f"spec.type: {go_quote(definition.type)} is a built-in {noun} type"


class DefinitionCatalog:
    """Definitions by kind, type and version; safe to read while the watch replaces one."""

    def __init__(self, builtin_components: set[str] | None = None, builtin_traits: set[str] | None = None) -> None:
        self._lock = threading.Lock()
        self._by_kind: dict[str, dict[tuple[str, str], Definition]] = {COMPONENT_KIND: {}, TRAIT_KIND: {}}
        self._builtins = {COMPONENT_KIND: builtin_components or set(), TRAIT_KIND: builtin_traits or set()}

    @classmethod
    def beside(cls, transformer: Any) -> DefinitionCatalog:
        """An empty catalog that refuses the built-in types of ``transformer``, attached to it."""
        catalog = cls(set(transformer.component_types()), set(transformer.trait_types()))
        transformer.definitions = catalog
        return catalog

    def used(self, references: Iterable[tuple[str, str]]) -> dict[str, str]:
        """``{"<kind>/<type ref>": digest}`` of the definitions ``references`` ((kind, type ref)) resolve to."""
        found = {}
        for kind, type_ref in references:
            definition = self.find(kind, type_ref)
            if definition is not None:
                found[f"{kind}/{type_ref}"] = f"{definition.reference}:{definition.digest}"
        return found

    def check(self, definition: Definition) -> None:
        """Refuse a definition that would shadow a built-in type."""
        if definition.type in self._builtins[definition.kind]:
            raise DefinitionError(clash_message(definition))

    def put(self, definition: Definition) -> None:
        self.check(definition)
        with self._lock:
            table = dict(self._by_kind[definition.kind])
            table[(definition.type, definition.version)] = definition
            self._by_kind[definition.kind] = table

    def remove(self, kind: str, type_name: str, version: str) -> None:
        with self._lock:
            table = dict(self._by_kind[kind])
            table.pop((type_name, version), None)
            self._by_kind[kind] = table

    def find(self, kind: str, type_ref: str) -> Definition | None:
        name, version = split_reference(type_ref)
        table = self._by_kind[kind]
        if version is not None:
            return table.get((name, version))
        versions = [d for (t, _), d in table.items() if t == name]
        return max(versions, key=lambda d: int(d.version[1:])) if versions else None

    def component_handler(self, type_ref: str) -> DefinitionComponentHandler | None:
        definition = self.find(COMPONENT_KIND, type_ref)
        return DefinitionComponentHandler(type_ref, definition) if definition is not None else None

    def trait_handler(self, type_ref: str) -> DefinitionTraitHandler | None:
        definition = self.find(TRAIT_KIND, type_ref)
        return DefinitionTraitHandler(type_ref, definition) if definition is not None else None

    def definitions(self) -> list[Definition]:
        return sorted([*self._by_kind[COMPONENT_KIND].values(), *self._by_kind[TRAIT_KIND].values()],
                      key=lambda d: (d.kind, d.type, int(d.version[1:])))

    def load_directory(self, directory: Path) -> None:
        """Every definition in ``*.yaml`` files of ``directory`` (``build --definitions``)."""
        for path in sorted(directory.glob("*.y*ml")):
            try:
                documents = list(yaml.safe_load_all(path.read_text()))
            except yaml.YAMLError as exc:
                raise DefinitionError(f"{path.name}: not YAML: {exc}") from None
            for document in documents:
                if not isinstance(document, dict) or document.get("kind") not in (COMPONENT_KIND, TRAIT_KIND):
                    continue
                try:
                    self.put(read_definition(document))
                except DefinitionError as exc:
                    name = (document.get("metadata") or {}).get("name", "")
                    raise DefinitionError(f"{path.name}: {document['kind']} {go_quote(str(name))}: {exc.message}") \
                        from None
