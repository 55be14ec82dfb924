"""The POST each provider type receives (controller/service/notifyproviders.py) and the spec checks (notifyspec.py)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from cloudevents.core.bindings.http import HTTPMessage, from_structured_event
from cloudevents.core.formats.json import JSONFormat

from oam_operator.controller.service.notifyproviders import payload, request_for
from oam_operator.controller.service.notifyspec import provider_problem

MESSAGE = {"id": "u1.failed.1", "event": "failed", "message": "Application team/web failed: bad", "at": "T1"}
FACTS = payload("team", "web", "ops", MESSAGE)


def test_the_webhook_gets_the_facts_signed_with_the_key() -> None:
    request = request_for("webhook", FACTS, b"k")
    assert json.loads(request.body) == {
        "id": "u1.failed.1", "event": "failed", "message": "Application team/web failed: bad", "at": "T1",
        "application": {"namespace": "team", "name": "web"}, "notification": {"namespace": "team", "name": "ops"}}
    assert request.headers["X-Oam-Signature"] == "sha256=" + hmac.new(b"k", request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Oam-Event-Id"] == "u1.failed.1"


def test_slack_and_teams_get_the_text_and_no_signature_without_a_key() -> None:
    slack = request_for("slack", FACTS, None)
    assert json.loads(slack.body) == {"text": "Application team/web failed: bad"}
    assert "X-Oam-Signature" not in slack.headers
    teams = json.loads(request_for("msteams", FACTS, None).body)
    assert teams["attachments"][0]["content"]["body"][0]["text"] == "Application team/web failed: bad"


def test_a_cloudevent_parses_back_with_the_library() -> None:
    request = request_for("cloudevents", FACTS, None)
    assert request.headers["Content-Type"] == "application/cloudevents+json"
    event = from_structured_event(HTTPMessage(headers={"content-type": request.headers["Content-Type"]},
                                              body=request.body), JSONFormat())
    assert event.get_id() == "u1.failed.1"
    assert event.get_type() == "dev.oam-operator.application.failed"
    assert event.get_source() == "/apis/oam-operator.dev/v1alpha1/namespaces/team/applications/web"
    assert event.get_data() == FACTS


def test_an_unknown_type_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown provider type 'pager'"):
        request_for("pager", FACTS, None)


@pytest.mark.parametrize(("provider", "events", "message"), [
    ({"type": "pager", "address": "https://x.example"}, ["failed"],
     "provider type 'pager' does not exist (one of: webhook, slack, msteams, cloudevents)"),
    ({"type": "slack", "address": "https://x.example"}, ["exploded"],
     "event kind 'exploded' does not exist (one of: failed, recovered, rolledBack, drifted, deleted)"),
    ({"type": "webhook", "address": "https://x.example"}, ["failed"],
     "a webhook provider needs spec.provider.secretRef (a Secret with the key hmacKey)"),
    ({"type": "slack", "address": "ftp://x.example"}, ["failed"],
     "provider address 'ftp://x.example' is not an http(s) URL with a host"),
    ({"type": "slack", "address": "http://[::1"}, ["failed"],
     "provider address 'http://[::1' does not parse: Invalid IPv6 URL"),
    ({"type": "slack"}, ["failed"],
     "the provider has no address: set spec.provider.address or the key address of its Secret"),
])
def test_spec_problems_have_exact_messages(provider: dict[str, str], events: list[str], message: str) -> None:
    problem = provider_problem(provider, events)
    assert problem is not None and (problem.reason, problem.message) == ("InvalidSpec", message)


def test_a_good_spec_has_no_problem() -> None:
    assert provider_problem({"type": "slack", "address": "https://hooks.example/x"}, ["failed"]) is None
    assert provider_problem({"type": "slack", "secretRef": "s"}, ["failed"]) is None
