"""The watch of ComponentDefinitions and TraitDefinitions: hot-loading and their Ready condition
(docs/definitions.md#the-operator).

Each event reads the definition again (``oam/definitions``), runs its test cases and puts it
into the catalog the transform consults, or takes it out: a definition admitted while the
webhook was off, and refused here, is not used. Its Ready condition says which (the exact
message of the refusal), patched onto its status subresource only when it differs, through the
passes' client, so only the leader writes. Then the Applications naming its type are woken: a
changed definition changes their digest (a new revision), a deleted one leaves them ``Error``
with ``no definition for component type "<t>"`` and their objects as they were.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.meta import GROUP, VERSION
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.model import Definition, read_definition
from oam_operator.oam.definitions.testcases import run_tests
from oam_operator.oam.errors import OamError
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

log = logging.getLogger("oam_operator.controller")

PLURALS = {"ComponentDefinition": "componentdefinitions", "TraitDefinition": "traitdefinitions"}
LOADED = "Loaded"
REFUSED = "Refused"


def load_checked(catalog: DefinitionCatalog, body: Mapping[str, Any]) -> tuple[Definition | None,
                                                                              tuple[str, str, str] | None]:
    """``body`` read, checked against the built-in types and its test cases run (admission and
    the watch alike): the definition, or ``None`` and the refused Ready observation."""
    try:
        definition = read_definition(body)
        catalog.check(definition)
        run_tests(definition)
    except OamError as error:
        return None, ("False", REFUSED, error.message)
    return definition, None


def load(catalog: DefinitionCatalog, kind: str, body: Mapping[str, Any] | None,
         previous: tuple[str, str] | None) -> tuple[tuple[str, str] | None, tuple[str, str, str] | None]:
    """Put ``body`` into ``catalog`` (``None``: deleted, take ``previous`` out). Returns the
    (type, version) now loaded, and the Ready observation (status, reason, message) to write."""
    if previous is not None:
        catalog.remove(kind, *previous)
    if body is None:
        return None, None
    definition, refused = load_checked(catalog, body)
    if definition is None:
        return None, refused
    catalog.put(definition)
    return (definition.type, definition.version), ("True", LOADED, f"Loaded as {definition.reference}")


class DefinitionWatch:
    """What the operator keeps of the definitions' events: which (type, version) each name loaded."""

    def __init__(self, catalog: DefinitionCatalog, client: ClusterClient, reader: ClusterClient | None = None) -> None:
        self.catalog = catalog
        self.client = client  # the passes' (fenced: only the leader writes a Ready condition)
        self.reader = reader or client  # the operator's own, for the LIST at start-up
        self._loaded: dict[tuple[str, str], tuple[str, str]] = {}  # (kind, name) -> (type, version)

    def prime(self) -> None:
        """Load every definition before the first pass (one LIST per kind at start-up), so an
        Application using one is not ``Error`` for the moments until the watch has caught up
        after each restart. A kind the cluster does not serve (its CRD missing), or a LIST
        refused, is left to the watch."""
        for kind, plural in PLURALS.items():
            try:
                listing = self.reader.request("list", "GET", f"/apis/{GROUP}/{VERSION}/{plural}")
            except ApiError as error:
                if error.status != 404:  # 404: the CRD is not installed, nothing to load
                    log.warning("definitions not listed at start: %s", error, extra={"fields": {"kind": kind}})
                continue
            for item in (listing or {}).get("items") or []:
                name = str((item.get("metadata") or {}).get("name") or "")
                loaded, _ = load(self.catalog, kind, item, self._loaded.pop((kind, name), None))
                if loaded is not None:
                    self._loaded[(kind, name)] = loaded

    def changed(self, kind: str, name: str, body: Mapping[str, Any] | None) -> set[str]:
        """An event of the ``kind`` called ``name`` (``body`` ``None``: deleted); returns the type
        names whose Applications to wake."""
        previous = self._loaded.pop((kind, name), None)
        loaded, observation = load(self.catalog, kind, body, previous)
        if loaded is not None:
            self._loaded[(kind, name)] = loaded
        if body is not None and observation is not None:
            self._write(kind, name, body, observation)
        log.info("definition %s", "deleted" if body is None else (observation or ("", ""))[1].lower(),
                 extra={"fields": {"kind": kind, "name": name, "message": (observation or ("", "", ""))[2]}})
        return {t for t in (previous and previous[0], loaded and loaded[0], _type_of(body)) if t}

    def _write(self, kind: str, name: str, body: Mapping[str, Any], observation: tuple[str, str, str]) -> None:
        status, reason, message = observation
        current = next((c for c in ((body.get("status") or {}).get("conditions") or [])
                        if isinstance(c, Mapping) and c.get("type") == "Ready"), None)
        if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == \
                observation:
            return
        kept = current is not None and current.get("status") == status and current.get("lastTransitionTime")
        condition = {"type": "Ready", "status": status, "reason": reason, "message": message,
                     "lastTransitionTime": kept or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        try:
            self.client.request("patch", "PATCH", f"/apis/{GROUP}/{VERSION}/{PLURALS[kind]}/{name}/status",
                                body={"status": {"conditions": [condition]}},
                                content_type="application/merge-patch+json")
        except ApiError as error:  # the next event writes it again; the catalog is what counts
            log.warning("definition status not written: %s", error, extra={"fields": {"kind": kind, "name": name}})


def _type_of(body: Mapping[str, Any] | None) -> str:
    return str(((body or {}).get("spec") or {}).get("type") or "")
