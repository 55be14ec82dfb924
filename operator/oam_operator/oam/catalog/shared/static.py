"""Small building blocks shared by component handlers."""

from __future__ import annotations

from dataclasses import dataclass, field

from oam_operator.oam.engine.handlers import Object
from oam_operator.oam.engine.tree import TreeApplication


@dataclass
class StaticConfig:
    """A config whose objects are fully known when it is built."""

    objects: list[Object] = field(default_factory=list)

    def generate(self, app: TreeApplication) -> list[Object]:
        return self.objects
