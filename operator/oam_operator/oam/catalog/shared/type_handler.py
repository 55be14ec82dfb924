"""The boilerplate every workload component handler shares: type claim and contract."""

from __future__ import annotations

from typing import ClassVar

from oam_operator.oam.engine.handlers import ContractMetadata


class TypeHandler:
    """Claims exactly ``TYPE`` and publishes the built-in contract for it (§5.6)."""

    TYPE: ClassVar[str] = ""

    def can_handle(self, component_type: str) -> bool:
        return component_type == self.TYPE

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=self.TYPE)
