"""Admission of Notifications (controller/service/notifyadmission.py): the status's messages, at apply time."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.notifyadmission import notification_refusal
from oam_operator.controller.service.notifysend import notification_policy

POLICY = notification_policy(())


def body(provider: dict[str, Any], events: list[str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "ops", "namespace": "team", **meta},
            "spec": {"events": events or ["failed"], "provider": provider}}


def test_a_good_notification_is_admitted() -> None:
    assert notification_refusal(POLICY, "CREATE", body({"type": "slack", "address": "https://hooks.example/x"})) is None
    # a name is checked when connecting; the Secret when the operator reads it
    assert notification_refusal(POLICY, "CREATE", body({"type": "webhook", "address": "http://localhost/x",
                                                        "secretRef": "missing"})) is None


def test_bad_input_is_refused_with_the_status_message() -> None:
    assert notification_refusal(POLICY, "CREATE", body({"type": "pager", "address": "https://x.example"})) == (
        "provider type 'pager' does not exist (one of: webhook, slack, msteams, cloudevents)")
    assert notification_refusal(POLICY, "UPDATE", body({"type": "slack", "address": "not a url"})) == (
        "provider address 'not a url' is not an http(s) URL with a host")
    assert notification_refusal(POLICY, "CREATE", body({"type": "slack", "address": "http://169.254.169.254/x"})) == (
        'posting to "http://169.254.169.254/x": refused to connect to 169.254.169.254: a link-local address '
        "(notifications may reach only public addresses); the operator allows internal networks listed in "
        "--notification-allowed-networks")


def test_status_writes_deletions_and_deletes_are_admitted() -> None:
    bad = body({"type": "slack", "address": "ftp://x"})
    assert notification_refusal(POLICY, "UPDATE", bad, "status") is None
    assert notification_refusal(POLICY, "DELETE", bad) is None
    assert notification_refusal(POLICY, "UPDATE", body({"type": "slack", "address": "ftp://x"},
                                                       deletionTimestamp="2026-01-01T00:00:00Z")) is None
