"""A bounded, seeded chaos run (docs/chaos.md#the-suites-chaos-test).

Two leader-elected instances (one behind a proxy that cuts it off) and ten Applications of three
ConfigMaps on a minimal control plane of this module's own, whose audit log records what each
Application write carried and answered. For two minutes a seeded plan of faults runs: spec edits,
hand edits of owned objects, deletions, re-creations and replacements (a namesake with a new uid),
``kill -9`` and SIGSTOP of the leader, cuts of the proxied instance, API server and etcd restarts.
Then the fleet must converge within 90 s, and the invariants hold (docs/chaos.md#invariants).
``OAM_CHAOS_SEED`` replays another plan; a failure prints the run's timeline.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tools.chaos.engine import Outcome, Run, RunConfig
from tools.chaos.invariants import INVARIANTS
from tools.chaos.plane import start_plane
from tools.chaos.report import markdown
from tools.chaos.schedule import PROCESS_FAULTS
from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import require_cluster, timeout_scale

pytestmark = pytest.mark.cluster

SEED = int(os.environ.get("OAM_CHAOS_SEED", "36"))


def by_invariant(outcome: Outcome) -> str:
    parts = []
    for invariant in INVARIANTS:
        found = outcome.violations_of(invariant)
        if found:
            parts.append(f"{invariant}: {len(found)}\n" + "\n".join(f"  {v.detail}" for v in found[:8]))
    return "\n".join(parts)


def test_a_seeded_chaos_run_keeps_every_invariant(tmp_path: Path) -> None:
    try:
        plane = start_plane(tmp_path / "plane")
    except dc.DevclusterError as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))
    (tmp_path / "logs").mkdir()
    config = RunConfig(seed=SEED, duration=120.0, apps=10, log_dir=tmp_path / "logs", app_gap=3.0,
                       process_gap=14.0, converge_bound=90.0 * timeout_scale())
    try:
        outcome = Run(plane, "chaos", config, say=lambda line: None).execute()
    finally:
        plane.stop()
    sys.stdout.write("\n" + markdown(outcome, "this run", "minimal"))
    if outcome.violations:
        sys.stderr.write("\n".join(["", "--- timeline ---", *outcome.timeline, ""]))
    assert not outcome.violations, f"seed {SEED}: invariants violated\n{by_invariant(outcome)}"
    missed = sorted(set(PROCESS_FAULTS) - set(outcome.faults))
    assert missed == [], f"seed {SEED}: process faults never injected (no target when due): {missed}"
    assert outcome.drift, "no hand edit was corrected: the run tested no drift"
    assert outcome.faults["replace"] + outcome.faults["recreate"] >= 1
