"""Benchmark of definitions (prints figures, asserts nothing; docs/definitions.md).

Two Applications of N components each render the same ConfigMaps: one through the built-in
``passthrough`` type, one through a ComponentDefinition whose template computes the name, a
label and two data values with CEL. Reports the best and median of several runs of
``validate_authored_properties`` + ``transform`` for N = 1 (one component's render) and
N = 1,000, and the ratio definition/built-in.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "operator"))

from oam_operator.oam import Application, Component, Metadata, TransformContext, new_builtin_transformer
from oam_operator.oam.definitions.catalog import DefinitionCatalog
from oam_operator.oam.definitions.model import read_definition
from oam_operator.oam.document.document import validate_application

RUNS = 9
DEFINITION = {
    "apiVersion": "oam-operator.dev/v1alpha1", "kind": "ComponentDefinition", "metadata": {"name": "settings.v1"},
    "spec": {
        "type": "settings", "version": "v1",
        "parameters": {"index": {"type": "integer", "description": "Its number."},
                       "tier": {"type": "string", "default": "apps", "description": "Its tier."}},
        "objects": [{"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "${context.componentName}",
                                  "labels": {"app": "${context.componentName}"}},
                     "data": {"index": "${string(parameters.index)}", "tier": "${parameters.tier.lowerAscii()}"}}],
    },
}


def builtin(n: int) -> Application:
    components = [Component(name=f"c{i:05d}", type="passthrough", properties={"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i:05d}", "labels": {"app": f"c{i:05d}"}},
        "data": {"index": str(i), "tier": "apps"}}}) for i in range(n)]
    return Application("oam-operator.dev/v1alpha1", "Application", Metadata("bench", "bench"), components, [])


def defined(n: int) -> Application:
    components = [Component(name=f"c{i:05d}", type="settings", properties={"index": i, "tier": "APPS"})
                  for i in range(n)]
    return Application("oam-operator.dev/v1alpha1", "Application", Metadata("bench", "bench"), components, [])


def run_times(app: Application, with_definitions: bool) -> tuple[list[float], list[dict[str, Any]]]:
    transformer = new_builtin_transformer()
    if with_definitions:
        DefinitionCatalog.beside(transformer).put(read_definition(DEFINITION))
    validate_application(app, transformer.component_types(), transformer.trait_types(), open_types=with_definitions)
    times: list[float] = []
    objects: list[dict[str, Any]] = []
    for _ in range(RUNS):
        gc.collect()
        start = time.perf_counter()
        transformer.validate_authored_properties(app)
        objects = transformer.transform(app, TransformContext()).objects()
        times.append(time.perf_counter() - start)
    return times, objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args()
    records = []
    for n in (1, 1000):
        builtin_times, builtin_objects = run_times(builtin(n), False)
        defined_times, defined_objects = run_times(defined(n), True)
        if builtin_objects != defined_objects:
            raise SystemExit(f"the two Applications of {n} components render different objects")
        record = {"components": n, "runs": RUNS,
                  "builtin_times_s": builtin_times, "definition_times_s": defined_times,
                  "builtin_best_s": min(builtin_times), "definition_best_s": min(defined_times),
                  "builtin_median_s": statistics.median(builtin_times),
                  "definition_median_s": statistics.median(defined_times)}
        record["ratio_best"] = record["definition_best_s"] / record["builtin_best_s"]
        records.append(record)
        print(f"definitions: {n} components: built-in passthrough {record['builtin_best_s'] * 1000:.2f} ms, "
              f"definition {record['definition_best_s'] * 1000:.2f} ms (best of {RUNS}; "
              f"ratio {record['ratio_best']:.2f}; same objects)")
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "definitions", "sizes": records}, indent=2) + "\n")


if __name__ == "__main__":
    main()
