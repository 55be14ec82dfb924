"""``--definitions DIR`` of ``build`` and ``schema``: a platform team's definitions read from
files, tested as admission tests them (docs/definitions.md#offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oam_operator.cli.errors import fail
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.testcases import run_tests
from oam_operator.oam.errors import OamError


def load_definitions(directory: str, transformer: Any) -> DefinitionCatalog:
    """The definitions of ``*.yaml`` in ``directory``, attached to ``transformer``; ``fail`` on the
    first one refused, with the message admission would give."""
    catalog = DefinitionCatalog.beside(transformer)
    try:
        catalog.load_directory(Path(directory))
    except OamError as exc:
        fail(f"reading definitions {directory!r}: {exc}")
    for definition in catalog.definitions():
        try:
            run_tests(definition)
        except OamError as exc:
            fail(f"reading definitions {directory!r}: {definition.kind} {definition.reference}: {exc}")
    return catalog
