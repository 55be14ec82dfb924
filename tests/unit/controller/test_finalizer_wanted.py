"""Only the leader adds the finalizer (controller/service/handlers.py ``wanted``, docs/operator.md#leader-election)."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.service.handlers import wanted

DOMAIN = "oam-operator.dev"


class Leading:
    def __init__(self, leads: bool) -> None:
        self.leads = leads

    def leading(self) -> bool:
        return self.leads


@pytest.mark.parametrize(("leadership", "finalizers", "expected"), [
    (None, None, True),  # no leader election: every instance reconciles
    (Leading(True), None, True),  # the leader: kopf adds the finalizer
    (Leading(False), None, False),  # a standby: kopf neither adds it nor starts a loop
    (Leading(False), ["other"], False),
    (Leading(False), ["other", DOMAIN], True),  # has it: kept, its loop and deletion handler wait here
])
def test_wanted(leadership: Any, finalizers: list[str] | None, expected: bool) -> None:
    meta = {"name": "web"} if finalizers is None else {"name": "web", "finalizers": finalizers}
    assert wanted(leadership, DOMAIN, meta) is expected
