"""A deletion that waits logs at INFO, a blocked one at WARNING once per message, and kopf's
ERROR line for the deletion handler's retries is dropped (controller/service/deletionwaits.py)."""

from __future__ import annotations

import logging

import pytest

from oam_operator.controller.service.deletionwaits import DeletionWaits, KopfRetryFilter

BLOCKED = "DeletionBlocked"
PROCESSING = "DeletionProcessing"


def test_progress_is_info_and_a_blocked_deletion_warns_once_per_message() -> None:
    waits = DeletionWaits()
    assert waits.level("u1", PROCESSING, "Deleting bundle web (2 objects left)") == logging.INFO
    assert waits.level("u1", BLOCKED, "CRD widgets.example.com has 2 instances") == logging.WARNING
    assert waits.level("u1", BLOCKED, "CRD widgets.example.com has 2 instances") == logging.INFO
    assert waits.level("u1", BLOCKED, "CRD widgets.example.com has 1 instances") == logging.WARNING
    assert waits.level("u2", BLOCKED, "CRD widgets.example.com has 1 instances") == logging.WARNING
    waits.forget("u1")
    assert waits.level("u1", BLOCKED, "CRD widgets.example.com has 1 instances") == logging.WARNING


def test_the_line_names_the_application_and_what_it_waits_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="oam_operator.controller")
    DeletionWaits().say("u1", {"namespace": "shop", "name": "web"}, BLOCKED, "CRD x has 2 instances", 5.0)
    (record,) = caplog.records
    assert (record.levelname, record.getMessage()) == ("WARNING", "deletion blocked")
    assert record.fields == {"namespace": "shop", "name": "web", "reason": BLOCKED,  # type: ignore[attr-defined]
                             "message": "CRD x has 2 instances", "retry_in": 5.0}


@pytest.mark.parametrize(("message", "kept"), [
    # kopf's name of the handler as registered in controller/service/handlers.py (its function's qualified name)
    ("Handler 'register.<locals>.application_deleted' failed temporarily: Deleting bundle web", False),
    ("Handler 'application_deleted' failed temporarily: Deleting bundle web", False),
    ("Handler 'register.<locals>.application_deleted' failed with an exception. Will retry.", True),
    ("Handler 'register.<locals>.not_application_deleted' failed temporarily: x", True),
    ("Handler 'other' failed temporarily: x", True),
])
def test_kopfs_retry_line_of_the_deletion_handler_alone_is_dropped(message: str, kept: bool) -> None:
    """The id kopf gives the deletion handler is what the filter is made for."""
    record = logging.LogRecord("kopf.objects", logging.ERROR, "x", 0, message, None, None)
    assert KopfRetryFilter("application_deleted").filter(record) is kept


def test_the_filter_matches_the_id_kopf_gives_the_registered_deletion_handler() -> None:
    """Not a made-up name: the id of the handler ``register`` adds to a real kopf registry."""
    import kopf

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.handlers import register

    registry = kopf.OperatorRegistry()
    register(registry, object(), Settings(cluster_id="c"))  # type: ignore[arg-type]  # read by handlers only
    ids = [str(handler.id) for handler in registry._changing.get_all_handlers()]
    (deletion,) = [i for i in ids if i.endswith("application_deleted")]
    record = logging.LogRecord("kopf.objects", logging.ERROR, "x", 0,
                               f"Handler {deletion!r} failed temporarily: Deleting bundle web", None, None)
    assert KopfRetryFilter("application_deleted").filter(record) is False
