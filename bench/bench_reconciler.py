"""Benchmark of the object reconciler against kubectl server-side apply (docs/architecture.md#performance-targets).

For 50, 200 and 500 objects (half ConfigMaps, half Deployments) in one wave, on a minimal
control plane (started here with audit logging, or the cluster named by KUBECONFIG):

- reconciler first apply, with a cold client (discovery included), update policy SsaMerge,
  concurrency 8, in the configurations below; wall time until every object is created,
  requests by verb from the client's accounting (reads = GET/LIST, writes = object writes,
  Events separately: they are posted in the background after the call, and the time until
  they are all out is shown too). *Operator defaults* is what the operator's pass does with
  its default settings: the bucket only until the server shows API Priority and Fairness
  (``FlowControl``), no Events on dependent objects, and the in-call checkpoint
  (docs/reconciler.md#in-call-checkpoint; the operator's one status write there is not part
  of this library bench), so one call. The other configurations run the library's own flow:
  the checkpoint call, then the call that creates, Events on;
- ``kubectl apply --server-side`` of the same objects into another namespace, with a cold
  discovery cache; wall time and requests by verb from the audit log;
- a no-op reconcile once everything is Ready (Deployment status is patched by the bench: the
  minimal profile runs no controllers): requests by kind, against the target of 0 writes and
  reads <= the number of distinct (type, namespace) pairs.

Client-side rate limits. kubectl has no --qps/--burst flags. Its 50 qps / 300 burst apply to
its discovery client only; each object's requests go through a REST client of their own, so
no shared token bucket paces them. The bench checks this on every run with the audit log:
kubectl's requests after its first 300 arrive faster than 50 per second (a shared 50/300
bucket could not allow that). So kubectl's object requests have no client-side limit, and the
"equal limits" configuration runs the reconciler with its limiter off too. A fixed 50/100
bucket (the operator with an explicit ``--kube-api-qps 50`` and ``--dependent-events``) and a
50/300 bucket (what kubectl's discovery limits would mean for every request) are shown as well.

Each configuration and kubectl run ``BENCH_REPEATS`` times (default 5) in fresh namespaces,
in an order rotated from one repeat to the next (the machine is shared, and etcd grows as the
bench goes); times are medians. Prints a Markdown table; asserts nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.devcluster import find_binaries, start

SIZES = (50, 200, 500)
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
NAME = "oam-operator.dev"
USER_AGENT = "oam-operator-bench"
READ_VERBS = frozenset({"get", "list", "discovery", "watch"})


@dataclass(frozen=True)
class Config:
    label: str
    qps: float  # 0: no client-side limit
    burst: int
    events: bool = True
    adaptive: bool = False  # the bucket lasts until the server shows APF (reconciler/flowcontrol.py)
    in_call_checkpoint: bool = False

    @property
    def limits(self) -> str:
        if self.qps <= 0:
            return "none"
        bucket = f"{self.qps:g} qps / {self.burst} burst"
        return f"{bucket} until the server shows APF" if self.adaptive else bucket


CONFIGS = (
    Config("operator defaults", 50.0, 100, events=False, adaptive=True, in_call_checkpoint=True),
    Config("fixed 50/100 bucket, Events on", 50.0, 100),
    Config("equal limits (kubectl's: none on object requests)", 0.0, 1),
    Config("50/300 bucket (kubectl's discovery limits)", 50.0, 300),
)


@dataclass
class Run:
    seconds: list[float] = field(default_factory=list)
    drained: list[float] = field(default_factory=list)
    by_verb: dict[str, int] = field(default_factory=dict)
    audit: dict[str, int] = field(default_factory=dict)

    @property
    def s(self) -> float:
        return statistics.median(self.seconds)

    @property
    def reads(self) -> int:
        return sum(n for v, n in self.by_verb.items() if v in READ_VERBS)

    @property
    def events(self) -> int:
        return self.by_verb.get("event", 0)

    @property
    def writes(self) -> int:
        return sum(self.by_verb.values()) - self.reads - self.events


def objects_for(count: int) -> list[dict[str, Any]]:
    half = count // 2
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:04d}"}, "data": {"index": str(i)}}
        for i in range(count - half)
    ]
    for i in range(half):
        labels = {"app": f"d-{i:04d}"}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"d-{i:04d}"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
                    },
                },
            }
        )
    return out


@contextmanager
def cluster() -> Iterator[tuple[str, Path | None]]:
    """(kubeconfig, audit log) of the cluster to measure."""
    given = os.environ.get("KUBECONFIG")
    if given and Path(given).is_file():
        yield given, None
        return
    plane = start("minimal", name=f"bench-{secrets.token_hex(3)}", audit=True)
    try:
        audit = plane.run_dir / "logs" / "audit.log"
        yield plane.handle.kubeconfig, audit if audit.exists() else None
    finally:
        plane.stop()


def api_client(kubeconfig: str) -> Any:
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.proxy = None
    return client.ApiClient(configuration)


def audit_events(audit: Path | None, start_offset: int, agent_prefix: str) -> list[dict[str, Any]]:
    """Completed requests in the audit log after ``start_offset`` by user agents with a prefix."""
    if audit is None:
        return []
    time.sleep(0.5)  # let the API server flush its audit buffer
    out = []
    with audit.open("rb") as f:
        f.seek(start_offset)
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("stage") == "ResponseComplete" and str(event.get("userAgent", "")).startswith(agent_prefix):
                out.append(event)
    return out


def by_verb(events: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in events:
        counts[e["verb"]] = counts.get(e["verb"], 0) + 1
    return counts


def audit_offset(audit: Path | None) -> int:
    time.sleep(0.5)
    return audit.stat().st_size if audit is not None and audit.exists() else 0


def beyond_burst_rate(events: list[dict[str, Any]], burst: int = 300) -> float | None:
    """Requests per second after the first ``burst`` (a shared 50/300 bucket caps it at 50)."""
    stamps = sorted(datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")) for e in events)
    if len(stamps) <= burst + 10:
        return None
    span = (stamps[-1] - stamps[burst]).total_seconds()
    return (len(stamps) - 1 - burst) / span if span > 0 else None


def kubectl_apply(kubectl: Path, kubeconfig: str, namespace: str, objects: list[dict[str, Any]]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "objects.json"
        manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        started = time.perf_counter()
        result = subprocess.run(
            [
                str(kubectl),
                "--kubeconfig",
                kubeconfig,
                "--cache-dir",
                str(Path(tmp) / "cache"),
                "apply",
                "--server-side",
                "--field-manager=bench-kubectl",
                "-n",
                namespace,
                "-f",
                str(manifest),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"kubectl failed: {result.stderr[-2000:]}")
    return elapsed


def make_ready(api: Any, namespace: str, count: int) -> None:
    """Patch every Deployment's status to Available (no controller runs in minimal)."""
    from kubernetes import client

    apps = client.AppsV1Api(api)
    for i in range(count // 2):
        name = f"d-{i:04d}"
        generation = apps.read_namespaced_deployment(name, namespace).metadata.generation
        apps.patch_namespaced_deployment_status(
            name,
            namespace,
            {
                "status": {
                    "observedGeneration": generation,
                    "replicas": 1,
                    "updatedReplicas": 1,
                    "readyReplicas": 1,
                    "availableReplicas": 1,
                    "conditions": [
                        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
                    ],
                }
            },
        )


def fmt_verbs(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {n}" for v, n in sorted(counts.items())) or "-"


def main() -> None:
    from kubernetes import client

    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.flowcontrol import FlowControl
    from oam_operator.reconciler.inventory import InventoryItem
    from oam_operator.reconciler.objectpolicies import UpdatePolicy
    from oam_operator.reconciler.options import ReconcilerOptions
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    binaries = find_binaries()
    kubectl = binaries.path("kubectl")
    rows: list[dict[str, Any]] = []
    kubectl_rates: list[float] = []
    with cluster() as (kubeconfig, audit):
        api = api_client(kubeconfig)
        core = client.CoreV1Api(api)

        def fresh_namespace(prefix: str) -> str:
            ns = f"{prefix}-{secrets.token_hex(3)}"
            core.create_namespace({"metadata": {"name": ns}})
            return ns

        for count in SIZES:
            objects = objects_for(count)
            row: dict[str, Any] = {"objects": count, "pairs": len({(o["apiVersion"], o["kind"]) for o in objects})}
            runs = {c.label: Run() for c in CONFIGS}
            kubectl_run = Run()
            keep: tuple[Any, Any, Any, str, str] | None = None
            steps: list[Config | None] = [*CONFIGS, None]  # None: kubectl
            for repeat in range(REPEATS):
                for config in steps[repeat % len(steps) :] + steps[: repeat % len(steps)]:
                    if config is None:
                        if kubectl is not None:
                            ns = fresh_namespace(f"bench-kubectl-{count}")
                            offset = audit_offset(audit)
                            kubectl_run.seconds.append(kubectl_apply(kubectl, kubeconfig, ns, objects))
                            events = audit_events(audit, offset, "kubectl")
                            kubectl_run.by_verb = by_verb(events)
                            rate = beyond_burst_rate(events)
                            if rate is not None:
                                kubectl_rates.append(rate)
                        continue
                    ns = fresh_namespace(f"bench-{count}")
                    owner = f"{uuid.uuid4()}/{ns}/bench"
                    limiter = RateLimiter(config.qps, config.burst)
                    rc = ClusterClient(api, user_agent=USER_AGENT, rate_limiter=limiter,
                                       flow_control=FlowControl(limiter, adaptive=config.adaptive))
                    reconciler = Reconciler(
                        NAME, rc, ReconcilerOptions(update_policy=UpdatePolicy.SSA_MERGE, enable_events=config.events)
                    )
                    inventory: list[InventoryItem] = []
                    checkpoint = (lambda items: None) if config.in_call_checkpoint else None
                    offset = audit_offset(audit)
                    started = time.perf_counter()
                    while True:
                        reconciler.apply(inventory, objects, ns, owner, "bench", checkpoint=checkpoint)
                        if all(i.phase.value in ("Creating", "Ready") for i in inventory):
                            break
                    finished = time.perf_counter()
                    rc.flush_events(120)
                    run = runs[config.label]
                    run.seconds.append(finished - started)
                    run.drained.append(time.perf_counter() - finished)
                    run.by_verb = rc.accounting.by_verb()
                    run.audit = by_verb(audit_events(audit, offset, USER_AGENT))
                    if keep is None and config is CONFIGS[0]:
                        keep = (rc, reconciler, inventory, ns, owner)
                    else:
                        rc.close()
                print(f"  {count} objects: run {repeat + 1}/{REPEATS} done", file=sys.stderr, flush=True)
            row["runs"] = runs
            row["kubectl"] = kubectl_run if kubectl_run.seconds else None

            assert keep is not None
            rc, reconciler, inventory, ns, owner = keep
            make_ready(api, ns, count)
            while not reconciler.apply(inventory, objects, ns, owner, "bench"):
                time.sleep(0.2)
            rc.flush_events(120)
            rc.accounting.reset()
            started = time.perf_counter()
            done = reconciler.apply(inventory, objects, ns, owner, "bench")
            row.update(
                noop_done=done,
                noop_s=time.perf_counter() - started,
                noop_reads=rc.accounting.reads,
                noop_writes=rc.accounting.writes,
                noop_by_verb=rc.accounting.by_verb(),
            )
            rc.close()
            rows.append(row)
        api.close()

    print()
    print(
        f"First apply: cold discovery, SsaMerge, concurrency 8; operator defaults: one call (in-call "
        f"checkpoint), no Events on dependents, the bucket off once the server shows APF; the others: "
        f"checkpoint call + create call, Events on; median of {REPEATS}. kubectl apply --server-side "
        "with a cold discovery cache. Minimal control plane, one wave, half ConfigMaps, half "
        "Deployments. Requests: reads (GET/LIST incl. discovery) / object writes, from the client's "
        "accounting; Events are posted after the call, in the background, and counted separately; "
        "kubectl's requests are from the audit log."
    )
    print()
    print(
        "| objects | configuration | client-side limits | first apply s | × kubectl | requests | reads / writes "
        "| by verb | Events (after the call) | Events out after s |"
    )
    print("|---:|---|---|---:|---:|---:|---|---|---:|---:|")
    for r in rows:
        k: Run | None = r["kubectl"]
        for config in CONFIGS:
            c: Run = r["runs"][config.label]
            ratio = f"{c.s / k.s:.2f}" if k is not None else "-"
            print(
                f"| {r['objects']} | {config.label} | {config.limits} | {c.s:.2f} | {ratio} | "
                f"{c.reads + c.writes} | {c.reads} / {c.writes} | {fmt_verbs(c.by_verb)} | {c.events} | "
                f"{statistics.median(c.drained):.2f} |"
            )
        if k is not None:
            k_reads = sum(n for v, n in k.by_verb.items() if v in READ_VERBS)
            total = sum(k.by_verb.values())
            print(
                f"| {r['objects']} | kubectl apply --server-side | none on object requests (discovery 50/300) | "
                f"{k.s:.2f} | 1.00 | {total} | {k_reads} / {total - k_reads} | {fmt_verbs(k.by_verb)} | - | - |"
            )
    print()
    if kubectl_rates:
        print(
            f"kubectl's request rate after its first 300 requests (audit log, 500-object runs): "
            f"{min(kubectl_rates):.0f}–{max(kubectl_rates):.0f} req/s; a shared 50 qps / 300 burst bucket "
            "would cap it at 50, so kubectl paces object requests with no shared client-side limit."
        )
        print()
    print("No-op reconcile once everything is Ready (operator defaults; target: 0 writes, reads <= pairs):")
    print()
    print("| objects | (type, namespace) pairs | reads | writes | by verb | ms | returned |")
    print("|---:|---:|---:|---:|---|---:|---|")
    for r in rows:
        print(
            f"| {r['objects']} | {r['pairs']} | {r['noop_reads']} | {r['noop_writes']} | "
            f"{fmt_verbs(r['noop_by_verb'])} | {r['noop_s'] * 1000:.0f} | {r['noop_done']} |"
        )
    print()
    print("Audit-log cross-check of the reconciler's requests (Events included, after they were all out):")
    for r in rows:
        for config in CONFIGS:
            c = r["runs"][config.label]
            print(f"  {r['objects']:>4} objects, {config.label}: {fmt_verbs(c.audit)}")


if __name__ == "__main__":
    main()
