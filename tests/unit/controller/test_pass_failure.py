"""What the operator logs about a failed pass (issue 14): level, reason and the error's text."""

from __future__ import annotations

import logging
from typing import Any

from oam_operator.controller.reconcile.seams import PassResult
from oam_operator.controller.service.runtime import pass_failure


def status(reason: str, message: str) -> dict[str, Any]:
    return {"conditions": [{"type": "Ready", "status": "False", "reason": reason, "message": message}]}


def test_an_error_logs_its_reason_and_message_at_error() -> None:
    result = PassResult(status("TransformFailed", 'component "web": image is required'), 60.0, "error",
                        error_type="transform")
    assert pass_failure(result) == (logging.ERROR, "TransformFailed", 'component "web": image is required')


def test_a_retried_api_failure_logs_at_warning() -> None:
    result = PassResult(status("Retrying", "Error reading object: 503"), 1.0, "pending", error_type="503")
    assert pass_failure(result) == (logging.WARNING, "Retrying", "Error reading object: 503")


def test_a_pass_without_error_is_not_a_failure() -> None:
    assert pass_failure(PassResult(status("Ready", "Applied revision 1: 1 objects ready"), 60.0, "ready")) is None
    assert pass_failure(PassResult(status("Processing", "Waiting"), 1.0, "progressing")) is None
