"""API server outage benchmark (issue 36; docs/operator.md#backoff-and-timeouts): how many requests an
operator sends while the API server is down, with ``--apps`` Applications in ``Processing``.

One ``oam-operator run`` host process (``--no-leader-election``: a leader would stop at its renew
deadline and send nothing, which measures nothing) on a fresh minimal control plane reconciles
``--apps`` Applications of one Deployment each. The minimal plane runs no controllers, so no
Deployment ever becomes Available and every Application stays ``Processing``, its passes on the
backoff. Then kube-apiserver is stopped for ``--outage`` seconds. The operator's own count of its
requests (``oam_operator_api_requests_total``, every attempt, failed ones included; its metrics
endpoint is local and answers during the outage) is read when the outage starts and when it
ends. The figure: requests per Application during the outage, next to the retry backoff's steps
in that time (1 s doubling to 60 s: 6 steps in 60 s).

Not part of ``make bench``'s default list; ``python bench/bench_outage.py [--apps 1000]
[--outage 60] [--json FILE]``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

NAMESPACE = "outage"
DOMAIN = "oam-operator.dev"


def requests_sent(operator: OperatorProcess) -> float:
    """The operator's own count of its API requests (every attempt, failed ones included)."""
    return operator.api_requests(timeout=10)


def retry_steps(seconds: float, first: float = 1.0, ceiling: float = 60.0) -> int:
    """How many retries the retry backoff makes in ``seconds`` (backoff.py's RetryBackoff)."""
    steps, elapsed, delay = 0, 0.0, first
    while elapsed + delay <= seconds:
        elapsed += delay
        steps += 1
        delay = min(ceiling, delay * 2)
    return steps


def application(index: int) -> dict[str, Any]:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app-{index}"},
                  "spec": {"selector": {"matchLabels": {"app": f"app-{index}"}},
                           "template": {"metadata": {"labels": {"app": f"app-{index}"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    return {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application",
            "metadata": {"name": f"app-{index}", "namespace": NAMESPACE},
            "spec": {"components": [{"name": "d", "type": "passthrough", "properties": {"object": deployment}}]}}


def states(plane: dc.ControlPlane) -> dict[str, int]:
    status, body = plane.api().request(f"/apis/{DOMAIN}/v1alpha1/namespaces/{NAMESPACE}/applications")
    counts: dict[str, int] = {}
    for item in body.get("items", []) if status == 200 else []:
        state = str((item.get("status") or {}).get("state") or "")
        counts[state] = counts.get(state, 0) + 1
    return counts


def wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(1.0)
    raise SystemExit(f"timed out after {timeout:.0f}s waiting for {what}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--outage", type=float, default=60.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-outage-"))
    plane = dc.start("minimal", name="bench-outage", run_dir=work / "plane")
    operator: OperatorProcess | None = None
    try:
        plane.api().request("/api/v1/namespaces", "POST", {"metadata": {"name": NAMESPACE}})
        kubectl = [str(dc.find_binaries().kubectl), "--kubeconfig", plane.handle.kubeconfig]
        subprocess.run([*kubectl, "apply", "--server-side", "-f", str(ROOT / "crds")], check=True, capture_output=True)
        subprocess.run([*kubectl, "wait", "--for=condition=Established", "--timeout=60s", "-f", str(ROOT / "crds")],
                       check=True, capture_output=True)
        operator = OperatorProcess.start(
            work / "operator.log", kubeconfig=plane.handle.kubeconfig, namespaces=[NAMESPACE],
            extra=["--use-operator-identity", "--default-profile", "", "--no-leader-election"])
        for index in range(args.apps):
            plane.api().request(f"/apis/{DOMAIN}/v1alpha1/namespaces/{NAMESPACE}/applications", "POST",
                                application(index))
        wait(lambda: states(plane).get("Processing", 0) == args.apps, 600, f"{args.apps} Applications in Processing")
        time.sleep(30)  # the passes settle on their backoff
        before = requests_sent(operator)
        plane.stop_component("kube-apiserver")
        started = time.monotonic()
        samples = []
        while time.monotonic() - started < args.outage:
            time.sleep(min(10.0, args.outage - (time.monotonic() - started)))
            samples.append((round(time.monotonic() - started, 1), requests_sent(operator) - before))
        during = requests_sent(operator) - before
        plane.start_component("kube-apiserver")
        figures = {"apps": args.apps, "outage_seconds": args.outage, "requests_during_outage": during,
                   "requests_per_app": round(during / args.apps, 2),
                   "retry_backoff_steps": retry_steps(args.outage), "samples": samples}
        print(json.dumps(figures, indent=2))
        if args.json is not None:
            args.json.write_text(json.dumps(figures, indent=2))
        return 0
    finally:
        if operator is not None:
            operator.stop(timeout=60)
        plane.stop()


if __name__ == "__main__":
    sys.exit(main())
