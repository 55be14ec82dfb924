"""Benchmark of the CLI's start-up (issue 14; prints figures, asserts nothing).

Runs ``oam-operator --help``, ``oam-operator build`` of a one-component Application and
``oam-operator run --help`` as a user's shell does (a new process each time), ``--runs`` times
each, and reports the best and median wall time and the CPU time (user + system) of the child.
With ``--status NAMESPACE/NAME --kubeconfig FILE`` it also runs ``oam-operator status`` of that
live Application (one GET; target ≤ 0.3 s, issue 25).
The target is ≤ 0.3 s for the first two on an idle machine; on a loaded one wall time mostly
measures the queue for a core, so CPU time is printed next to it, and the load average too.

Bytecode is compiled first and the process may write it (``PYTHONDONTWRITEBYTECODE`` is
dropped): an installed package has its ``.pyc`` files, and compiling 200 modules per start
is not what a user waits for.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
APP = """\
apiVersion: oam-operator.dev/v1alpha1
kind: Application
metadata:
  name: demo
spec:
  components:
    - name: web
      type: webservice
      properties:
        image: nginx:1.27
        port: 80
"""


def _cli() -> str:
    beside = Path(sys.executable).parent / "oam-operator"
    found = str(beside) if beside.exists() else shutil.which("oam-operator")
    if found is None:
        raise SystemExit("oam-operator not found: install the project into this environment")
    return found


def measure(argv: list[str], runs: int, label: str = "", ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(argv, env=env, capture_output=True, check=False)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if result.returncode not in ok:
            raise SystemExit(f"{' '.join(argv)} failed: {result.stderr.decode(errors='replace')}")
    return {
        "command": label or " ".join(["oam-operator", *argv[1:]]),
        "runs": runs,
        "wall_best_s": round(min(walls), 3),
        "wall_median_s": round(statistics.median(walls), 3),
        "cpu_best_s": round(min(cpus), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--status", metavar="NAMESPACE/NAME", help="also time `status` of this live Application")
    parser.add_argument("--kubeconfig", metavar="FILE", help="the cluster of --status")
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "operator" / "oam_operator"), quiet=1)
    cli = _cli()
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "app.yaml"
        app.write_text(APP)
        measure([cli, "--help"], 1)  # warm the page cache
        rows = [
            measure([cli, "--help"], args.runs),
            measure([cli, "build", str(app)], args.runs, "oam-operator build app.yaml"),
            measure([cli, "run", "--help"], args.runs),
        ]
        if args.status:
            namespace, _, name = args.status.partition("/")
            command = [cli, "status", name, "-n", namespace, *(["--kubeconfig", args.kubeconfig] if args.kubeconfig
                                                                 else [])]
            rows.append(measure(command, args.runs, f"oam-operator status {name}", ok=(0, 3)))
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"rows": rows, "loadavg": load, "cores": os.cpu_count()}, indent=2))
        return 0
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    print(f"{'command':<32} {'wall best':>10} {'wall med':>10} {'cpu best':>10} {'cpu med':>10}")
    for row in rows:
        print(f"{row['command']:<32} {row['wall_best_s']:>9.3f}s {row['wall_median_s']:>9.3f}s "
              f"{row['cpu_best_s']:>9.3f}s {row['cpu_median_s']:>9.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
