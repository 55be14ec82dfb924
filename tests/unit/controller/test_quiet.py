"""Quiet routine passes (docs/operator.md#quiet-routine-passes): which full pass confirms an
Application, when a routine pass may be skipped, and how a transform's reads outside the
cluster are noticed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.quiet import FULL_PASS_EVERY, Confirmed, FullReason, refusal
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.oam.remote.noticed import noticed, noticing
from oam_operator.reconciler.report import CallReport
from tests.unit.unitkit import FakeReconciler, application, fake_reconciler, pass_environment

__all__ = ["fake_reconciler"]  # the fixture, imported for pytest

CONFIRMED = Confirmed(generation=2, epoch=5, until=1000.0 + FULL_PASS_EVERY * 600.0, delay=600.0)


@pytest.mark.parametrize(("confirmed", "generation", "epoch", "now", "refused"), [
    (CONFIRMED, 2, 5, 1000.0 + 600.0, None),  # its interval's pass
    (CONFIRMED, 2, 5, 1000.0 + FULL_PASS_EVERY * 600.0 - 1, None),
    (CONFIRMED, 2, 5, 1000.0 + FULL_PASS_EVERY * 600.0, "due"),  # a full pass is due
    (CONFIRMED, 3, 5, 1600.0, "generation"),  # a new generation
    (CONFIRMED, 2, 6, 1600.0, "relisted"),  # a watch went down since
    (None, 2, 5, 1600.0, "first-pass"),  # no confirming pass in this process
])
def test_a_routine_pass_is_skipped_only_while_nothing_could_have_changed_unseen(
        confirmed: Confirmed | None, generation: int, epoch: int, now: float, refused: str | None) -> None:
    assert refusal(confirmed, generation=generation, epoch=epoch, now=now) == refused


def ready_body() -> dict[str, Any]:
    body = application()
    body["status"] = apply_pass(body, Memory(), pass_environment()).status
    assert body["status"]["state"] == "Ready"
    return body


def test_a_ready_pass_that_sent_nothing_confirms_until_an_objects_reapply_comes_due(
        fake_reconciler: FakeReconciler) -> None:
    """It holds for six intervals, or until the first object's reapply interval (60m by default)
    comes due, whichever is sooner: the fake reconciler's objects were applied a minute ago."""
    body = ready_body()
    confirming = apply_pass(body, Memory(), pass_environment(default_interval="30s"))
    assert (confirming.confirms, confirming.unconfirmed) == (FULL_PASS_EVERY * 30.0, "")
    due = apply_pass(body, Memory(), pass_environment(default_interval="1h")).confirms
    assert due is not None and 58 * 60 < due <= 59 * 60  # the objects' reapply comes first
    assert apply_pass(body, Memory(), pass_environment(default_interval="1h", reapply_interval="0s")).confirms \
        == FULL_PASS_EVERY * 3600.0


def test_a_pass_that_read_from_the_api_server_does_not_confirm(fake_reconciler: FakeReconciler) -> None:
    """An object of a kind no watch serves was read with a GET: its changes wake nobody."""
    body = ready_body()
    fake_reconciler.report = CallReport("done", operations={"read": 1})
    result = apply_pass(body, Memory(), pass_environment())
    assert (result.confirms, result.unconfirmed) == (None, FullReason.REQUESTS) == (None, "requests")


def test_a_pass_that_waits_or_lately_corrected_drift_does_not_confirm(fake_reconciler: FakeReconciler) -> None:
    body = ready_body()
    fake_reconciler.done = False
    waiting = apply_pass(body, Memory(), pass_environment())
    assert (waiting.confirms, waiting.unconfirmed) == (None, "not-ready")
    fake_reconciler.done = True
    memory = Memory()
    memory.drift.corrections[("", "ConfigMap", "shop", "web-config")] = [datetime.now(UTC)]  # its fight's count
    fought = apply_pass(body, memory, pass_environment())
    assert (fought.confirms, fought.unconfirmed) == (None, "drift")


class Reader:
    def read(self, url: str) -> bytes:
        return url.encode()


def test_reads_outside_the_cluster_are_noticed_within_a_block_only() -> None:
    reader = noticed(Reader())
    assert reader.read("https://example.test/a.yaml") == b"https://example.test/a.yaml"  # outside: unmarked
    with noticing() as nothing:
        pass
    with noticing() as reads:
        reader.read("https://example.test/a.yaml")
    assert (nothing.outside, reads.outside) == (False, True)
