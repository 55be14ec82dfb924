"""The stored form of a revision (docs/operator.md#revision-history): built, read back, named."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.api.revisions import (
    Outcome,
    manifest,
    outcome_annotations,
    read_revision,
    revision_name,
    with_unrecorded,
)

APP = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
       "metadata": {"name": "shop", "namespace": "team", "uid": "u-1", "generation": 4,
                    "annotations": {"kubernetes.io/change-cause": "image 1.2"}},
       "spec": {"components": [{"name": "web", "type": "webservice"}]}}


def test_a_revision_is_owned_by_its_application_and_read_back_as_written() -> None:
    document = manifest("oam-operator.dev", APP, 3, profile="gold", digest="d1", restores=1,
                        outcome=Outcome("Processing"))
    assert document["metadata"] == {
        "name": "shop-r3", "namespace": "team", "labels": {"oam-operator.dev/application-uid": "u-1"},
        "annotations": {"oam-operator.dev/outcome": "Processing", "kubernetes.io/change-cause": "image 1.2"},
        "ownerReferences": [{"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "name": "shop",
                             "uid": "u-1", "controller": True}],
    }
    assert (document["apiVersion"], document["kind"], document["revision"]) == ("apps/v1", "ControllerRevision", 3)
    assert document["data"] == {"spec": APP["spec"], "profile": "gold", "digest": "d1", "generation": 4,
                                "restores": 1}
    revision = read_revision("oam-operator.dev", document | {"metadata": document["metadata"] | {
        "creationTimestamp": "2026-12-02T10:00:00Z"}})
    assert (revision.number, revision.name, revision.created, revision.spec, revision.profile, revision.digest,
            revision.generation, revision.restores, revision.change_cause, revision.outcome) == (
        3, "shop-r3", "2026-12-02T10:00:00Z", APP["spec"], "gold", "d1", 4, 1, "image 1.2", Outcome("Processing"))


def test_an_outcome_patch_sets_and_removes_its_keys() -> None:
    assert outcome_annotations("d", Outcome("Ready", "2026-12-02T10:00:00Z")) == {
        "d/outcome": "Ready", "d/outcome-at": "2026-12-02T10:00:00Z", "d/outcome-reason": None,
        "d/outcome-message": None}
    long = outcome_annotations("d", Outcome("Error", "t", "ApiError", "x" * 5000))
    assert long["d/outcome-message"] == "x" * 1024


def test_a_long_name_keeps_a_hash_and_the_number() -> None:
    name = "a" * 253
    assert revision_name("shop", 12) == "shop-r12"
    long = revision_name(name, 12)
    assert len(long) == 253 and long.endswith("-r12") and long != revision_name("a" * 252 + "b", 12)


def recorded(number: int) -> Any:
    return read_revision("oam-operator.dev", manifest("oam-operator.dev", APP, number, profile="", digest=f"d{number}",
                                                      restores=None, outcome=Outcome("Ready", "t")))


PROCESSING = {"revision": 3, "processingDigest": "p3", "lastProcessingDigest": "p3", "revisionDigest": "d3",
              "state": "Processing", "profile": "gold", "processingSince": "2026-12-02T10:00:00Z"}


def test_the_current_revision_not_recorded_yet_is_shown_as_its_status_tells() -> None:
    """history.py records a revision once it ends: until then ``history`` shows it from the status."""
    shown = with_unrecorded([recorded(2), recorded(1)], APP | {"status": PROCESSING})
    assert [r.number for r in shown] == [1, 2, 3]
    assert (shown[2].name, shown[2].created, shown[2].spec, shown[2].profile, shown[2].digest, shown[2].generation,
            shown[2].restores, shown[2].change_cause, shown[2].outcome) == (
        "", "2026-12-02T10:00:00Z", APP["spec"], "gold", "d3", 4, None, "image 1.2", Outcome("Processing"))


def test_a_rollbacks_new_generation_shows_the_revision_it_restores_before_it_is_recorded() -> None:
    """``oam-operator rollback --to-revision 1`` writes revision 1's spec back: while that revision
    processes, its row already says what its record will (restores 1)."""
    shown = with_unrecorded([recorded(1), recorded(2)], APP | {"status": PROCESSING | {"revisionDigest": "d1"}})
    assert [(r.number, r.restores, r.outcome.state) for r in shown] == [(1, None, "Ready"), (2, None, "Ready"),
                                                                        (3, 1, "Processing")]


@pytest.mark.parametrize("status", [
    PROCESSING | {"revision": 2},  # recorded already (superseded, or taken over)
    PROCESSING | {"state": "Ready"},  # ended without a record: limit 0 earlier, or applied before history
    PROCESSING | {"state": "Error"},
    PROCESSING | {"processingDigest": "p4"},  # a new input not counted: revision 3 is not what it processes
    PROCESSING | {"rolledBack": {"revision": 2, "restores": 1}},  # a restore is recorded by its first pass
    {},
])
def test_nothing_is_added_for_a_recorded_ended_new_or_restoring_input(status: dict[str, Any]) -> None:
    assert [r.number for r in with_unrecorded([recorded(2), recorded(1)], APP | {"status": status})] == [1, 2]


def test_a_history_limit_of_zero_shows_nothing() -> None:
    app = APP | {"spec": {**APP["spec"], "revisionHistoryLimit": 0}, "status": PROCESSING}
    assert with_unrecorded([], app) == []
