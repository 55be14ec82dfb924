"""Run every benchmark on the local control plane and collect the figures (issue 9).

Writes ``bench/results/results.json``; ``bench/report.py`` renders it into
``bench/results/REPORT.md`` and the PNG plots. ``make bench`` runs both.

Steps (``--only`` picks some, comma-separated):

- ``machine``    — machine facts: cores, memory, load, versions, git commit (always collected);
- ``transform``  — ``bench_transform.py --json`` (every run of its best-of-9 loop is kept);
- ``definitions`` — ``bench_definitions.py --json``: one component and 1,000 rendered through a
  ComponentDefinition against the same objects through the built-in ``passthrough`` (best of 9,
  pure Python, no cluster; docs/definitions.md);
- ``reconciler`` — ``bench_reconciler.py`` ``--repeat`` times, each on a fresh minimal control plane
  with audit logging: first apply of 50/200/500 objects by our reconciler and by
  ``kubectl apply --server-side``, and the no-op reconcile. The script belongs to another
  engineer and changes, so the runner is tolerant: it passes ``--json FILE`` when the script
  knows that option and understands the JSON if it is the script's row list; otherwise (or if
  the JSON has another shape) it parses the tables the script prints. The raw output is kept;
- ``kubectl-noop`` — kubectl's counterpart of the no-op reconcile: on a minimal control plane with
  audit logging, ``kubectl apply --server-side`` of the object sets of ``bench_reconciler.py``
  (its ``objects_for``), then the same apply again, unchanged, ``--repeat`` times; wall time and
  requests of the repeated applies from the audit log by user agent;
- ``peer``       — ``bench_peers.py --json``: ours (operator defaults and no limit), kubectl,
  component-operator-runtime and fluxcd/pkg/ssa (the Go drivers in ``bench/peer/``, built from
  Go modules) side by side on one audited control plane in one run;
- ``operator``   — ``bench_operator.py --json`` ``--repeat`` times: 200 Applications × 10 objects
  to Ready on the full control plane, operator peak RSS, requests per Application, steady state;
- ``scale``      — ``bench_operator.py --audit`` once per fleet size of ``--scale`` (default 200 and
  1,000 Applications × 10 objects, and 5,000 × 4 across 2 shards): time to Ready, requests (the
  operator's count and the audit log's, kopf's included), peak RSS, steady state, as they grow;
  the report's growth section (4d, with a plot) takes the one-shard sizes of one object count, at
  least three (``--scale 1000/4,5000/4,10000/4`` with ``--floor`` the same for its ideal);
- ``floor``      — ``bench_fleet_floor.py --audit --json`` per size of ``--floor`` (default 200 and
  1,000 × 10, 5,000 × 4): the same objects applied with no operator — by kubectl (4 processes),
  then by the reconciler library alone (``--client reconciler --parallel 10``) — until every
  Deployment is Available: what the control plane itself needs on this machine, the yardstick
  of the ``scale`` step (audited like it, so both pay the same audit cost); and once more with
  ``--with-applications``: the Applications created and each one's own writes made (finalizer,
  two status writes, an Event), the floor of an operator that did no work of its own;
- ``inventory``  — ``bench_operator.py --apps 1 --objects 10000 --per-component 100 --server-side
  --no-data --skip-steady --json``: 10,000 objects in one Application to Ready, and the JSON size
  of the status the operator persisted, bytes per object (100 ``manifests`` components: the CRD
  allows at most 1,000 components), read back from the API server;
- ``fairness``   — ``bench_fairness.py --json``: a healthy Application's time to Ready in its own
  namespace alone and under a flood of ``--fairness-flood`` Applications in another namespace (one
  failing, one changing its spec every second), the flood's requests, the failing and flapping
  ones' passes (docs/operator.md#fair-queues);
- ``ui``         — ``bench_ui.py --json``: ``oam-operator ui`` in Chromium with 1,000 Applications:
  the list rendered after navigation, a 500-object tree, the UI process's RSS, its API requests
  before and after 100 Applications change;
- ``multicluster`` — ``bench_multicluster.py --json``: ``--multicluster-spokes`` ×
  ``--multicluster-apps`` Applications on the hub, then spread over that many minimal spokes:
  time to Ready, requests and writes per Application, steady requests per Application and
  minute, peak RSS (docs/multicluster.md#measured);
- ``topology`` — ``bench_topology.py --json``: one Application of 10 ConfigMaps to one spoke by
  ``profile:``, then to 1, 4 and 8 spokes by a topology policy, then 300 Applications × 3 spokes:
  time to Ready, the operator's requests per cluster, the largest hub status
  (docs/multicluster.md#measured-fleet-delivery);
- ``notifications`` — ``bench_notifications.py --episodes 50 --json``: the delay from an Application's
  state change to the receiver's arrival of the message (p50/p90/p99/max), 50 failure episodes
  (docs/notifications.md#measured);
- ``urlsource`` — ``bench_url_source.py --json``: a 4.5 MB ``manifests`` URL source served on
  127.0.0.1, the operator's transform of it pass after pass, without the URL-source cache
  (before) and with it (a server with an ETag, and one without validators): CPU and wall seconds
  per pass, RSS after each pass, peak, after the Application is forgotten
  (docs/operator.md#url-sources-are-cached); then the whole operator, before (the commit issue 37
  measured, exported with ``git archive``) and after, on a fresh minimal control plane: the
  Application to Ready, ``--url-source-operator-passes`` passes at its 30 s interval, the
  operator's CPU per pass and RSS, and its RSS after the Application is deleted.
- ``restart`` — ``bench_restart.py --json`` per size of ``--restart`` (default 1,000 × 10): the
  operator killed while it holds that many Ready Applications and started again; its writes and
  reads in its first ``--restart-observe`` seconds (60) by the audit log, a new and a changed
  Application written as it starts and their time to Ready (the changed one against the same
  change on the warm operator), its CPU in the last 30 of those seconds
  (docs/operator.md#a-quiet-restart).

Nothing is estimated: every figure in results.json was measured in this run; a failed step is
recorded with its error and exit code instead of figures. Exit status 1 if any step failed.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
LOGS = RESULTS / "logs"
STEPS = ("transform", "reconciler", "kubectl-noop", "peer", "operator", "scale", "floor", "inventory", "fairness",
         "ui", "multicluster", "topology", "urlsource", "notifications", "definitions", "restart")

sys.path.insert(0, str(ROOT))


# -- helpers ------------------------------------------------------------------------------------


def _run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _first_line(cmd: list[str]) -> str | None:
    try:
        result = _run(cmd, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (result.stdout or result.stderr).strip()
    return text.splitlines()[0] if result.returncode == 0 and text else None


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _log(message: str) -> None:
    print(f"[bench] {message}", flush=True)


def _run_script(name: str, args: list[str], log_name: str, timeout: float,
                env: dict[str, str] | None = None, unset: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run ``bench/<name>`` with this interpreter; returns exit code, output, wall time, load."""
    LOGS.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(BENCH / name), *args]
    _log("$ " + " ".join([*(f"{k}={v}" for k, v in (env or {}).items()), *cmd[1:]]))
    load_before = _loadavg()
    started = time.perf_counter()
    try:
        child_env = {k: v for k, v in os.environ.items() if k not in unset}
        result = _run(cmd, cwd=ROOT, timeout=timeout, env={**child_env, **(env or {})})
        code, out, err = result.returncode, result.stdout, result.stderr
    except subprocess.TimeoutExpired as expired:
        code = -1
        out = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        err = (expired.stderr.decode() if isinstance(expired.stderr, bytes) else (expired.stderr or "")) + (
            f"\n[bench] timed out after {timeout:.0f} s"
        )
    wall = time.perf_counter() - started
    (LOGS / f"{log_name}.log").write_text(f"$ {' '.join(cmd)}\n--- stdout\n{out}\n--- stderr\n{err}")
    _log(f"  exit {code} after {wall:.0f} s (log bench/results/logs/{log_name}.log)")
    return {"exit_code": code, "stdout": out, "stderr_tail": err[-3000:], "wall_s": round(wall, 2),
            "load_before": load_before, "load_after": _loadavg()}


