"""Render bench/results/results.json (written by bench/run_all.py) into REPORT.md and PNG plots.

Usage: ``python bench/report.py [--results FILE] [--out DIR]``. Reads only the results file:
every figure in the report is one that run_all.py measured; a step that did not run or failed
is reported as such, never filled in.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
MIB = 1024 * 1024


# -- small helpers --------------------------------------------------------------------------------


def _values(items: Iterable[Any]) -> list[float]:
    return [float(v) for v in items if isinstance(v, int | float) and v == v]


def median(items: Iterable[Any]) -> float | None:
    values = _values(items)
    return statistics.median(values) if values else None


def best(items: Iterable[Any]) -> float | None:
    values = _values(items)
    return min(values) if values else None


def fmt(value: float | None, digits: int = 2, unit: str = "") -> str:
    if value is None:
        return "—"
    if digits == 0:
        return f"{value:,.0f}{unit}"
    return f"{value:,.{digits}f}{unit}"


def ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs == 0:
        return "—"
    if ours == 0:
        return "0×"
    if ours / theirs < 0.1:
        return f"1/{theirs / ours:,.0f}"
    return f"{ours / theirs:.2f}×"


def spread(items: Sequence[Any], digits: int = 2) -> str:
    """``median (best … worst, n runs)``."""
    values = _values(items)
    if not values:
        return "—"
    if len(values) == 1:
        return fmt(values[0], digits)
    return f"{fmt(statistics.median(values), digits)} ({fmt(min(values), digits)} … {fmt(max(values), digits)})"


def _load(value: Any) -> str:
    return " / ".join(f"{v:.1f}" for v in value) if isinstance(value, list) else "—"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _failure(step: dict[str, Any] | None, name: str) -> str | None:
    if step is None:
        return f"_Not run in this run (`bench/run_all.py --only {name}`)._"
    if step.get("error"):
        return f"_Failed: `{step['error']}`._"
    bad = [r for r in step.get("runs", []) if r.get("exit_code") != 0]
    if bad and not step.get("ok"):
        tail = "\n".join(str(bad[0].get("stderr_tail", "")).splitlines()[-15:])
        return f"_Failed (exit code {bad[0].get('exit_code')}); last lines of its output:_\n\n```\n{tail}\n```"
    return None


# -- plots ----------------------------------------------------------------------------------------


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 8, "figure.dpi": 90})
    return plt


def _save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)


def _line(ax: Any, xs: list[int], runs: list[list[float | None]], label: str, marker: str) -> None:
    """Median per x with a bar from best to worst."""
    med, low, high, used = [], [], [], []
    for x, values in zip(xs, runs, strict=True):
        vs = _values(values)
        if not vs:
            continue
        m = statistics.median(vs)
        used.append(x)
        med.append(m)
        low.append(m - min(vs))
        high.append(max(vs) - m)
    if used:
        ax.errorbar(used, med, yerr=[low, high], marker=marker, capsize=3, label=label)


# -- sections -------------------------------------------------------------------------------------


def machine_section(machine: dict[str, Any]) -> str:
    pkgs = machine.get("packages", {})
    versions = machine.get("devcluster_versions", {})
    rows = [
        ("date (UTC)", str(machine.get("date_utc"))),
        ("cores (nproc)", str(machine.get("nproc"))),
        ("CPU", str(machine.get("cpu_model"))),
        ("memory", f"{machine.get('memory_gib')} GiB"),
        ("load average (1/5/15 min) at start → end",
         f"{_load(machine.get('loadavg_at_start'))} → {_load(machine.get('loadavg_at_end'))}"),
        ("platform", str(machine.get("hostname_platform"))),
        ("Python", str(machine.get("python"))),
        ("kopf / kubernetes client / pydantic / matplotlib",
         " / ".join(str(pkgs.get(k, "?")) for k in ("kopf", "kubernetes", "pydantic", "matplotlib"))),
        ("Go", str(machine.get("go"))),
        ("control plane (devcluster)", ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) or "—"),
        ("kubectl", str(machine.get("kubectl"))),
        ("git commit", f"`{machine.get('git_commit')}` ({machine.get('git_dirty_files')} files modified or "
                       "untracked in the working tree)"),
        ("bench scripts (sha256, 12 hex)",
         ", ".join(f"{k} `{v}`" for k, v in sorted(machine.get("bench_scripts_sha256", {}).items()))),
    ]
    return "## Machine\n\n" + table(("fact", "value"), rows)


def transform_section(step: dict[str, Any] | None, out: Path) -> tuple[str, dict[str, Any]]:
    head = "## 1. Transform: 1,000, 2,000 and 10,000 components\n\n"
    failure = _failure(step, "transform")
    figures = (step or {}).get("figures") or {}
    sizes = figures.get("sizes") or []
    if failure or not sizes:
        return head + (failure or "_No figures._"), {}
    rows = []
    for s in sizes:
        rows.append((f"{s['components']:,}", f"{s['edges']:,}", str(s["groups"]), f"{s['objects']:,}",
                     fmt(s["best_s"], 3), fmt(s["median_s"], 3), fmt(max(s["times_s"]), 3), str(s["runs"])))
    by_n = {s["components"]: s for s in sizes}
    text = head + (
        "`bench/bench_transform.py`: a generated Application of N passthrough components over three tiers, "
        "3·N dependency edges, ten dependency and five placement policies; each run is "
        "`validate_authored_properties` + `transform` in one process (pure Python, no cluster). "
        "Targets: ≤ 1 s for 1,000 components, 2,000/1,000 ratio ≤ 2.2, 10,000/1,000 ratio ≤ 10.5 (linear growth).\n\n"
    )
    text += table(("components", "edges", "groups", "objects", "best s", "median s", "worst s", "runs"), rows)
    summary: dict[Any, Any] = {}
    if 1000 in by_n and 2000 in by_n:
        r_best = by_n[2000]["best_s"] / by_n[1000]["best_s"]
        r_med = by_n[2000]["median_s"] / by_n[1000]["median_s"]
        text += f"\n\nRatio 2,000/1,000: {r_best:.2f} (best), {r_med:.2f} (median)."
        summary = {"t1000_best": by_n[1000]["best_s"], "t1000_median": by_n[1000]["median_s"], "ratio_best": r_best}
    if 1000 in by_n and 10000 in by_n:
        r_best = by_n[10000]["best_s"] / by_n[1000]["best_s"]
        r_med = by_n[10000]["median_s"] / by_n[1000]["median_s"]
        text += f" Ratio 10,000/1,000: {r_best:.2f} (best), {r_med:.2f} (median)."
        summary["ratio_10000_best"] = r_best
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    xs = [s["components"] for s in sizes]
    _line(ax, xs, [s["times_s"] for s in sizes], "transform (median; bar: best…worst)", "o")
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="target for 1,000 (1 s)")
    ax.set_xlabel("components")
    ax.set_ylabel("seconds")
    ax.set_title("Transform time")
    ax.set_ylim(bottom=0)
    ax.legend()
    _save(fig, out / "transform.png")
    text += "\n\n![transform time](transform.png)"
    return text, summary


def definitions_section(step: dict[str, Any] | None) -> str:
    head = "## Definitions: a ComponentDefinition against the built-in type\n\n"
    failure = _failure(step, "definitions")
    sizes = ((step or {}).get("figures") or {}).get("sizes") or []
    if failure or not sizes:
        return head + (failure or "_No figures._")
    rows = [(f"{s['components']:,}", f"{s['builtin_best_s'] * 1000:.2f}", f"{s['definition_best_s'] * 1000:.2f}",
             f"{s['builtin_median_s'] * 1000:.2f}", f"{s['definition_median_s'] * 1000:.2f}",
             f"{s['ratio_best']:.2f}", str(s["runs"])) for s in sizes]
    return head + (
        "`bench/bench_definitions.py`: the same ConfigMaps rendered through the built-in `passthrough` and through "
        "a ComponentDefinition computing the name, a label and two data values with CEL (docs/definitions.md); "
        "each run is `validate_authored_properties` + `transform` in one process.\n\n"
    ) + table(("components", "built-in best ms", "definition best ms", "built-in median ms",
               "definition median ms", "ratio (best)", "runs"), rows)


def _reconciler_rows(step: dict[str, Any]) -> tuple[list[int], list[str], dict[int, list[dict[str, Any]]]]:
    """Object counts, configuration labels, and the rows of every run by object count."""
    by_count: dict[int, list[dict[str, Any]]] = {}
    labels: list[str] = []
    for run in step.get("runs", []):
        for row in run.get("rows", []):
            by_count.setdefault(int(row["objects"]), []).append(row)
            for label in row.get("configs", {}):
                if label not in labels:
                    labels.append(label)
    # The operator's own configuration first; the others in the order the script printed them.
    labels.sort(key=lambda label: 0 if label.startswith("operator") else 1)
    return sorted(by_count), labels, by_count


def _events(config: dict[str, Any]) -> float | None:
    if isinstance(config.get("events"), int | float):
        return float(config["events"])
    by_verb = config.get("by_verb") or {}
    return float(by_verb.get("event", 0)) if by_verb else None


def _ours_requests(config: dict[str, Any]) -> tuple[float | None, str]:
    """All requests of one configuration, Events included: the audit log's count where there is one."""
    if isinstance(config.get("audit"), int | float) and config["audit"]:
        return float(config["audit"]), "audit"
    value = config.get("requests")
    if not isinstance(value, int | float):
        return None, "?"
    by_verb = config.get("by_verb") or {}
    # The client's "requests" left Events out when the script counted them separately.
    separate = isinstance(config.get("events"), int | float) and "event" in by_verb and (
        value < sum(by_verb.values()))
    return float(value) + (float(config["events"]) if separate else 0.0), "client"


