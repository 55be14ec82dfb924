"""The boilerplate every workload component handler shares: type claim and contract."""

from __future__ import annotations

from oam_operator.oam.engine.handlers import BuiltinType, ContractMetadata


class TypeHandler(BuiltinType):
    """Claims exactly ``TYPE`` and publishes the built-in contract for it (§5.6)."""

    def contract(self) -> ContractMetadata:
        return ContractMetadata(family=self.TYPES[0])