# -- machine facts ------------------------------------------------------------------------------


def machine_facts() -> dict[str, Any]:
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    mem_kib = re.search(r"MemTotal:\s+(\d+) kB", meminfo)
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    packages: dict[str, str] = {}
    for dist in ("kopf", "kubernetes", "pydantic", "matplotlib"):
        try:
            packages[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            packages[dist] = "not installed"
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    status = _run(["git", "-C", str(ROOT), "status", "--porcelain"]).stdout.splitlines()
    devcluster: dict[str, str] = {}
    kubectl_version = None
    try:
        from tools.devcluster import devcluster as dc

        binaries = dc.find_binaries()
        devcluster = {k: v for k, v in binaries.versions.items() if isinstance(v, str)}
        if binaries.kubectl is not None:
            kubectl_version = _first_line([str(binaries.kubectl), "version", "--client"])
    except Exception as error:  # the report says what went wrong; the benchmarks will fail loudly anyway
        devcluster = {"error": str(error)}
    return {
        "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "hostname_platform": platform.platform(),
        "nproc": os.cpu_count(),
        "cpu_model": model.group(1).strip() if model else None,
        "memory_gib": round(int(mem_kib.group(1)) / 1024 / 1024, 1) if mem_kib else None,
        "loadavg_at_start": _loadavg(),
        "python": platform.python_version(),
        "packages": packages,
        "go": _first_line(["go", "version"]),
        "devcluster_versions": devcluster,
        "kubectl": kubectl_version,
        "git_commit": commit,
        "git_dirty_files": len(status),
        "bench_scripts_sha256": {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in sorted(BENCH.glob("bench_*.py"))
        },
    }


# -- transform ----------------------------------------------------------------------------------


def step_transform(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "transform.json"
        run = _run_script("bench_transform.py", ["--json", str(out)], "transform", timeout=1800)
        data = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "figures": data, "ok": run["exit_code"] == 0 and data is not None}


# -- reconciler ---------------------------------------------------------------------------------

_NUM = r"[-+]?\d+(?:\.\d+)?|nan"


def _number(text: str) -> float | None:
    text = text.strip()
    try:
        value = float(text)
    except ValueError:
        return None
    return None if value != value else value  # NaN → None


def _cells(line: str) -> list[str]:
    parts = [p.strip() for p in line.strip().split("|")]
    if parts and parts[0] == "":
        parts = parts[1:]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    return parts


def _literal_dict(text: str) -> dict[str, int]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {}
    return {str(k): int(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _new_row(count: int) -> dict[str, Any]:
    return {"objects": count, "configs": {}, "kubectl": {}, "noop": {}}


def _verb_counts(text: str) -> dict[str, int]:
    """``{'get': 3, 'patch': 50}`` or ``get 3, patch 50`` → a dict; ``-`` → empty."""
    text = text.strip()
    if text.startswith("{"):
        return _literal_dict(text)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"([A-Za-z_-]+) (\d+)", text)}


def _table_blocks(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(the last non-table line before it, header cells, body rows) of every pipe table."""
    blocks: list[tuple[str, list[str], list[list[str]]]] = []
    context = ""
    current: tuple[str, list[str], list[list[str]]] | None = None
    for line in text.splitlines():
        if "|" in line and line.count("|") >= 2:
            cells = _cells(line)
            if all(re.fullmatch(r":?-+:?", c) for c in cells if c) or set(line.strip()) <= set("-|: "):
                continue  # Markdown separator
            if current is None:
                current = (context, [c.lower() for c in cells], [])
                blocks.append(current)
            else:
                current[2].append(cells)
        elif line.strip() and set(line.strip()) <= set("-="):
            continue  # the rule under a fixed-width header
        else:
            current = None
            if line.strip():
                context = line.strip()
    return blocks


def parse_reconciler_output(text: str) -> list[dict[str, Any]]:
    """The rows of bench_reconciler.py's printed tables, normalised (see ``normalise_row``).

    Tolerant of the formats that script has printed: pipe tables (fixed-width or Markdown) whose
    first column is the object count, either *long* (a ``configuration`` column; a row whose
    configuration starts with ``kubectl`` is kubectl's) or *wide* (``<label> s`` followed by a
    requests column per configuration, then ``kubectl s`` and ``kubectl requests``); a no-op
    table (a ``pairs`` or ``returned`` column) or no-op lines; and per-configuration verb lines
    (``<n> objects, <label>: …``), read as the audit log's counts when the script says so.
    """
    rows: dict[int, dict[str, Any]] = {}

    def row_for(count: int) -> dict[str, Any]:
        return rows.setdefault(count, _new_row(count))

    for context, header, body in _table_blocks(text):
        if not header or header[0].strip("* ") != "objects":
            continue
        is_noop = any("pairs" in h or "returned" in h for h in header) or "no-op" in context.lower()
        for cells in body:
            if not cells or not re.fullmatch(r"\d+", cells[0].replace(",", "")):
                continue
            row = row_for(int(cells[0].replace(",", "")))
            pairs = list(zip(header, cells, strict=False))  # header names may repeat (wide format)
            named = dict(pairs)
            if is_noop:
                noop: dict[str, Any] = {}
                for name, cell in named.items():
                    if "pairs" in name:
                        row["pairs"] = int(_number(cell) or 0)
                    elif name == "reads":
                        noop["reads"] = int(_number(cell) or 0)
                    elif name == "writes":
                        noop["writes"] = int(_number(cell) or 0)
                    elif "verb" in name or "kind" in name:
                        noop["by_verb"] = _verb_counts(cell)
                    elif name == "ms":
                        noop["ms"] = _number(cell)
                    elif "returned" in name:
                        noop["done"] = cell.strip() == "True"
                row["noop"] = noop
            elif "configuration" in header:
                label = named.get("configuration", "").strip().lower()
                target: dict[str, Any] = row["kubectl"] if label.startswith("kubectl") else (
                    row["configs"].setdefault(label, {}))
                for name, cell in named.items():
                    if name.startswith("events out") or name.startswith("×"):
                        continue
                    if "limit" in name:
                        target["limits"] = cell.strip()
                        continue
                    if name.startswith("events"):
                        target["events"] = _number(cell)
                    elif name.endswith(" s") or name == "s":
                        target["s"] = _number(cell)
                    elif name == "requests":
                        target["requests"] = _number(cell)
                    elif re.fullmatch(r"reads\s*/\s*writes", name):
                        m = re.match(r"(\d+)\s*/\s*(\d+)", cell)
                        if m:
                            target["reads"], target["writes"] = int(m.group(1)), int(m.group(2))
                    elif "verb" in name:
                        target["by_verb"] = _verb_counts(cell)
            else:
                label_: str | None = None
                for name, cell in pairs[1:]:
                    if re.fullmatch(r"kubectl (s|\(s\)|time.*|seconds.*|wall.*)", name):
                        row["kubectl"]["s"] = _number(cell)
                    elif re.fullmatch(r"kubectl requests.*", name):
                        row["kubectl"]["requests"] = _number(cell.split()[0]) if cell.split() else None
                    elif name.endswith(" s"):
                        label_ = name[:-2].strip()
                        row["configs"].setdefault(label_, {})["s"] = _number(cell)
                    elif "request" in name and label_ is not None:
                        m = re.match(r"(\d+)(?:\s*\((\d+)/(\d+)\))?", cell)
                        if m:
                            cfg = row["configs"][label_]
                            cfg["requests"] = int(m.group(1))
                            if m.group(2):
                                cfg["reads"], cfg["writes"] = int(m.group(2)), int(m.group(3))
    noop_line = re.compile(
        r"(\d+) objects: reads (\d+), writes (\d+), \(type, namespace\) pairs (\d+), (\{.*?\}), "
        rf"({_NUM}) ms, returned (\w+)"
    )
    verbs = re.compile(r"^\s*(\d+) objects, (.*)$")
    tail = re.compile(r"^(.*?)(?:, audit log (\d+))?(?: \(counted from ([^)]+)\))?\s*$")
    audit_section = False
    for line in text.splitlines():
        if "|" in line:
            continue
        if "audit" in line.lower() and line.rstrip().endswith(":"):
            audit_section = True  # "Audit-log cross-check …:" — the verb lines below are audit counts
            continue
        m = noop_line.search(line)
        if m:
            row = row_for(int(m.group(1)))
            row["pairs"] = int(m.group(4))
            row["noop"] = {"reads": int(m.group(2)), "writes": int(m.group(3)), "by_verb": _literal_dict(m.group(5)),
                           "ms": _number(m.group(6)), "done": m.group(7) == "True"}
            continue
        m = verbs.match(line)
        if not m or int(m.group(1)) not in rows:
            continue
        row, rest = rows[int(m.group(1))], m.group(2)
        # Labels may contain ": " themselves; match the known ones, longest first.
        candidates: list[str] = sorted([*row["configs"], "kubectl"], key=len, reverse=True)
        found = next((name for name in candidates if rest.lower().startswith(name + ": ")), None)
        if found is None:
            continue
        label = found
        t = tail.match(rest[len(label) + 2:])
        assert t is not None  # the pattern matches any string
        counts = _verb_counts(t.group(1)) if t.group(1).strip() != "-" else {}
        if label == "kubectl":
            row["kubectl"].setdefault("by_verb", counts)
            if t.group(3):
                row["kubectl"]["source"] = t.group(3)
        else:
            cfg = row["configs"][label]
            if audit_section:
                cfg["audit_by_verb"] = counts
                cfg["audit"] = sum(counts.values())
            else:
                cfg["by_verb"] = counts
                if t.group(2):
                    cfg["audit"] = int(t.group(2))
    for row in rows.values():
        kubectl = row["kubectl"]
        if kubectl.get("requests") is None and kubectl.get("by_verb"):
            kubectl["requests"] = sum(kubectl["by_verb"].values())
        kubectl.setdefault("source", "audit")  # the script has always counted kubectl from the audit log
    return [rows[k] for k in sorted(rows)]


def normalise_row(raw: dict[str, Any]) -> dict[str, Any]:
    """One row of the script's own ``rows`` list (its JSON, if it writes one) → our shape:
    ``{objects, pairs, configs: {label: {s, requests, reads, writes, audit, by_verb}},
    kubectl: {s, requests, source, by_verb}, noop: {reads, writes, by_verb, ms, done}}``."""
    configs = {
        str(label).lower(): {k: v for k, v in value.items() if k in ("s", "requests", "reads", "writes", "audit",
                                                                     "by_verb", "calls")}
        for label, value in raw.items()
        if isinstance(value, dict) and "s" in value and "requests" in value
    }
    if not configs or "objects" not in raw:
        raise ValueError("not a bench_reconciler row")
    noop_s = raw.get("noop_s")
    return {
        "objects": int(raw["objects"]),
        "pairs": raw.get("pairs"),
        "configs": configs,
        "kubectl": {"s": raw.get("kubectl_s"), "requests": raw.get("kubectl_requests"),
                    "source": raw.get("kubectl_requests_source"), "by_verb": raw.get("kubectl_by_verb") or {}},
        "noop": {"reads": raw.get("noop_reads"), "writes": raw.get("noop_writes"),
                 "by_verb": raw.get("noop_by_verb") or {}, "ms": noop_s * 1000 if isinstance(noop_s, float) else None,
                 "done": raw.get("noop_done")},
    }


def _rows_from_json(data: Any) -> list[dict[str, Any]]:
    rows = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise ValueError("no row list")
    return [normalise_row(r) for r in rows]


def step_reconciler(args: argparse.Namespace) -> dict[str, Any]:
    script = BENCH / "bench_reconciler.py"
    supports_json = "--json" in script.read_text()
    env_note = ("run with BENCH_REPEATS=1 (one measurement per configuration and size per run; the runner "
                "repeats the whole script) and KUBECONFIG unset (the script starts its own minimal control plane "
                "with audit logging)")
    runs: list[dict[str, Any]] = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "reconciler.json"
            extra = ["--json", str(out)] if supports_json else []
            run = _run_script("bench_reconciler.py", extra, f"reconciler-{i + 1}", timeout=3600,
                              env={"BENCH_REPEATS": "1"}, unset=("KUBECONFIG",))
            rows: list[dict[str, Any]] = []
            source = "stdout"
            if supports_json and out.exists():
                try:
                    rows, source = _rows_from_json(json.loads(out.read_text())), "json"
                except (ValueError, KeyError, TypeError) as error:
                    run["json_error"] = f"--json output not understood ({error}); parsed the printed tables instead"
            if not rows:
                rows = parse_reconciler_output(run["stdout"])
        run["rows"], run["source"] = rows, source
        runs.append(run)
    ok = all(r["exit_code"] == 0 and r["rows"] for r in runs)
    return {"runs": runs, "ok": ok, "supports_json": supports_json, "note": env_note}


# -- kubectl's no-op ---------------------------------------------------------------------------


def _audit_counts(audit: Path, offset: int, agent_prefix: str) -> dict[str, int]:
    """Requests per verb (ResponseComplete audit events) after ``offset`` by user agents with a prefix."""
    counts: dict[str, int] = {}
    with audit.open("rb") as f:
        f.seek(offset)
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("stage") == "ResponseComplete" and str(event.get("userAgent", "")).startswith(agent_prefix):
                counts[event["verb"]] = counts.get(event["verb"], 0) + 1
    return counts


def step_kubectl_noop(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH))
    import bench_reconciler  # the object sets are that benchmark's, whatever it currently generates

    from tools.devcluster import devcluster as dc

    objects_for: Callable[[int], list[dict[str, Any]]] = bench_reconciler.objects_for
    sizes = tuple(getattr(bench_reconciler, "SIZES", (50, 200, 500)))
    kubectl = dc.find_binaries().kubectl
    if kubectl is None:
        raise RuntimeError("kubectl is not built (tools/devcluster/build.sh)")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, dc.start("minimal", audit=True) as plane:
        audit = plane.run_dir / "logs" / "audit.log"
        base = [str(kubectl), "--kubeconfig", plane.handle.kubeconfig, "--cache-dir", str(Path(tmp) / "cache")]

        def kubectl_run(*argv: str) -> float:
            started = time.perf_counter()
            result = _run([*base, *argv], timeout=600)
            if result.returncode != 0:
                raise RuntimeError(f"kubectl {' '.join(argv)} failed: {result.stderr[-2000:]}")
            return time.perf_counter() - started

        for count in sizes:
            namespace = f"bench-kubectl-noop-{count}"
            kubectl_run("create", "namespace", namespace)
            manifest = Path(tmp) / f"objects-{count}.json"
            manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects_for(count)}))
            apply = ("apply", "--server-side", "--field-manager=bench-kubectl", "-n", namespace, "-f", str(manifest))
            kubectl_run(*apply)  # the first apply; its discovery fills the cache the repeats use
            repeats: list[dict[str, Any]] = []
            for _ in range(args.repeat):
                time.sleep(0.5)  # the audit log is written as responses complete; settle before the offset
                offset = audit.stat().st_size if audit.exists() else 0
                seconds = kubectl_run(*apply)
                time.sleep(0.5)
                verbs = _audit_counts(audit, offset, "kubectl")
                repeats.append({"s": round(seconds, 3), "requests": sum(verbs.values()), "by_verb": verbs})
            rows.append({"objects": count, "repeats": repeats})
    return {"ok": True, "rows": rows, "audit": True,
            "note": "kubectl apply --server-side of the unchanged set, warm discovery cache (as a running reconciler "
                    "has), counted from the audit log by user agent"}


# -- peer ---------------------------------------------------------------------------------------


def step_peer(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_peers.py``: ours, kubectl, component-operator-runtime and fluxcd/pkg/ssa on one
    audited control plane in one run (the drivers in ``bench/peer/`` are built from Go modules)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peers.json"
        run = _run_script("bench_peers.py", ["--repeats", str(args.peer_repeats), "--json", str(out)], "peers",
                          timeout=3600, unset=("KUBECONFIG",))
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "ok": bool(run["figures"]) and run["exit_code"] == 0}


# -- operator and inventory ---------------------------------------------------------------------


def _operator_runs(args: list[str], repeat: int, name: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    for i in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "operator.json"
            run = _run_script("bench_operator.py", [*args, "--json", str(out)], f"{name}-{i + 1}", timeout=3600)
            run["figures"] = json.loads(out.read_text()) if out.exists() else None
        runs.append(run)
    return runs


def step_operator(args: argparse.Namespace) -> dict[str, Any]:
    runs = _operator_runs(["--apps", str(args.apps), "--objects", str(args.objects)], args.repeat, "operator")
    return {"runs": runs, "ok": all(r["figures"] and r["exit_code"] == 0 for r in runs)}


def fleet_spec(spec: str, objects: int) -> tuple[int, int, int]:
    """``APPS[xSHARDS][/OBJECTS]`` (e.g. ``5000x2/4``) as (apps, shards, objects per Application)."""
    size, _, per_app = spec.strip().partition("/")
    apps, _, shards = size.partition("x")
    return int(apps), int(shards or 1), int(per_app or objects)


def step_scale(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_operator.py --audit`` once per fleet size of ``--scale`` (``APPS[xSHARDS][/OBJECTS]``)."""
    # With --merge, runs of other fleet sizes from the results file stay (so sizes can be run
    # one invocation at a time); a size run again replaces its old run.
    specs = [fleet_spec(spec, args.objects) for spec in args.scale.split(",") if spec.strip()]
    runs: list[dict[str, Any]] = [
        run for run in getattr(args, "previous_scale", [])
        if (run.get("figures") or {}).get("apps") is not None
        and ((run["figures"]["apps"], run["figures"].get("shards", 1), run["figures"].get("objects", 10))
             not in specs)]
    for apps, shards, objects in specs:
        extra = ["--apps", str(apps), "--objects", str(objects), "--shards", str(shards), "--audit",
                 "--timeout", str(args.scale_timeout), "--settle-timeout", "60", "--interval", args.scale_interval]
        runs.extend(_operator_runs(extra, 1, f"scale-{apps}x{shards}-{objects}objects"))
    runs.sort(key=lambda run: ((run.get("figures") or {}).get("apps", 0), (run.get("figures") or {}).get("shards", 1)))
    return {"runs": runs, "ok": all(r["figures"] and r["exit_code"] == 0 for r in runs)}


def step_floor(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_fleet_floor.py``: the fleet's objects applied with no operator, by kubectl and by
    the reconciler library alone (the yardsticks), each on a fresh control plane."""
    clients = {"kubectl": ("kubectl", 4, []), "reconciler": ("reconciler", 10, []),
               "ideal": ("reconciler", 10, ["--with-applications"])}
    chosen = [clients[name.strip()] for name in args.floor_clients.split(",") if name.strip()]
    sizes = [fleet_spec(spec, args.objects) for spec in args.floor.split(",") if spec.strip()]
    rerun = {(client, bool(extra), apps, objects) for apps, _, objects in sizes for client, _, extra in chosen}

    def key(run: dict[str, Any]) -> tuple[Any, ...]:
        f = run.get("figures") or {}
        return f.get("client"), bool(f.get("with_applications")), f.get("apps"), f.get("objects")

    # With --merge, the runs of other sizes and clients from the results file stay (as in step_scale).
    runs = [run for run in getattr(args, "previous_floor", []) if run.get("figures") and key(run) not in rerun]
    for apps, _, objects in sizes:
        for client, parallel, extra in chosen:
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "floor.json"
                name = f"floor-{client}{'-apps' if extra else ''}-{apps}x{objects}"
                run = _run_script("bench_fleet_floor.py", [
                    "--apps", str(apps), "--objects", str(objects), "--client", client, "--parallel", str(parallel),
                    *extra, "--audit", "--json", str(out)], name, timeout=1800)
                run["figures"] = json.loads(out.read_text()) if out.exists() else None
            runs.append(run)
    return {"runs": runs, "ok": all(r["figures"] and r["exit_code"] == 0 for r in runs)}


def step_inventory(args: argparse.Namespace) -> dict[str, Any]:
    per_component = 100
    runs = _operator_runs(["--apps", "1", "--objects", str(args.inventory_objects), "--per-component",
                           str(per_component), "--server-side", "--no-data", "--skip-steady",
                           "--operator-arg=--no-dependent-events"], 1, "inventory")
    return {
        "runs": runs,
        "ok": all(r["figures"] and r["exit_code"] == 0 for r in runs),
        "method": (
            "the operator (a real process, `oam-operator run`, on a fresh full control plane) reconciles one "
            f"Application of {args.inventory_objects:,} ConfigMaps to Ready: "
            f"{-(-args.inventory_objects // per_component)} `manifests` components of {per_component} inline "
            "documents each (ConfigMaps without data; the CRD allows at most 1,000 components, so one passthrough "
            "component per object cannot reach that many), created with `kubectl apply --server-side`, Events on "
            "the created objects off. The Application is then read back from the API server (LIST) and the "
            "compact JSON encoding (no spaces, UTF-8) of `.status`, of the persisted inventory "
            "(`.status.compactInventory`) and of the whole object is measured in bytes. This is the status "
            "exactly as persisted, not a recomputation"
        ),
    }


def step_fairness(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_fairness.py``: one healthy Application alone and under another namespace's flood."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fairness.json"
        run = _run_script("bench_fairness.py", ["--flood", str(args.fairness_flood), "--json", str(out)], "fairness",
                          timeout=3600)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    run["ok"] = bool(run["figures"]) and run["exit_code"] == 0
    return run


def step_ui(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ui.json"
        run = _run_script("bench_ui.py", ["--json", str(out)], "ui", timeout=1800)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "ok": bool(run["figures"]) and run["exit_code"] == 0}


def step_multicluster(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_multicluster.py``: one fleet on the hub, then the same spread over remote clusters."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "multicluster.json"
        run = _run_script("bench_multicluster.py", ["--spokes", str(args.multicluster_spokes), "--apps",
                                                    str(args.multicluster_apps), "--json", str(out)],
                          "multicluster", timeout=3600)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "ok": bool(run["figures"]) and run["exit_code"] == 0}


def step_topology(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_topology.py``: one Application to 1, 4 and 8 spokes through a topology policy, then a fleet."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "topology.json"
        run = _run_script("bench_topology.py", ["--json", str(out)], "topology", timeout=3600)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "ok": bool(run["figures"]) and run["exit_code"] == 0}


def step_urlsource(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_url_source.py``: a 4.5 MB URL source pass after pass, before and after the cache."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "urlsource.json"
        run = _run_script("bench_url_source.py", ["--passes", str(args.url_source_passes), "--operator-passes",
                                                  str(args.url_source_operator_passes), "--json", str(out)],
                          "urlsource", timeout=3600)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    run["ok"] = bool(run["figures"]) and run["exit_code"] == 0
    return run


def step_notifications(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_notifications.py``: delay from a state change to the message, over 50 failure episodes."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "notifications.json"
        run = _run_script("bench_notifications.py", ["--episodes", "50", "--json", str(out)], "notifications",
                          timeout=1800)
        run["figures"] = json.loads(out.read_text()) if out.exists() else None
    run["ok"] = bool(run["figures"]) and run["exit_code"] == 0
    return run


def step_definitions(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "definitions.json"
        run = _run_script("bench_definitions.py", ["--json", str(out)], "definitions", timeout=1800)
        data = json.loads(out.read_text()) if out.exists() else None
    return {"runs": [run], "figures": data, "ok": run["exit_code"] == 0 and data is not None}


def step_restart(args: argparse.Namespace) -> dict[str, Any]:
    """``bench_restart.py``: a quiet restart in front of each fleet size of ``--restart``."""
    runs = []
    for spec in args.restart.split(","):
        if not spec.strip():
            continue
        apps, _, objects = fleet_spec(spec, args.objects)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "restart.json"
            run = _run_script("bench_restart.py", ["--apps", str(apps), "--objects", str(objects),
                                                   "--observe", str(args.restart_observe), "--json", str(out)],
                              f"restart-{apps}x{objects}", timeout=5400)
            run["figures"] = json.loads(out.read_text()) if out.exists() else None
        runs.append(run)
    return {"runs": runs, "ok": all(r["figures"] and r["exit_code"] == 0 for r in runs)}


STEP_FUNCS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "definitions": step_definitions,
    "transform": step_transform,
    "reconciler": step_reconciler,
    "kubectl-noop": step_kubectl_noop,
    "peer": step_peer,
    "operator": step_operator,
    "scale": step_scale,
    "floor": step_floor,
    "inventory": step_inventory,
    "fairness": step_fairness,
    "ui": step_ui,
    "multicluster": step_multicluster,
    "topology": step_topology,
    "urlsource": step_urlsource,
    "notifications": step_notifications,
    "restart": step_restart,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", default=",".join(STEPS), help=f"comma-separated steps out of {', '.join(STEPS)}")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of the reconciler and operator benchmarks")
    parser.add_argument("--scale", default="200,1000,5000x2/4",
                        help="fleet sizes of the scale step: APPS[xSHARDS][/OBJECTS], comma-separated")
    parser.add_argument("--floor", default="200,1000,5000/4",
                        help="fleet sizes of the floor step: APPS[/OBJECTS], comma-separated")
    parser.add_argument("--floor-clients", default="kubectl,reconciler,ideal",
                        help="the floor step's clients, comma-separated: kubectl, reconciler (the library alone), "
                             "ideal (the library with each Application's own writes, --with-applications)")
    parser.add_argument("--scale-interval", default="30s",
                        help="the operator's --default-interval in the scale step (its own default: 10m)")
    parser.add_argument("--restart", default="1000/10",
                        help="fleet sizes of the restart step: APPS[/OBJECTS], comma-separated (e.g. 10000/4)")
    parser.add_argument("--restart-observe", type=float, default=60,
                        help="seconds of the restarted operator's requests counted (its idle CPU: the last 30)")
    parser.add_argument("--scale-timeout", type=float, default=600, help="longest wait for Ready per scale run")
    parser.add_argument("--peer-repeats", type=int, default=1, help="repetitions inside the peer benchmark")
    parser.add_argument("--apps", type=int, default=200, help="Applications in the operator benchmark")
    parser.add_argument("--objects", type=int, default=10, help="objects per Application in the operator benchmark")
    parser.add_argument("--inventory-objects", type=int, default=10000,
                        help="objects of the inventory-size Application")
    parser.add_argument("--fairness-flood", type=int, default=200,
                        help="Applications of the fairness benchmark's flood")
    parser.add_argument("--multicluster-spokes", type=int, default=3, help="remote clusters of the multicluster step")
    parser.add_argument("--multicluster-apps", type=int, default=100,
                        help="Applications per remote cluster in the multicluster step")
    parser.add_argument("--url-source-passes", type=int, default=8,
                        help="passes per mode of the URL-source step's transform")
    parser.add_argument("--url-source-operator-passes", type=int, default=3,
                        help="passes at the 30 s interval of the URL-source step's whole operator, before and after")
    parser.add_argument("--out", type=Path, default=RESULTS / "results.json")
    parser.add_argument("--merge", action="store_true",
                        help="keep the steps of an existing results file that this run does not repeat")
    args = parser.parse_args()
    steps = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown step(s): {', '.join(unknown)}")

    results: dict[str, Any] = {"steps": {}}
    if args.merge and args.out.exists():
        results = json.loads(args.out.read_text())
    args.previous_scale = (results.get("steps", {}).get("scale") or {}).get("runs", [])
    args.previous_floor = (results.get("steps", {}).get("floor") or {}).get("runs", [])
    results["machine"] = machine_facts()
    results["config"] = {"repeat": args.repeat, "apps": args.apps, "objects": args.objects,
                         "inventory_objects": args.inventory_objects}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    for step in STEPS:
        if step not in steps:
            continue
        _log(f"== {step}")
        started = time.perf_counter()
        try:
            outcome = STEP_FUNCS[step](args)
        except Exception as error:  # recorded, not hidden: the report shows the failure
            outcome = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        outcome["step_wall_s"] = round(time.perf_counter() - started, 1)
        outcome["date_utc"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        outcome["git_commit"] = results["machine"].get("git_commit")  # --merge keeps steps of other runs
        results["steps"][step] = outcome
        if not outcome.get("ok") and step != "peer":
            failed.append(step)
        results["machine"]["loadavg_at_end"] = _loadavg()
        tmp = args.out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1) + "\n")
        tmp.replace(args.out)
    _log(f"results in {args.out}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