def reconciler_section(
    step: dict[str, Any] | None, peer: dict[str, Any] | None, out: Path
) -> tuple[str, dict[str, Any]]:
    head = "## 2. First apply: our reconciler vs `kubectl apply --server-side` vs component-operator-runtime\n\n"
    failure = _failure(step, "reconciler")
    if failure or step is None:
        return head + (failure or ""), {}
    counts, labels, by_count = _reconciler_rows(step)
    if not counts:
        return head + "_The benchmark ran but no figures could be read from it._", {}
    n_runs = len(step.get("runs", []))
    sources = sorted({run.get("source", "?") for run in step.get("runs", [])})
    limits = {label: next((r["configs"][label].get("limits") for c in counts for r in by_count[c]
                           if r["configs"].get(label, {}).get("limits")), None) for label in labels}
    described = "; ".join(f"*{label}*" + (f" ({limits[label]})" if limits[label] else "") for label in labels)
    text = head + (
        f"`bench/bench_reconciler.py`, run {n_runs} times by `bench/run_all.py` "
        f"({step.get('note', '')}). Objects: half ConfigMaps, half Deployments, one wave, each measurement in a "
        "fresh namespace. **Ours:** `Reconciler.apply` with a cold client (discovery included), update policy "
        f"SsaMerge, concurrency 8, under the script's client configurations: {described}. *Operator defaults* "
        "is what the operator runs: one call with the in-call checkpoint, no Events on the objects; the others "
        "are the library's own flow, the checkpoint call plus the create call, Events on — the script's "
        "docstring explains them. component-operator-runtime and fluxcd/pkg/ssa are measured side by side "
        "with ours in section 6. **kubectl:** `kubectl "
        "apply --server-side` of the same objects into another namespace of the same control plane, cold "
        "discovery cache. **Requests are counted the same way for both:** ResponseComplete entries of the API "
        "server audit log by user agent (`oam-operator-bench…` and `kubectl…`). Ours include the Events the "
        "reconciler posts on the objects it creates (kubectl posts none), so the request ratio is given with "
        "and without them. Cells read `median (best … worst)` over the runs; ratios are of medians (> 1: "
        f"we are slower or send more). Figures read from the script's {' and '.join(sources)}.\n\n"
    )
    rows = []
    summary: dict[Any, Any] = {}
    for count in counts:
        runs = by_count[count]
        k_s = [r.get("kubectl", {}).get("s") for r in runs]
        k_req = [r.get("kubectl", {}).get("requests") for r in runs]
        for label in labels:
            cfgs = [r["configs"][label] for r in runs if label in r.get("configs", {})]
            o_s = [c.get("s") for c in cfgs]
            reqs = [_ours_requests(c) for c in cfgs]
            o_req = [v for v, _ in reqs]
            o_ev = [_events(c) for c in cfgs]
            o_net = [v - e if v is not None and e is not None else None for (v, _), e in zip(reqs, o_ev, strict=True)]
            marks = "" if all(src == "audit" for _, src in reqs) else " ²"
            rows.append((f"{count:,}", label, spread(o_s), spread(k_s), ratio(median(o_s), median(k_s)),
                         spread(o_req, 0) + marks, spread(o_ev, 0), spread(k_req, 0),
                         ratio(median(o_req), median(k_req)), ratio(median(o_net), median(k_req))))
            summary.setdefault(count, {})[label] = {"s": median(o_s), "kubectl_s": median(k_s),
                                                    "requests": median(o_req), "kubectl_requests": median(k_req),
                                                    "requests_without_events": median(o_net)}
    text += table(("objects", "our configuration", "ours s", "kubectl s", "time ratio", "ours requests",
                   "of which Events", "kubectl requests", "request ratio", "request ratio without Events"), rows)
    if any("²" in r[5] for r in rows):
        text += "\n² At least one run had no audit figure; the client's own request accounting is used there."

    # Request mix of the last run (what the requests are).
    last = step["runs"][-1].get("rows", [])
    mix = []
    for row in last:
        for label in labels:
            if label not in row.get("configs", {}):
                continue
            cfg = row["configs"][label]
            mix.append((f"{row['objects']:,}", label, _verbs(cfg.get("by_verb")), _verbs(cfg.get("audit_by_verb"))))
        mix.append((f"{row['objects']:,}", "kubectl", "—", _verbs(row.get("kubectl", {}).get("by_verb"))))
    text += ("\n\nRequest mix (last run; ours by kind from the client's accounting and by verb from the audit log, "
             "kubectl by verb from the audit log):\n\n")
    text += table(("objects", "client", "by kind (client)", "by verb (audit log)"), mix)

    # Per-run times, to show the noise.
    per_run = []
    for index, run in enumerate(step.get("runs", []), 1):
        for row in run.get("rows", []):
            cells = [fmt(row.get("configs", {}).get(label, {}).get("s")) for label in labels]
            per_run.append((str(index), f"{row['objects']:,}", *cells, fmt(row.get("kubectl", {}).get("s")),
                            f"{_load(run.get('load_before'))} → {_load(run.get('load_after'))}"))
    text += "\n\nEvery run (seconds), with the load average before → after the run:\n\n"
    text += table(("run", "objects", *[f"ours, {label}" for label in labels], "kubectl", "load"), per_run)

    plt = _plt()
    markers = "osd^v"
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for i, label in enumerate(labels):
        series = [[r["configs"][label].get("s") for r in by_count[c] if label in r["configs"]] for c in counts]
        _line(ax, counts, series, f"ours ({label})", markers[i % len(markers)])
    _line(ax, counts, [[r.get("kubectl", {}).get("s") for r in by_count[c]] for c in counts],
          "kubectl apply --server-side", "x")
    ax.set_xlabel("objects")
    ax.set_ylabel("seconds (median; bar: best…worst)")
    ax.set_title("First apply: wall time")
    ax.set_ylim(bottom=0)
    ax.legend()
    _save(fig, out / "first_apply_time.png")

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for i, label in enumerate(labels):
        series = [[_ours_requests(r["configs"][label])[0] for r in by_count[c] if label in r["configs"]]
                  for c in counts]
        _line(ax, counts, series, f"ours ({label})", markers[i % len(markers)])
    _line(ax, counts, [[r.get("kubectl", {}).get("requests") for r in by_count[c]] for c in counts],
          "kubectl apply --server-side", "x")
    ax.set_xlabel("objects")
    ax.set_ylabel("API requests (audit log)")
    ax.set_title("First apply: requests")
    ax.set_ylim(bottom=0)
    ax.legend()
    _save(fig, out / "first_apply_requests.png")
    text += "\n\n![first apply time](first_apply_time.png) ![first apply requests](first_apply_requests.png)"
    return text, summary


