"""``history`` and ``rollback`` without a cluster (docs/operator.md#history-and-rollback): the
table, one revision, the rollback's target, spec and exact refusals, and the options' errors."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from oam_operator.api.revisions import Outcome, Revision
from oam_operator.cli.commands import main
from oam_operator.cli.historyview import (
    RollbackRefused,
    render_documents,
    render_history,
    render_revision,
    rollback_spec,
    rollback_target,
    table_outcome,
)
from oam_operator.cli.plugin import completions

V1 = {"components": [{"name": "web", "type": "webservice", "properties": {"image": "nginx:1.26"}}]}
V2 = {"components": [{"name": "web", "type": "webservice", "properties": {"image": "nginx:1.27"}}]}
V3 = {"components": [{"name": "web", "type": "webservice", "properties": {"image": "nginx:bad"}}]}


def revision(number: int, spec: dict[str, Any], outcome: Outcome, *, cause: str = "",
             restores: int | None = None) -> Revision:
    return Revision(number=number, name=f"shop-r{number}", created=f"2026-12-02T10:0{number}:00Z", spec=spec,
                    profile="", digest=f"d{number}", generation=number, restores=restores, change_cause=cause,
                    outcome=outcome)


HISTORY = [
    revision(1, V1, Outcome("Ready", "2026-12-02T10:01:05Z"), cause="first"),
    revision(2, V2, Outcome("Ready", "2026-12-02T10:02:05Z")),
    revision(3, V3, Outcome("Error", "2026-12-02T10:03:05Z", "ApiError",
                            "ConfigMap team/web is invalid: data[bad key]: a valid config key must consist of")),
    revision(4, V1, Outcome("Processing"), cause="first", restores=1),
]


def live(spec: dict[str, Any], current: int = 3, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "shop", "namespace": "team"}, "spec": {**spec, **extra},
            "status": {"revision": current}}


def test_the_history_table() -> None:
    # the error's detail shortened to 60 characters; the columns as wide as their widest cell
    outcome = "Error 2026-12-02T10:03:05Z ApiError: ConfigMap team/web is invalid: data[bad key]: a v…"
    width = len(outcome)
    assert render_history(HISTORY, 4) == (
        f"REVISION   CREATED                {'OUTCOME':<{width}}   RESTORES   CHANGE-CAUSE\n"
        f"1          2026-12-02T10:01:00Z   {'Ready 2026-12-02T10:01:05Z':<{width}}   -          first\n"
        f"2          2026-12-02T10:02:00Z   {'Ready 2026-12-02T10:02:05Z':<{width}}   -          <none>\n"
        f"3          2026-12-02T10:03:00Z   {outcome}   -          <none>\n"
        f"4*         2026-12-02T10:04:00Z   {'Processing':<{width}}   1          first\n"
    )
    assert render_history([], None) == "No revisions recorded.\n"


def test_one_revision_in_text_and_its_spec_as_yaml_or_json() -> None:
    assert render_revision(HISTORY[2], "text") == (
        "Revision 3:\n"
        "  created:      2026-12-02T10:03:00Z\n"
        "  generation:   3\n"
        "  profile:      <none>\n"
        "  digest:       d3\n"
        "  outcome:      Error 2026-12-02T10:03:05Z ApiError: ConfigMap team/web is invalid: data[bad key]: "
        "a valid config key must consist of\n"
        "  change-cause: <none>\n"
        "spec:\n"
        "  components:\n"
        "  - name: web\n"
        "    properties:\n"
        "      image: nginx:bad\n"
        "    type: webservice\n"
    )
    assert render_revision(HISTORY[0], "yaml") == (
        "components:\n- name: web\n  properties:\n    image: nginx:1.26\n  type: webservice\n")
    assert render_revision(HISTORY[0], "json").startswith('{\n  "components": [\n')


def test_every_revision_as_data() -> None:
    assert render_documents(HISTORY[3:], "json") == (
        '[\n  {\n    "revision": 4,\n    "created": "2026-12-02T10:04:00Z",\n    "generation": 4,\n'
        '    "profile": "",\n    "digest": "d4",\n    "outcome": {\n      "state": "Processing"\n    },\n'
        '    "restores": 1,\n    "changeCause": "first"\n  }\n]\n')


def test_rollback_goes_to_the_revision_before_the_current_one_or_the_one_asked_for() -> None:
    assert rollback_target(live(V3), HISTORY[:3], None).number == 2
    assert rollback_target(live(V3), HISTORY[:3], 1).number == 1
    # after a rollback to 1 (revision 4), the one before is 3
    assert rollback_target(live(V1, current=4), HISTORY, None).number == 3


@pytest.mark.parametrize(("app", "revisions", "wanted", "message"), [
    (live(V3), HISTORY[:3], 7, "Application team/shop has no revision 7 (revisions: 1, 2, 3)"),
    (live(V3), [], 1, "Application team/shop has no revision 1 (revisions: none recorded)"),
    (live(V1, current=1), HISTORY[:1], None, "Application team/shop has no earlier revision to roll back to"),
    (live(V3), HISTORY[:3], 3, "Application team/shop already applies revision 3; nothing to roll back"),
    (live(V3, suspend=True), HISTORY[:3], 1,
     "Application team/shop is suspended; resume it first (oam-operator resume shop -n team)"),
])
def test_rollback_refusals(app: dict[str, Any], revisions: list[Revision], wanted: int | None,
                           message: str) -> None:
    with pytest.raises(RollbackRefused) as refused:
        rollback_target(app, revisions, wanted)
    assert str(refused.value) == message


def test_a_rollback_keeps_what_steers_the_operator() -> None:
    old = revision(1, {**V1, "interval": "1m", "revisionHistoryLimit": 5, "updatePolicy": "Replace",
                       "drift": "Correct"}, Outcome("Ready"))
    assert rollback_spec({**V3, "interval": "20m", "revisionHistoryLimit": 2, "suspend": False, "drift": "Report"},
                         old) == {**V1, "updatePolicy": "Replace", "interval": "20m", "revisionHistoryLimit": 2,
                                  "suspend": False, "drift": "Report"}


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_a_revision_option_that_is_no_revision_number_is_a_usage_error(value: str) -> None:
    for args in (["rollback", "shop", "--to-revision", value], ["history", "shop", "--revision", value],
                 ["diff", "shop", "--revision", value]):
        result = CliRunner().invoke(main, args)
        option = "--to-revision" if args[0] == "rollback" else "--revision"
        assert result.exit_code == 2, args
        assert result.output.splitlines()[-1] == (
            f"Error: Invalid value for '{option}': {value!r} is not a revision number (a whole number from 1)")


def test_history_and_rollback_are_kubectl_oam_commands_and_complete() -> None:
    assert [value for value, _ in completions(["hi"])] == ["history"]
    assert [value for value, _ in completions(["ro"])] == ["rollback"]
    assert [value for value, _ in completions(["rollback", "shop", "--to"])] == ["--to-revision"]


def test_a_rollback_policys_revisions_are_marked() -> None:
    """docs/operator.md#automatic-rollback: the failed revision reads ``RolledBack``, the restore ``Restored``."""
    said = "Revision 2 failed: Deployment web: Failed; rolled back to revision 1"
    history = [revision(1, V1, Outcome("Ready", "2026-12-02T10:01:05Z")),
               revision(2, V2, Outcome("Error", "2026-12-02T10:02:40Z", "RolledBack", said)),
               revision(3, V1, Outcome("Error", "2026-12-02T10:02:45Z", "RolledBack", said), restores=1)]
    rows = [line.split(None, 3) for line in render_history(history, 3).splitlines()[1:]]
    assert [row[2] for row in rows] == ["Ready", "RolledBack", "Restored"]
    assert [table_outcome(r) for r in history] == [
        "Ready 2026-12-02T10:01:05Z",
        "RolledBack 2026-12-02T10:02:40Z Revision 2 failed: Deployment web: Failed; rolled back to r…",
        "Restored 2026-12-02T10:02:45Z"]
