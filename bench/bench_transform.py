"""Benchmark of the OAM transform (prints figures, asserts nothing).

A generated Application with N passthrough components spread over the three tiers (by
annotation), 3·N dependency edges that follow the tier order (spread over ten dependency
policies) and a few placement policies. Reports the best of several runs of
``validate_authored_properties`` + ``transform`` (objects generated, labels stamped) for
N = 1,000, 2,000 and 10,000, and their ratios to 1,000. Targets: ≤ 1 s for 1,000, 2,000/1,000
≤ 2.2, 10,000/1,000 ≤ 10.5 (linear growth, docs/transform.md#transform-cost).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "operator"))

from oam_operator.oam import (
    Application,
    ApplicationPolicy,
    Component,
    Metadata,
    TransformContext,
    new_builtin_transformer,
)
from oam_operator.oam.document.document import validate_application

TIERS = ("infra", "services", "apps")
RUNS = 9
SIZES = (1000, 2000, 10000)
TARGET_RATIO = {2000: 2.2, 10000: 10.5}


def generate(n: int, seed: int = 7) -> Application:
    rng = random.Random(seed)
    components: list[Component] = []
    tier_of: list[int] = []
    for i in range(n):
        tier = i * 3 // n
        tier_of.append(tier)
        components.append(
            Component(
                name=f"c{i:05d}",
                type="passthrough",
                annotations={"oam-operator.dev/tier": TIERS[tier]},
                properties={
                    "object": {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"labels": {"app": f"c{i:05d}"}},
                        "data": {"index": str(i), "tier": TIERS[tier]},
                    }
                },
            )
        )
    edges: dict[int, list[int]] = {}
    count = 0
    while count < 3 * n:
        a, b = rng.randrange(n), rng.randrange(n)
        if a == b:
            continue
        later, earlier = max(a, b), min(a, b)  # edges go from a later index to an earlier one: acyclic
        if tier_of[later] < tier_of[earlier] or earlier in edges.get(later, []):
            continue
        edges.setdefault(later, []).append(earlier)
        count += 1
    rules = [
        {"component": components[c].name, "dependsOn": [components[d].name for d in targets]}
        for c, targets in sorted(edges.items())
    ]
    policies = [
        ApplicationPolicy(f"order-{k}", "dependency", {"rules": rules[k::10]}) for k in range(10) if rules[k::10]
    ]
    policies += [
        ApplicationPolicy(f"place-{k}", "placement", {"component": components[k].name, "tier": "infra"})
        for k in range(5)
    ]
    return Application("oam-operator.dev/v1alpha1", "Application", Metadata("bench", "bench"), components, policies)


def run_times(n: int) -> tuple[list[float], int, int]:
    """Every run's time (seconds), the number of groups and of objects."""
    transformer = new_builtin_transformer()
    app = generate(n)
    validate_application(app, transformer.component_types(), transformer.trait_types())
    times: list[float] = []
    groups = objects = 0
    for _ in range(RUNS):
        gc.collect()
        start = time.perf_counter()
        transformer.validate_authored_properties(app)
        result = transformer.transform(app, TransformContext())
        times.append(time.perf_counter() - start)
        groups = len(result.cluster.node.bundle.children)
        objects = len(result.objects())
    return times, groups, objects


def best_time(n: int) -> tuple[float, int, int]:
    times, groups, objects = run_times(n)
    return min(times), groups, objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", metavar="FILE", help="also write the figures (every run's time) to FILE as JSON")
    args = parser.parse_args()
    figures: dict[int, Any] = {}
    records: list[dict[str, Any]] = []
    for n in SIZES:
        times, groups, objects = run_times(n)
        seconds = min(times)
        figures[n] = seconds
        records.append(
            {
                "components": n,
                "edges": 3 * n,
                "groups": groups,
                "objects": objects,
                "runs": RUNS,
                "times_s": times,
                "best_s": seconds,
                "median_s": statistics.median(times),
            }
        )
        print(
            f"transform: {n} components, {3 * n} dependency edges, 3 tiers: "
            f"{seconds:.3f} s (best of {RUNS}; {groups} groups, {objects} objects)"
        )
    for n, target in TARGET_RATIO.items():
        print(f"transform: ratio {n}/1000 = {figures[n] / figures[1000]:.2f} (target <= {target}; 1000 target <= 1 s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "transform", "sizes": records}, indent=2) + "\n")


if __name__ == "__main__":
    main()