def _kubectl_noop_repeats(step: dict[str, Any] | None) -> str:
    rows = (step or {}).get("rows") or []
    n = len(rows[0].get("repeats", [])) if rows else 0
    return f"{n} re-applies per size" if n else "not measured in this run"


def _verbs(by_verb: Any) -> str:
    if not isinstance(by_verb, dict) or not by_verb:
        return "—"
    return ", ".join(f"{k} {v}" for k, v in by_verb.items())


def noop_section(step: dict[str, Any] | None, kubectl: dict[str, Any] | None, out: Path) -> tuple[str, dict[str, Any]]:
    head = "## 3. No-op reconcile (everything in sync and Ready)\n\n"
    failure = _failure(step, "reconciler")
    if failure or step is None:
        return head + (failure or ""), {}
    counts, _, by_count = _reconciler_rows(step)
    text = head + (
        "Same runs as section 2: once every object is Ready (the bench patches the Deployments' status, the minimal "
        "control plane runs no controllers), one more `apply` call with the operator's default client. Target "
        "(docs/architecture.md#key-decisions, docs/reconciler.md#batched-reads): zero writes, and reads ≤ the number "
        "of distinct "
        "(type, namespace) pairs. Requests from the client's accounting (in section 2 it agrees with the audit log "
        "request for request). **kubectl's counterpart** (step `kubectl-noop` of `bench/run_all.py`, on its own "
        "minimal control plane with audit logging): `kubectl apply --server-side` of the same, unchanged object "
        "set again, with the discovery cache of its first apply (a running reconciler keeps its discovery too), "
        "requests from the audit log by user agent; "
        f"{_kubectl_noop_repeats(kubectl)}.\n\n"
    )
    k_rows = {int(r["objects"]): r.get("repeats", []) for r in (kubectl or {}).get("rows", [])}
    k_failure = _failure(kubectl, "kubectl-noop") if kubectl is None or not kubectl.get("ok") else None
    rows = []
    summary: dict[Any, Any] = {}
    for count in counts:
        k_req = [x.get("requests") for x in k_rows.get(count, [])]
        k_s = [x.get("s") for x in k_rows.get(count, [])]
        noops = [r.get("noop", {}) for r in by_count[count]]
        pairs = {r.get("pairs") for r in by_count[count]}
        reads = [n.get("reads") for n in noops]
        writes = [n.get("writes") for n in noops]
        done = {n.get("done") for n in noops}
        ours_total = [(n.get("reads") or 0) + (n.get("writes") or 0) for n in noops]
        k_verbs = k_rows.get(count, [{}])[-1].get("by_verb") if k_rows.get(count) else None
        rows.append((f"{count:,}", ", ".join(str(p) for p in sorted(pairs, key=str)), spread(reads, 0),
                     spread(writes, 0), _verbs(noops[-1].get("by_verb")), spread([n.get("ms") for n in noops], 0),
                     ", ".join(str(d) for d in sorted(done, key=str)), spread(k_req, 0), _verbs(k_verbs),
                     spread([v * 1000 for v in _values(k_s)], 0), ratio(median(ours_total), median(k_req))))
        summary[count] = {"reads": median(reads), "writes": median(writes), "pairs": sorted(pairs, key=str),
                          "kubectl_requests": median(k_req)}
    text += table(("objects", "(type, namespace) pairs", "ours reads", "ours writes", "ours by kind (last run)",
                   "ours ms", "apply returned", "kubectl re-apply requests", "kubectl by verb (last)", "kubectl ms",
                   "request ratio ours/kubectl"), rows)
    text += "\n\ncomponent-operator-runtime's and fluxcd/pkg/ssa's no-op reconciles are in section 6."
    if k_failure:
        text += f"\n\nkubectl's counterpart: {k_failure}"
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    xs = list(range(len(counts)))
    width = 0.27
    series = [
        ("ours: reads", [median(r.get("noop", {}).get("reads") for r in by_count[c]) or 0 for c in counts]),
        ("ours: writes", [median(r.get("noop", {}).get("writes") for r in by_count[c]) or 0 for c in counts]),
    ]
    if k_rows:
        series.append(("kubectl apply --server-side again",
                       [median(x.get("requests") for x in k_rows.get(c, [])) or 0 for c in counts]))
    for i, (label, heights) in enumerate(series):
        bars = ax.bar([x + (i - (len(series) - 1) / 2) * width for x in xs], heights, width, label=label)
        ax.bar_label(bars, fmt="%d", fontsize=7)
    ax.set_yscale("symlog", linthresh=10)
    ax.set_xticks(xs, [f"{c:,}" for c in counts])
    ax.set_xlabel("objects")
    ax.set_ylabel("API requests (median; symlog)")
    ax.set_title("No-op reconcile: requests")
    ax.legend()
    _save(fig, out / "noop_requests.png")
    text += "\n\n![no-op reconcile requests](noop_requests.png)"
    return text, summary


OPERATOR_FIGURES = (
    ("ready", "Applications Ready", 0, ""),
    ("ready_s", "time until all Ready (s)", 1, ""),
    ("peak_rss_mib", "operator peak RSS, VmHWM (MiB); target ≤ 300", 0, ""),
    ("requests_per_app", "API requests per Application, to Ready", 1, ""),
    ("writes_per_app", "of which writes", 1, ""),
    ("settle_writes_per_app", "writes per Application after Ready (Event backlog draining)", 1, ""),
    ("last_write_after_ready_s", "last of those writes, seconds after Ready (±2 s)", 0, ""),
    ("steady_requests_per_min", "steady state: requests per minute (interval 30 s)", 0, ""),
    ("steady_writes_per_min", "steady state: writes per minute", 0, ""),
    ("status_bytes", "largest persisted status (bytes)", 0, ""),
)


