"""The revision recorder against the real API server (docs/operator.md#revision-history,
``controller/reconcile/history.py``): what each step of an Application's life writes, counted in requests.

A pass that changes nothing sends nothing; a new revision is recorded once it ends: one LIST (none
for the first) and one POST with its outcome (plus a DELETE per revision beyond the limit); a
recorded revision's new outcome one PATCH; a record found existing is taken over; a lowered limit one LIST and the
DELETEs; a rolled-back input is recorded with the revision it restores; a name taken by a
namesake's leftover is replaced; the API server's ControllerRevision validation accepts the
documents (owner reference, labels, annotations), and its immutable ``data`` survives the
patches of the outcome whatever the spec holds.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from oam_operator.api.revisions import Outcome, read_revision
from oam_operator.controller.reconcile.history import Recorded, RevisionRecorder
from oam_operator.reconciler.accounting import RequestAccounting
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.ratelimit import RateLimiter
from tests.integration.api.test_crds import GROUP, VERSION, crds, custom

__all__ = ["crds", "custom"]  # the fixtures, imported for pytest

DOMAIN = "oam-operator.dev"
# What the API server re-encodes differently from Python's json (HTML characters, non-ASCII,
# U+2028, floats, key order): the stored data must survive each later patch of the annotations.
AWKWARD = {"text": "<a href='x'>&\u00e9\u2028</a>", "ratio": 0.5, "one": 1.0, "big": 12345678901234,
           "z": {"b": 1, "a": [True, None, "yes"]}}
READY = {"type": "Ready", "status": "True", "reason": "Ready", "message": "ok",
         "lastTransitionTime": "2026-12-02T10:00:00Z"}
FAILED = {"type": "Ready", "status": "False", "reason": "ApiError", "message": "Boom",
          "lastTransitionTime": "2026-12-02T10:05:00Z"}


def status(revision: int, digest: str, state: str, *conditions: dict[str, Any]) -> dict[str, Any]:
    return {"revision": revision, "processingDigest": digest, "lastProcessingDigest": digest, "state": state,
            "profile": "", "conditions": list(conditions)}


def recorded(kube_api: Any, namespace: str, uid: str) -> dict[int, Any]:
    found = client.AppsV1Api(kube_api).list_namespaced_controller_revision(
        namespace, label_selector=f"{DOMAIN}/application-uid={uid}")
    return {r.revision: read_revision(DOMAIN, kube_api.sanitize_for_serialization(r)) for r in found.items}


def test_each_step_writes_only_its_difference(custom: Any, kube_api: Any, namespace: str) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": "shop", "annotations": {"kubernetes.io/change-cause": "first"}},
            "spec": {"components": [{"name": "a", "type": "passthrough", "properties": AWKWARD}],
                     "revisionHistoryLimit": 2}}
    app = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    app["spec"]["components"][0]["properties"]["one"] = 1.0  # as a float, however the server wrote it
    uid = app["metadata"]["uid"]
    accounting = RequestAccounting()
    recorder = RevisionRecorder(ClusterClient(kube_api, rate_limiter=RateLimiter(0, 1), accounting=accounting),
                                DOMAIN)

    def step(before: dict[str, Any], after: dict[str, Any], memory: Recorded | None) -> tuple[Recorded, dict[str, int]]:
        accounting.reset()
        result = recorder.record(app, before, after, memory)
        counts = {method: accounting.count(method=method) for method in ("GET", "POST", "PATCH", "DELETE")}
        return result, {method: n for method, n in counts.items() if n}

    memory, sent = step({}, status(1, "d1", "Processing"), None)
    assert sent == {}  # not ended: recorded once it ends
    memory, sent = step(status(1, "d1", "Processing"), status(1, "d1", "Ready", READY), memory)
    assert sent == {"POST": 1}  # the first revision: nothing earlier to list; its outcome in the same request
    assert recorded(kube_api, namespace, uid)[1].outcome.state == "Ready"
    assert recorded(kube_api, namespace, uid)[1].change_cause == "first"
    memory, sent = step(status(1, "d1", "Ready", READY), status(1, "d1", "Ready", READY), memory)
    assert sent == {}  # nothing changed, nothing sent
    _, sent = step(status(1, "d1", "Ready", READY), status(1, "d1", "Ready", READY), None)
    assert sent == {}  # after a restart: the persisted status is taken as recorded

    memory, sent = step(status(1, "d1", "Ready", READY), status(2, "d2", "Error", FAILED), memory)
    assert sent == {"GET": 1, "POST": 1}
    memory, sent = step(status(2, "d2", "Error", FAILED), status(3, "d1", "Processing"), memory)
    assert sent == {}
    memory, sent = step(status(3, "d1", "Processing"), status(3, "d1", "Ready", READY), memory)
    assert sent == {"GET": 1, "POST": 1, "DELETE": 1}  # the limit of 2: revision 1 goes
    history = recorded(kube_api, namespace, uid)
    assert sorted(history) == [2, 3]
    assert (history[2].outcome.state, history[2].outcome.reason, history[2].outcome.message) == (
        "Error", "ApiError", "Boom")
    assert history[3].restores == 1  # it applies what 1 applied (pruned in the same step)
    memory, sent = step(status(3, "d1", "Ready", READY), status(4, "d2", "Ready", READY), memory)
    assert recorded(kube_api, namespace, uid)[4].restores == 2

    # Revision 4's objects went unready, the operator restarted, and they are Ready again: its
    # record is taken over (an earlier process wrote it), its outcome and time unchanged.
    waiting = status(4, "d2", "Processing")
    memory, sent = step(waiting, waiting, None)
    assert sent == {}
    later = dict(READY, lastTransitionTime="2026-12-02T11:00:00Z")
    memory, sent = step(waiting, status(4, "d2", "Ready", later), memory)
    assert sent == {"GET": 2, "POST": 1}  # the LIST, the refused POST, the GET of what is there; no PATCH
    assert recorded(kube_api, namespace, uid)[4].outcome == Outcome("Ready", "2026-12-02T10:00:00Z")
    memory, sent = step(status(4, "d2", "Ready", later), status(4, "d2", "Error", FAILED), memory)
    assert sent == {"PATCH": 1}

    app["spec"]["revisionHistoryLimit"] = 1
    memory, sent = step(status(4, "d2", "Error", FAILED), status(4, "d2", "Error", FAILED), memory)
    assert sent == {"GET": 1, "DELETE": 1}
    assert sorted(recorded(kube_api, namespace, uid)) == [4]


def test_a_leftover_of_a_deleted_namesake_is_replaced(custom: Any, kube_api: Any, namespace: str) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": "web"},
            "spec": {"components": [{"name": "a", "type": "passthrough"}]}}
    app = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)
    recorder = RevisionRecorder(ClusterClient(kube_api, rate_limiter=RateLimiter(0, 1)), DOMAIN)
    leftover = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1, "data": {},
                "metadata": {"name": "web-r1", "labels": {f"{DOMAIN}/application-uid": "an-earlier-uid"}}}
    client.AppsV1Api(kube_api).create_namespaced_controller_revision(namespace, leftover)
    recorder.record(app, {}, status(1, "d1", "Ready", READY), None)
    history = recorded(kube_api, namespace, app["metadata"]["uid"])
    assert (sorted(history), history[1].digest, history[1].outcome.state) == ([1], "d1", "Ready")