def operator_section(step: dict[str, Any] | None, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    apps, objects = config.get("apps", 200), config.get("objects", 10)
    head = f"## 4. Operator: {apps} Applications × {objects} objects to Ready\n\n"
    failure = _failure(step, "operator")
    runs = [r.get("figures") or {} for r in (step or {}).get("runs", [])]
    if failure or not any(runs):
        return head + (failure or "_No figures._"), {}
    text = head + (
        f"`bench/bench_operator.py`: the operator runs as a real process (`oam-operator run`, "
        "`--default-interval 30s`) on a fresh full control plane (etcd, kube-apiserver, controllers, scheduler, "
        f"kwok); {apps} Applications, each {objects - 1} ConfigMaps and one Deployment in its own namespace, are "
        "created at once with one `kubectl apply`. Requests are the operator's own "
        "`oam_operator_api_requests_total` (kopf's watch traffic not counted); Events on the created objects are "
        "writes too, posted by a background queue that may still drain after Ready, so the steady-state minute "
        "starts once no write has been counted for 10 s. Each run is a fresh control plane and operator.\n\n"
    )
    header = ("figure", *[f"run {i}" for i in range(1, len(runs) + 1)], "median", "best")
    rows = []
    summary: dict[Any, Any] = {}
    for key, name, digits, _ in OPERATOR_FIGURES:
        values = [r.get(key) for r in runs]
        low_is_good = key not in ("ready",)
        chosen = (best(values) if low_is_good else max(_values(values), default=None))
        rows.append((name, *[fmt(v, digits) for v in values], fmt(median(values), digits), fmt(chosen, digits)))
        summary[key] = median(values)
        summary[key + "_best"] = chosen
    text += table(header, rows)
    return text, summary


def _floors(floor_step: dict[str, Any] | None, with_applications: bool = False) -> dict[tuple[int, int], float]:
    """The reconciler-library floor per (Applications, objects): the yardstick of each scale row;
    ``with_applications``: the floor that also makes each Application's own writes."""
    floors: dict[tuple[int, int], float] = {}
    for run in (floor_step or {}).get("runs") or []:
        f = run.get("figures") or {}
        if (f.get("client") == "reconciler" and bool(f.get("with_applications")) == with_applications
                and f.get("ready_s") and f.get("ready") == f.get("apps")):
            floors[(f["apps"], f["objects"])] = f["ready_s"]
    return floors


def scale_section(step: dict[str, Any] | None, floor_step: dict[str, Any] | None = None) -> str:
    head = "## 4b. Operator at fleet scale (step `scale`)\n\n"
    if step is None:
        return head + "_Not run for this report's results (`bench/run_all.py --only scale --merge`)._"
    runs = [(r.get("figures") or {}, r) for r in step.get("runs", [])]
    floors, ideal = _floors(floor_step), _floors(floor_step, with_applications=True)
    text = head + (
        f"Run {step.get('date_utc')}. Each row: `bench/bench_operator.py --audit` on a fresh full control plane, the "
        "Applications (M-1 ConfigMaps and one Deployment each, own namespace) created at once, the operator with "
        "its defaults plus `--default-interval 30s` (or the interval its steady-state cell names); with shards, one "
        "process without `--shard` and the others "
        "`--shard s1` …, the Applications spread round-robin by label, requests summed. *× floor* is the time "
        "against the reconciler library's floor for the same objects (section 4c, `--client reconciler "
        "--parallel 10`, the newest run of that size); *× ideal* against the floor that also creates the "
        "Applications and makes each one's own writes (`--with-applications`: the finalizer, two status writes "
        "and an Event, an operator doing no work of its own). Requests: the operator's own count, and the audit log's "
        "(every request of the operator process to Ready, kopf's included). Targets (issue 23): 1,000 × 10 Ready "
        "within 1.25× the floor, ≤ objects + 4 = 14 requests per Application by the audit log, steady state 0 "
        "writes and ≤ 0.1 reads per Application per minute, peak RSS ≤ 300 MiB at 1,000. One run each; the load "
        "average (1/5/15 min) before and after each run is given, since the machine is shared.\n\n")
    rows = []
    unmarked = True
    for fig, run in runs:
        if not fig:
            rows.append(("failed", *[""] * 13, f"exit {run.get('exit_code')}", ""))
            continue
        rss = fig.get("peak_rss_each_mib") or [fig.get("peak_rss_mib")]
        objects = fig.get("objects", 10)
        floor = floors.get((fig["apps"], objects))
        ratio = f"{fig['ready_s'] / floor:.2f}×" if floor and fig.get("ready_s") else "—"
        best = ideal.get((fig["apps"], objects))
        ideal_ratio = f"{fig['ready_s'] / best:.2f}×" if best and fig.get("ready_s") else "—"
        reads = fig.get("steady_reads_per_min")
        mark = "" if "steady_lease_requests_per_min_each" in fig else " †"  # measured before the Lease's own counter
        interval = f" (interval {fig['interval']})" if fig.get("interval", "30s") != "30s" else ""
        unmarked = unmarked and not mark
        rows.append((f"{fig['apps']:,}", str(objects), str(fig.get("shards", 1)), f"{fig['ready']:,}/{fig['apps']:,}",
                     fmt(fig.get("ready_s"), 1), ratio, ideal_ratio, fmt(fig.get("requests_per_app"), 1),
                     fmt(fig.get("audit_requests_per_app"), 1), fmt(fig.get("writes_per_app"), 1),
                     " + ".join(fmt(x, 0) for x in rss),
                     (f"{fmt(reads, 0)} = {reads / fig['apps']:.3f} per App{mark}{interval}"
                      if reads is not None else "—"),
                     fmt(fig.get("steady_writes_per_min"), 0) + mark,
                     fmt(fig.get("watch_cache_bytes_per_object"), 0),
                     " / ".join(map(str, run.get("load_before") or [])) + " → " +
                     " / ".join(map(str, run.get("load_after") or [])),
                     f"`{str(run.get('git_commit') or step.get('git_commit') or '?')[:12]}`"))
    text += table(("Applications", "objects each", "shards", "Ready", "time to all Ready s", "× floor", "× ideal",
                   "requests per App (operator)", "requests per App (audit log)", "writes per App", "peak RSS MiB",
                   "steady reads/min", "steady writes/min", "watch cache bytes per object", "load before → after",
                   "commit"), rows)
    if not unmarked:
        text += ("\n† Measured before leader election's requests had a counter of their own "
                 "(`oam_operator_lease_requests_total`): these steady-state figures are the instances' Lease "
                 "renewals (a read and a write every 2 s each), counted with the Applications' requests, and its "
                 "audit-log count includes them too (the `leases` rows of its log in `bench/results/logs/`).\n")
    return text


GROWTH_HOW = ("`bench/run_all.py --only scale,floor --scale 1000/4,5000/4,10000/4 --floor 1000/4,5000/4,10000/4 "
              "--floor-clients ideal --scale-interval 10m --scale-timeout 3600 --merge`")
GROWTH_HEADER = ("Applications", "all Ready", "time grown", "× ideal", "requests per App (audit log)",
                 "operator CPU", "CPU grown", "peak RSS", "RSS grown",
                 "steady minute: reads per App, writes, operator CPU (% of a core)")


def growth_series(step: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The one-shard, all-Ready runs of the ``scale`` step with the most sizes of one object count,
    smallest fleet first; ``[]`` with fewer than three sizes."""
    by_objects: dict[int, list[dict[str, Any]]] = {}
    for fig in (r.get("figures") or {} for r in (step or {}).get("runs", [])):
        if fig.get("ready_s") and fig.get("shards", 1) == 1 and fig.get("ready") == fig.get("apps"):
            by_objects.setdefault(int(fig.get("objects", 10)), []).append(fig)
    series = max(by_objects.values(), key=len, default=[])
    return sorted(series, key=lambda f: f["apps"]) if len(series) >= 3 else []


def _operator_cpu(fig: dict[str, Any]) -> float | None:
    value = (fig.get("cpu_s") or {}).get("operator")
    return float(value) if value is not None else None


def _grown(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f}×" if value is not None and base else "—"


def _steady(fig: dict[str, Any]) -> str:
    reads, writes = fig.get("steady_reads_per_min"), fig.get("steady_writes_per_min")
    if reads is None or writes is None:
        return "—"
    idle = fig.get("steady_cpu_percent")
    return (f"{reads / fig['apps']:.3f} reads, {writes:.0f} writes"
            + (f", CPU {idle:.2f} %" if idle is not None else "")
            + f" (interval {fig.get('interval', '30s')})")


def growth_rows(series: list[dict[str, Any]], ideal: dict[tuple[int, int], float]) -> list[tuple[str, ...]]:
    """``GROWTH_HEADER``'s rows: each size against the smallest, and its time against the ideal's."""
    first, rows = series[0], []
    for fig in series:
        best = ideal.get((fig["apps"], int(fig.get("objects", 10))))
        rows.append((f"{fig['apps']:,}", f"{fmt(fig['ready_s'], 1)} s", _grown(fig["ready_s"], first["ready_s"]),
                     f"{fig['ready_s'] / best:.2f}×" if best else "—",
                     fmt(fig.get("audit_requests_per_app"), 2), f"{fmt(_operator_cpu(fig), 1)} s",
                     _grown(_operator_cpu(fig), _operator_cpu(first)),
                     f"{fmt(fig.get('peak_rss_mib'), 0)} MiB",
                     _grown(fig.get("peak_rss_mib"), first.get("peak_rss_mib")), _steady(fig)))
    return rows


def growth_section(step: dict[str, Any] | None, floor_step: dict[str, Any] | None, out: Path) -> str:
    """How time, requests, operator CPU and RSS grow with the fleet (issue 43 item 6): the one-shard
    runs of the ``scale`` step with the same objects per Application, three sizes or more."""
    head = "## 4d. Growth with the fleet (steps `scale` and `floor`)\n\n"
    series = growth_series(step)
    if not series:
        return head + ("_Fewer than three one-shard fleet sizes with the same objects per Application: run "
                       f"{GROWTH_HOW}._")
    objects = int(series[0].get("objects", 10))
    ideal = _floors(floor_step, with_applications=True)
    text = head + (
        f"Runs of {step.get('date_utc') if step else '?'}: one operator, {objects} objects per Application, each size "
        f"on a fresh full control plane ({GROWTH_HOW}). Growth is each figure against the smallest fleet's; "
        "linear growth is the fleet's own ratio. *× ideal*: the time against the floor that also makes each "
        "Application's own writes, run in the same `make bench`.\n\n")
    text += table(GROWTH_HEADER, growth_rows(series, ideal))
    plt = _plt()
    fig, axes = plt.subplots(1, 4, figsize=(11, 2.8))
    xs = [f["apps"] for f in series]
    panels = ((axes[0], [f["ready_s"] for f in series], "all Ready (s)"),
              (axes[1], [f.get("audit_requests_per_app") for f in series], "requests per Application"),
              (axes[2], [_operator_cpu(f) for f in series], "operator CPU (s)"),
              (axes[3], [f.get("peak_rss_mib") for f in series], "peak RSS (MiB)"))
    for ax, ys, title in panels:
        ax.plot(xs, ys, marker="o")
        ax.set_title(title)
        ax.set_xlabel("Applications")
        ax.set_ylim(bottom=0)
    ideal_ys = [ideal.get((x, objects)) for x in xs]
    if all(y is not None for y in ideal_ys):
        axes[0].plot(xs, ideal_ys, marker="x", linestyle="--", label="ideal")
        axes[0].legend()
    _save(fig, out / "growth.png")
    return text + "\n\n![growth with the fleet](growth.png)"


README_START, README_END = "<!-- growth:start (bench/report.py writes this) -->", "<!-- growth:end -->"


def readme_growth(results: dict[str, Any]) -> str | None:
    """The README's fleet figures (its Performance section), from the same runs as section 4d;
    ``None`` without three sizes."""
    steps = results.get("steps") or {}
    step = steps.get("scale")
    series = growth_series(step)
    if not series:
        return None
    objects = int(series[0].get("objects", 10))
    ideal = _floors(steps.get("floor"), with_applications=True)
    first, last = series[0], series[-1]
    commit = str((step or {}).get("git_commit") or "")[:12]
    text = (f"**Growth with the fleet** ([REPORT.md](bench/results/REPORT.md) section 4d; {GROWTH_HOW}; "
            f"one run per size, {step.get('date_utc') if step else '?'}"
            + (f", commit `{commit}`" if commit else "")
            + f"): one operator with its defaults (leader election, watches of owned objects, the 10-minute "
            f"interval), Applications of {objects - 1} ConfigMaps and one Deployment each, created at once with "
            "`kubectl apply` on a fresh full control plane; *× ideal* is the time against "
            "`bench_fleet_floor.py --with-applications` (the objects plus each Application's finalizer, two "
            "status writes and an Event, no operator work) on the same machine in the same run.\n\n")
    text += table(GROWTH_HEADER, growth_rows(series, ideal))
    text += (f"\n\nFrom {first['apps']:,} to {last['apps']:,} Applications ({last['apps'] / first['apps']:.0f}× the "
             f"fleet) the time to Ready grows {_grown(last['ready_s'], first['ready_s'])}, the operator's CPU "
             f"{_grown(_operator_cpu(last), _operator_cpu(first))} and its peak RSS "
             f"{_grown(last.get('peak_rss_mib'), first.get('peak_rss_mib'))}.")
    return text


def update_readme(path: Path, text: str) -> bool:
    """Replace what stands between the README's growth markers with ``text``; ``False`` (nothing
    written) when the markers are missing."""
    readme = path.read_text()
    if README_START not in readme or README_END not in readme:
        return False
    head, rest = readme.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_START}\n{text}\n{README_END}{tail}")
    return True


def floor_section(step: dict[str, Any] | None) -> str:
    head = "## 4c. The control plane's own floor: the fleet's objects applied with no operator (step `floor`)\n\n"
    runs = (step or {}).get("runs")
    figures = [r.get("figures") or {} for r in runs] if runs is not None else [(step or {}).get("figures") or {}]
    figures = [f for f in figures if f]
    if not figures:
        return head + "_Not run for this report's results (`bench/run_all.py --only floor --merge`)._"
    text = head + (
        f"Run {step.get('date_utc') if step else ''}. `bench/bench_fleet_floor.py --audit`: a fresh full control "
        "plane per run, no operator; the objects the operator creates for N Applications (M-1 ConfigMaps and one "
        "Deployment each, own namespace) applied by kubectl (`kubectl apply --server-side`, 4 processes at once) "
        "or by the operator's reconciler library alone (one `apply()` per Application, 10 at once, no client-side "
        "limit), then the time until every Deployment is Available (controller manager, scheduler and kwok doing "
        "their part). kubectl's own speed is most of its figure; the reconciler's shows what the control plane "
        "allows a fast client, and is the yardstick of section 4b. The third row of a size (`--with-applications`) "
        "also creates the Applications (`kubectl apply`, as section 4b does) and makes each one's own writes as soon "
        "as it is seen — the finalizer, a status write with the inventory before its objects, a Ready status "
        "write and an Event once its Deployment is Available — and its time is until every Application is Ready: "
        "an operator doing no work of its own.\n\n")
    rows = []
    for f in figures:
        client = f.get("client", "kubectl") + (" + each Application's own writes" if f.get("with_applications") else "")
        rows.append((client, f"{f['apps']:,} × {f['objects']}", str(f.get("parallel", "")),
                     f"{f['apps'] * f['objects']:,}", f"{fmt(f.get('applied_s'), 1)} s",
                     f"{f.get('ready'):,}/{f['apps']:,}", f"**{fmt(f.get('ready_s'), 1)} s**",
                     " / ".join(f"{x:.1f}" for x in f.get("load_before") or []) + " → "
                     + " / ".join(f"{x:.1f}" for x in f.get("load_after") or [])))
    return text + table(("applied by", "Applications × objects", "at once", "objects", "all applied",
                         "Deployments Available", "time until all Available", "load average before → after"), rows)


def ui_section(step: dict[str, Any] | None) -> str:
    """``oam-operator ui`` with a fleet (bench/bench_ui.py, docs/ui.md#fast-with-a-fleet)."""
    failure = _failure(step, "ui")
    runs = [r.get("figures") or {} for r in (step or {}).get("runs", [])]
    head = "## The web UI with a fleet (`oam-operator ui`)\n\n"
    if failure or not runs or not runs[0]:
        return head + (failure or "_No figures._")
    fig = runs[0]
    rows = [
        (f"list of {fig.get('apps'):,} Applications rendered in Chromium, from navigation",
         f"{fig.get('list_ms'):,} ms (target ≤ 2,000)"),
        (f"tree of {fig.get('tree_objects')} objects rendered", f"{fig.get('tree_ms'):,} ms (target ≤ 1,000)"),
        ("UI process RSS (peak)", f"{fig.get('rss_mib')} MiB ({fig.get('peak_rss_mib')} MiB; target < 150)"),
        ("UI API requests after load", str(fig.get("requests_after_load"))),
        (f"… after {fig.get('changes')} Applications changed", str(fig.get("requests_after_changes"))),
    ]
    return head + table(("figure", "value"), rows)


def inventory_section(step: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    failure = _failure(step, "inventory")
    runs = [r.get("figures") or {} for r in (step or {}).get("runs", [])]
    fig = runs[0] if runs else {}
    n = int(fig.get("objects") or 0)
    head = f"## 5. Status size of an Application with {n:,} objects\n\n" if n else "## 5. Status size\n\n"
    if failure or not runs or not runs[0]:
        return head + (failure or "_No figures._"), {}
    status, inventory, whole = (int(fig.get(k) or 0) for k in ("status_bytes", "inventory_bytes", "object_bytes"))
    text = head + f"How: {(step or {}).get('method', '')}. Target: `.status` < 1 MiB.\n\n"
    rows = [
        ("objects in the Application", f"{n:,}"),
        ("Applications Ready", f"{fig.get('ready')}/{fig.get('apps')}"),
        ("`.status`, compact JSON", f"**{status:,} bytes = {status / MIB:.3f} MiB** "
                                    f"({'meets' if status < MIB else 'misses'} the < 1 MiB target)"),
        ("`.status.inventory`", f"{inventory:,} bytes = {inventory / max(n, 1):.0f} bytes per object"),
        ("whole Application object (metadata incl. managedFields, spec, status)",
         f"{whole:,} bytes = {whole / MIB:.3f} MiB"),
        ("time until Ready (one run)", f"{fmt(fig.get('ready_s'), 1)} s"),
        ("operator peak RSS", f"{fmt(fig.get('peak_rss_mib'), 0)} MiB"),
        ("API requests to Ready (operator's own count)", fmt(fig.get("requests_per_app"), 0)),
        ("of which writes", fmt(fig.get("writes_per_app"), 0)),
        ("writes after Ready (Event backlog draining)",
         f"{fmt(fig.get('settle_writes_per_app'), 0)}, the last {fmt(fig.get('last_write_after_ready_s'), 0)} s "
         "after Ready"),
        ("steady state: requests per minute (interval 30 s)", fmt(fig.get("steady_requests_per_min"), 0)),
    ]
    text += table(("figure", "value"), rows)
    text += ("\n\nFor scale: etcd refuses values over 1.5 MiB by default (`--max-request-bytes`), which bounds the "
             "whole object; the spec grows with the spec, the inventory (`status.compactInventory`, about 75 "
             "bytes per object) with the objects; kopf keeps no diff base annotation (controller/service/diffbase.py).")
    return text, {"status_bytes": status, "objects": n, "object_bytes": whole}


def fairness_section(step: dict[str, Any] | None) -> str:
    head = "## 7. Fair queues: a healthy Application under another namespace's flood (`bench/bench_fairness.py`)\n\n"
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only fairness --merge`)._"
    failure = _failure(step, "fairness")
    fig = step.get("figures") or {}
    if failure or not fig:
        return head + (failure or "_No figures._")
    alone, under = fig.get("alone") or [], fig.get("under") or []
    worst = max((s["seconds"] for s in under), default=None)
    factor = worst / fig["alone_median_s"] if worst is not None and fig.get("alone_median_s") else None
    failing, flapping = fig.get("failing") or {}, fig.get("flapping") or {}
    text = head + (
        f"Run {step.get('date_utc')}. One operator (default flags) watches two namespaces on a fresh minimal control "
        f"plane. The healthy Application ({fig.get('objects')} ConfigMaps) is timed from its create to Ready, alone, "
        f"then while {fig.get('flood')} Applications created in {fmt(fig.get('flood_created_s'), 1)} s in the other "
        "namespace are worked off (one failing permanently, one changing its spec every second). Target: under the "
        "flood ≤ 2× alone. Before fair queues (one queue, first come first served) the issue measured 0.49–1.9 s "
        "alone and 11.2–31.8 s under such a flood.\n\n")
    rows = [
        ("healthy Application alone", f"median {fmt(fig.get('alone_median_s'))} s "
                                      f"({', '.join(fmt(s['seconds']) for s in alone)})"),
        ("the same under the flood", f"median {fmt(fig.get('under_median_s'))} s "
                                     f"({', '.join(fmt(s['seconds']) for s in under)}); worst "
                                     f"**{fmt(factor, 1)}× alone**"),
        ("its first pass under the flood: passes waiting ahead / admitted while it waited",
         ", ".join(f"{s.get('first_pass_waiting_ahead')} / {s.get('first_pass_overtaken_by')}" for s in under)),
        ("the flood to Ready", f"{fmt(fig.get('flood_ready_s'), 1)} s, {fig.get('flood_passes')} passes, "
                               f"{fmt(fig.get('flood_requests'), 0)} API requests "
                               f"({fmt(fig.get('flood_requests_per_app'), 1)} per Application)"),
        ("failing Application", f"{failing.get('passes')} passes in {fmt(fig.get('watched_s'), 0)} s, gaps "
                                f"{failing.get('gaps_s')} s ({failing.get('state')}/{failing.get('reason')})"),
        ("flapping Application", f"{flapping.get('passes')} passes for {flapping.get('spec_changes')} spec changes "
                                 f"in {fmt(fig.get('watched_s'), 0)} s"),
    ]
    return text + table(("figure", "value"), rows)


def multicluster_section(step: dict[str, Any] | None) -> str:
    """Delivery to other clusters (bench/bench_multicluster.py, docs/multicluster.md#measured)."""
    head = ("## Delivery to other clusters: one fleet on the hub, then spread over spokes "
            "(`bench/bench_multicluster.py`)\n\n")
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only multicluster --merge`)._"
    failure = _failure(step, "multicluster")
    runs = [r.get("figures") or {} for r in step.get("runs", [])]
    rows = (runs[0] if runs else {}).get("rows") or []
    if failure or not rows:
        return head + (failure or "_No figures._")
    text = head + (
        f"Run {step.get('date_utc')}. The operator as a real process on a fresh minimal hub; the same Applications "
        f"({rows[0].get('objects')} ConfigMaps each) first on the hub itself, then spread over minimal spokes (one "
        "ClusterProfile and kubeconfig Secret each). Requests are the operator's own count (hub and spokes); the "
        "steady minute is two no-op passes per Application (`--default-interval 30s`). Target: the steady "
        "requests of a remote Application equal a hub Application's.\n\n")
    return text + table(
        ("run", "clusters", "Ready", "time to Ready", "requests / App to Ready", "writes / App",
         "steady requests / App / min", "peak RSS"),
        [(str(r.get("mode")), str(r.get("clusters")), f"{r.get('ready')}/{r.get('apps')}",
          f"{fmt(r.get('ready_s'), 1)} s",
          fmt(r.get("requests_per_app"), 1), fmt(r.get("writes_per_app"), 1),
          fmt(r.get("steady_requests_per_app_minute"), 2), f"{fmt(r.get('peak_rss_mib'), 0)} MiB") for r in rows])


def topology_section(step: dict[str, Any] | None) -> str:
    """One Application to many clusters (bench/bench_topology.py, docs/multicluster.md#measured-fleet-delivery)."""
    head = "## One Application to many clusters through a topology policy (`bench/bench_topology.py`)\n\n"
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only topology --merge`)._"
    failure = _failure(step, "topology")
    runs = [r.get("figures") or {} for r in step.get("runs", [])]
    rows = (runs[0] if runs else {}).get("rows") or []
    if failure or not rows:
        return head + (failure or "_No figures._")
    text = head + (
        f"Run {step.get('date_utc')}. The operator as a real process on a fresh minimal hub with minimal spokes; "
        "the first row is the same ConfigMaps applied to one spoke by `profile:`. Requests are the operator's own "
        "count (hub and spokes) from the apply to Ready; the hub status is the largest Application's.\n\n")
    return text + table(
        ("run", "Applications", "clusters", "Ready", "time to Ready", "requests", "requests / cluster", "writes",
         "largest hub status", "peak RSS"),
        [(str(r.get("run")), str(r.get("apps")), str(r.get("clusters")), f"{r.get('ready')}/{r.get('apps')}",
          f"{fmt(r.get('ready_s'), 1)} s", str(r.get("requests")), fmt(r.get("requests_per_cluster"), 1),
          str(r.get("writes")), f"{r.get('status_bytes')} bytes", f"{fmt(r.get('peak_rss_mib'), 0)} MiB")
         for r in rows])


def notifications_section(step: dict[str, Any] | None) -> str:
    """Delivery delay of notifications (bench/bench_notifications.py, docs/notifications.md#measured)."""
    head = "## 9. Notifications: state change to message (`bench/bench_notifications.py`)\n\n"
    failure = _failure(step, "notifications")
    fig = (step or {}).get("figures") or {}
    if failure or not fig:
        return head + (failure or "_No figures._")
    delay = fig.get("delay_seconds") or {}
    return head + (
        f"Run {(step or {}).get('date_utc')}. One operator, {fig.get('episodes')} failure episodes of one "
        f"Application; {fig.get('failed')} `failed` and {fig.get('recovered')} `recovered` messages arrived "
        "(one each per episode). Delay from the state change (seen by the benchmark's own watch) to the "
        "message's arrival at a loopback receiver; the bound is 2 s at p99.\n\n") + table(
        ("p50", "p90", "p99", "max"),
        [tuple(f"{fmt(delay.get(k), 3)} s" for k in ("p50", "p90", "p99", "max"))])


def restart_section(step: dict[str, Any] | None) -> str:
    """A quiet restart (bench/bench_restart.py, docs/operator.md#a-quiet-restart)."""
    head = "## A quiet restart in front of a Ready fleet (`bench/bench_restart.py`)\n\n"
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only restart --merge`)._"
    failure = _failure(step, "restart")
    runs = [r.get("figures") or {} for r in step.get("runs", [])]
    if failure or not runs:
        return head + (failure or "_No figures._")
    text = head + (
        f"Run {step.get('date_utc')}. On a fresh full control plane with the audit log on, one operator makes "
        "the fleet Ready, one Application is changed (timed on the warm operator), the process is killed "
        "(SIGKILL) and a new one started; as it starts, one new Application is created and another changed. "
        "Requests are the new process's in its first seconds (the observed time) by the audit log, the new "
        "and the changed Application's namespaces left out; its CPU over the last 30 s of that time.\n\n")
    rows = []
    for fig in runs:
        requests = fig.get("requests") or []
        reads = sum(r["count"] for r in requests if r["verb"] in ("get", "list", "watch") and r["resource"] != "leases")
        lists = ", ".join(f"{r['resource']} {r['count']}" for r in sorted(requests, key=lambda r: r["resource"])
                          if r["verb"] == "list")
        rows.append((f"{fig.get('apps'):,} × {fig.get('objects')}", f"{fmt(fig.get('observe_s'), 0)} s",
                     f"{fig.get('writes')} ({fig.get('lease_writes')})",
                     str(reads), lists or "—",
                     f"{fmt(fig.get('leading_s'), 1)} s", f"{fmt(fig.get('new_ready_after_start_s'), 1)} s",
                     f"{fmt(fig.get('changed_ready_s'), 1)} s"
                     + (f", {fmt(fig['changed_ready_after_leading_s'], 1)} s after leading"
                        if fig.get("changed_ready_after_leading_s") is not None else "")
                     + f" (warm {fmt(fig.get('warm_changed_ready_s'), 1)} s)",
                     f"{fmt(fig.get('idle_cpu_percent'), 2)} %",
                     f"{fmt(fig.get('peak_rss_mib'), 0)} / {fmt(fig.get('restarted_peak_rss_mib'), 0)} MiB"))
    return text + table(("Ready fleet", "observed", "writes (the Lease's)", "reads (no Lease)", "LISTs by resource",
                         "leading after the start", "new Application Ready after the start",
                         "changed Application Ready after the change", "CPU, last 30 s",
                         "peak RSS, first / restarted process"), rows)


def urlsource_section(step: dict[str, Any] | None) -> str:
    """A 4.5 MB URL source pass after pass (bench/bench_url_source.py, docs/operator.md#url-sources-are-cached)."""
    head = "## 8. A 4.5 MB URL source, pass after pass, before and after the cache (`bench/bench_url_source.py`)\n\n"
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only urlsource --merge`)._"
    failure = _failure(step, "urlsource")
    fig = step.get("figures") or {}
    if failure or not fig:
        return head + (failure or "_No figures._")
    rows = fig.get("summary") or []
    text = head + (
        f"Run {step.get('date_utc')} (load {_load(step.get('load_before'))}). The operator's transform of an "
        f"Application whose `manifests` component reads a {fig.get('source_bytes')}-byte bundle of CRDs served on "
        f"127.0.0.1, {fig.get('passes')} passes per mode, each mode in a fresh process. `before`: every pass "
        "downloads and parses the source, as before issue 37 (which measured 2.2–2.5 s and about a CPU-second per "
        "pass of the whole operator, RSS 78 → 180–192 MB); `after (ETag)`: the cache, a server sending an ETag "
        "(later passes are a 304); `after (digest)`: the cache, a server without validators (later passes "
        "download, the digest spares the parse). CPU and wall are the passes after the first (median); RSS after "
        "the last pass, the peak, and after the Application is forgotten (its deletion) and a garbage "
        "collection.\n\n")
    operator = fig.get("operator") or []
    if operator:
        text += ("**The whole operator**, before (the commit issue 37 measured) and after, each on a fresh minimal "
                 "control plane: the Application (the same source, an ETag server) to Ready, then passes at its "
                 "30 s interval; CPU of the operator process per pass, each pass's duration from its log line, RSS "
                 "once Ready, after the passes and after the Application was deleted.\n\n")
        text += table(("operator", "passes", "CPU / pass", "pass durations", "RSS Ready", "RSS after passes",
                       "RSS after delete"),
                      [(str(r.get("mode")), str(r.get("passes")), f"**{fmt(r.get('cpu_s_per_pass'), 3)} s**",
                        ", ".join(f"{fmt(p, 2)} s" for p in r.get("pass_s") or []),
                        f"{fmt(r.get('rss_ready_mib'), 1)} MiB", f"{fmt(r.get('rss_after_passes_mib'), 1)} MiB",
                        f"{fmt(r.get('rss_after_delete_mib'), 1)} MiB") for r in operator]) + "\n\n"
        text += "**The transform alone**, in one process per mode:\n\n"
    return text + table(
        ("mode", "first pass CPU", "CPU / pass", "wall / pass", "RSS start", "RSS after passes", "peak RSS",
         "RSS after forget", "parses"),
        [(str(r.get("mode")), f"{fmt(r.get('first_cpu_s'), 3)} s", f"**{fmt(r.get('later_cpu_s_median'), 3)} s**",
          f"{fmt(r.get('later_wall_s_median'), 3)} s", f"{fmt(r.get('rss_start_mib'), 1)} MiB",
          f"**{fmt(r.get('rss_after_last_mib'), 1)} MiB**", f"{fmt(r.get('peak_rss_mib'), 1)} MiB",
          f"{fmt(r.get('rss_after_forget_mib'), 1)} MiB", str(r.get("parses"))) for r in rows])


def peer_section(step: dict[str, Any] | None) -> str:
    head = "## 6. Side by side: ours, kubectl, component-operator-runtime, fluxcd/pkg/ssa (`bench/bench_peers.py`)\n\n"
    if step is None:
        return head + "_Not run in this report's results (`bench/run_all.py --only peer --merge`)._"
    figures = step.get("figures")
    if not step.get("ok") or not figures:
        return head + f"**Failed in this run** (exit code {step.get('exit_code')}):\n\n```\n" + \
            str(step.get("stderr_tail") or step.get("error") or "")[-2000:] + "\n```"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_peers

    doc = (bench_peers.__doc__ or "").split("\n\n", 1)[1].rsplit("\nUsage:", 1)[0]
    text = head + f"Run {step.get('date_utc')}, on its own minimal control plane with audit logging. " + doc
    text += "\n\n" + bench_peers.markdown(figures) + "\n"
    return text


def headline_section(t: dict[str, Any], r: dict[str, Any], noop: dict[str, Any], op: dict[str, Any],
                     inv: dict[str, Any], peer: dict[str, Any] | None, config: dict[str, Any]) -> str:
    rows: list[tuple[str, str, str]] = []
    if t:
        rows.append(("transform, 1,000 components", f"{t['t1000_best']:.3f} s best, {t['t1000_median']:.3f} s median",
                     f"target ≤ 1 s; 2,000/1,000 = {t['ratio_best']:.2f} (target ≤ 2.2)"))
    for count in sorted(r, key=int)[-1:]:
        for label, c in r[count].items():
            rows.append((f"first apply, {int(count):,} objects — ours with {label}",
                         f"{fmt(c['s'])} s vs kubectl {fmt(c['kubectl_s'])} s; "
                         f"{fmt(c['requests'], 0)} vs {fmt(c['kubectl_requests'], 0)} requests",
                         f"time {ratio(c['s'], c['kubectl_s'])}, requests {ratio(c['requests'], c['kubectl_requests'])}"
                         f" ({ratio(c.get('requests_without_events'), c['kubectl_requests'])} without Events) of "
                         "kubectl's"))
    if noop:
        top = max(noop, key=int)
        n = noop[top]
        against = f"target 0 writes, reads ≤ {', '.join(str(p) for p in n['pairs'])} (type, namespace) pairs"
        if n.get("kubectl_requests"):
            total = (n["reads"] or 0) + (n["writes"] or 0)
            against += (f"; kubectl re-apply of the unchanged set: {fmt(n['kubectl_requests'], 0)} requests "
                        f"(ours {ratio(total, n['kubectl_requests'])} of that)")
        rows.append((f"no-op reconcile, {int(top):,} objects",
                     f"{fmt(n['reads'], 0)} reads, {fmt(n['writes'], 0)} writes", against))
    if op:
        apps, objects = config.get("apps", 200), config.get("objects", 10)
        rows.append((f"{apps} Applications × {objects} objects to Ready",
                     f"{fmt(op.get('ready_s'), 1)} s median ({fmt(op.get('ready_s_best'), 1)} s best)",
                     f"{fmt(op.get('requests_per_app'), 1)} requests per Application"))
        rows.append(("operator peak RSS (same runs)", f"{fmt(op.get('peak_rss_mib'), 0)} MiB median",
                     "target ≤ 300 MiB"))
    if inv:
        rows.append((f"status of an Application with {inv['objects']:,} objects",
                     f"{inv['status_bytes']:,} bytes ({inv['status_bytes'] / MIB:.3f} MiB)", "target < 1 MiB"))
    peer_ok = bool((peer or {}).get("ok"))
    if peer_ok:
        runs = (peer or {})["figures"]["runs"]
        largest = max(r["objects"] for r in runs)

        def first_s(tool: str) -> float | None:
            values = [r["first_s"] for r in runs if r["tool"] == tool and r["objects"] == largest]
            return median(values) if values else None

        kubectl_s = first_s("kubectl")
        for tool, label in (("ours-defaults", "ours, operator defaults"), ("sap", "component-operator-runtime"),
                            ("flux", "fluxcd/pkg/ssa")):
            s_ = first_s(tool)
            if s_ is not None and kubectl_s:
                rows.append((f"first apply, {largest} objects — {label} (section 6, one run)",
                             f"{s_:.2f} s vs kubectl {kubectl_s:.2f} s", f"{s_ / kubectl_s:.2f}× kubectl's time"))
    else:
        rows.append(("component-operator-runtime and fluxcd/pkg/ssa (peers)", "not measured", "see section 6"))
    heading = "## Headline figures (docs/architecture.md#performance-targets)\n\n"
    return heading + table(("figure", "measured", "against"), rows)


def render(results: dict[str, Any], out: Path) -> str:
    steps = results.get("steps", {})
    machine = results.get("machine", {})
    config = results.get("config", {})
    out.mkdir(parents=True, exist_ok=True)
    t_text, t_sum = transform_section(steps.get("transform"), out)
    r_text, r_sum = reconciler_section(steps.get("reconciler"), steps.get("peer"), out)
    n_text, n_sum = noop_section(steps.get("reconciler"), steps.get("kubectl-noop"), out)
    o_text, o_sum = operator_section(steps.get("operator"), config)
    i_text, i_sum = inventory_section(steps.get("inventory"))
    p_text = peer_section(steps.get("peer"))
    load = _load(machine.get("loadavg_at_start")), _load(machine.get("loadavg_at_end"))
    step_times = ", ".join(f"{name} {s.get('step_wall_s')} s" for name, s in steps.items())
    commits = {str(s.get("git_commit") or machine.get("git_commit"))[:12] for s in steps.values()}
    when = "; ".join(f"{name} {s.get('date_utc', '?')}, commit `{str(s.get('git_commit') or '?')[:12]}`"
                     for name, s in steps.items())
    origin = (f"on {machine.get('date_utc')}, commit `{str(machine.get('git_commit'))[:12]}`" if len(commits) == 1
              else f"by several runs merged with `--merge`, each step as measured in its run ({when})")
    intro = (
        "# oam-operator benchmarks — report\n\n"
        f"Written by `make bench` (`bench/run_all.py` → `bench/results/results.json` → `bench/report.py`) {origin}. "
        "**Every figure below was measured; nothing is estimated.** Each benchmark runs on the project's local "
        "control plane (`tools/devcluster`), started fresh by the benchmark itself.\n\n"
        f"**Noise.** The machine has {machine.get('nproc')} cores and is shared with other engineers' test runs "
        f"(load average {load[0]} at the start, {load[1]} at the end; each run's own load is in the tables), and "
        "the control plane runs on the same cores as the code measured, so single figures are noisy: the "
        "reconciler, kubectl and operator benchmarks are repeated and reported as median (best … worst), the "
        "transform as best and median of 9 runs in one process. Compare ratios measured in the same run rather "
        "than absolute seconds across runs. Request counts do not depend on load. Step wall times: "
        f"{step_times}.\n"
    )
    sections = [intro, headline_section(t_sum, r_sum, n_sum, o_sum, i_sum, steps.get("peer"), config),
                machine_section(machine), t_text, r_text, n_text, o_text,
                scale_section(steps.get("scale"), steps.get("floor")),
                floor_section(steps.get("floor")), growth_section(steps.get("scale"), steps.get("floor"), out), i_text,
                p_text, fairness_section(steps.get("fairness")),
                ui_section(steps.get("ui")), multicluster_section(steps.get("multicluster")),
                topology_section(steps.get("topology")), urlsource_section(steps.get("urlsource")),
                notifications_section(steps.get("notifications")), restart_section(steps.get("restart")),
                definitions_section(steps.get("definitions"))]
    return "\n\n".join(s.rstrip() for s in sections) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--results", type=Path, default=RESULTS / "results.json")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--readme", type=Path, default=BENCH.parent / "README.md",
                        help="the README whose fleet figures (between its growth markers) are rewritten")
    args = parser.parse_args()
    results = json.loads(args.results.read_text())
    report = render(results, args.out)
    (args.out / "REPORT.md").write_text(report)
    print(f"[bench] wrote {args.out / 'REPORT.md'}")
    growth = readme_growth(results)
    if growth is not None and args.readme is not None and update_readme(args.readme, growth):
        print(f"[bench] wrote the fleet figures of {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
