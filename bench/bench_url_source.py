"""Benchmark of a 4.5 MB URL source across passes: CPU, wall time and RSS per pass, before and
after the URL-source cache (docs/operator.md#url-sources-are-cached; prints figures, asserts
nothing).

Issue 37 measured a monitoring operator's 4.5 MB bundle (its CustomResourceDefinitions) as a
``manifests`` URL source: 2.2–2.5 s and about a CPU-second per pass of an Application that was
Ready all along, and the operator's RSS grew from 78 MB to 180–192 MB and stayed there. This
benchmark serves a bundle of the same size and shape on 127.0.0.1 (ten CRDs with deep
``openAPIV3Schema`` trees, generated here so the run needs no network and is the same every
time) and runs the operator's own transform of an Application reading it (``OperatorTransform``
with the operator's URL-source settings, 127.0.0.0/8 allowed) for ``--passes`` passes, in a
fresh process per mode:

- ``before``: no cache, as before issue 37 (every pass downloads and parses the source);
- ``after (ETag)``: the cache, the server answering with an ``ETag`` (a pass after the first is a
  ``304 Not Modified``: no download, no parse);
- ``after (digest)``: the cache, a server without validators (each pass downloads; the content's
  digest spares the parse).

Per pass: CPU seconds of the process (``time.process_time``), wall seconds and RSS after the pass
(``/proc/self/status``); the peak RSS (``VmHWM``); and the RSS after the Application is forgotten
(its deletion) and a garbage collection. The transform is the part of a pass the cache spares;
the rest of a pass (the objects' digests, compared with the watch's copies) still grows with the
source, and the operator runs measure the two together.

Usage: ``python bench/bench_url_source.py [--passes 8] [--mb 4.5] [--operator-passes 3 [--before-ref b1146fb]]
[--json FILE]``; with ``--operator-passes`` the whole operator runs too, before and after, each on a fresh
minimal control plane (``operator_run``).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import http.server
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "operator"))

MODES = ("before", "after (ETag)", "after (digest)")
WORDS = ("selector", "template", "volume", "endpoint", "relabel", "timeout", "secret", "config", "storage",
         "tls", "affinity", "toleration", "container", "resource", "limit", "interval", "scheme", "header")


def _schema(depth: int, width: int, seed: int) -> dict[str, Any]:
    """A property tree like a generated CRD's: objects of ``width`` documented fields, ``depth`` deep."""
    if depth == 0:
        kind = ("string", "integer", "boolean")[seed % 3]
        return {"type": kind, "description": f"The {WORDS[seed % len(WORDS)]} of this field, as the upstream "
                f"API documents it: what it means, its default and what a value outside its range does ({seed})."}
    properties = {f"{WORDS[(seed + i) % len(WORDS)]}{i}": _schema(depth - 1, width, seed * 7 + i)
                  for i in range(width)}
    return {"type": "object", "description": f"Settings of the {WORDS[seed % len(WORDS)]} ({seed}).",
            "properties": properties}


def _crd(n: int, width: int) -> str:
    import yaml

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"things{n}.bench.oam-operator.dev"},
           "spec": {"group": "bench.oam-operator.dev", "scope": "Namespaced",
                    "names": {"plural": f"things{n}", "kind": f"Thing{n}"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": _schema(3, width, n)}}}}]}}
    text: str = yaml.safe_dump(crd, sort_keys=False, width=120)
    return text


def bundle(megabytes: float) -> bytes:
    """CRDs of about 0.45 MB (property trees 3 deep, 12 and 13 wide in turn), the last one as
    narrow as still reaches ``megabytes`` (10^6 bytes), as one YAML stream."""
    target = int(megabytes * 1_000_000)
    documents: list[str] = []
    size = 0
    while size < target:
        n = len(documents)
        text = _crd(n, 12 + n % 2)
        if size + len(text) > target:  # the last one: the narrowest that still reaches the size
            text = next((t for t in (_crd(n, w) for w in range(4, 14)) if size + len(t) + 4 >= target), text)
        documents.append(text)
        size += len(text) + 4
    return "---\n".join(documents).encode()


def _rss_mib(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(mode: str, url: str, passes: int) -> dict[str, Any]:
    """One mode in this process: ``passes`` transforms of the Application reading ``url``."""
    import dataclasses

    from oam_operator.controller.reconcile.composition import OperatorTransform, operator_pipeline_options
    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.oam.pipeline import build_pipeline
    from oam_operator.operatorpolicies import register_operator_policies

    settings = Settings(url_source_allowed_networks="127.0.0.0/8")
    if mode == "before":
        pipeline = build_pipeline(dataclasses.replace(operator_pipeline_options(settings), url_cache_bytes=0))
        register_operator_policies(pipeline.transformer)
        transform = OperatorTransform(pipeline)
    else:
        transform = OperatorTransform.from_settings(settings)
    body = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "bundle", "namespace": "bench"},
            "spec": {"components": [{"name": "crds", "type": "manifests", "properties": {"url": url}}]}}
    gc.collect()
    rss_start = _rss_mib()
    rows = []
    objects = 0
    for _ in range(passes):
        cpu, wall = time.process_time(), time.perf_counter()
        encoded, _ = transform.transform(body, cluster_id="bench", domain="oam-operator.dev", profile=None)
        rows.append({"cpu_s": round(time.process_time() - cpu, 3), "wall_s": round(time.perf_counter() - wall, 3),
                     "rss_mib": round(_rss_mib(), 1)})
        objects = len(encoded.objects)
        del encoded
    peak = _rss_mib("VmHWM")
    transform.forget("bench", "bundle")
    gc.collect()
    sources = transform.pipeline.sources
    return {"mode": mode, "objects": objects, "passes": rows, "rss_start_mib": round(rss_start, 1),
            "peak_rss_mib": round(peak, 1), "rss_after_forget_mib": round(_rss_mib(), 1),
            "parses": sources.parses if sources is not None else passes,
            "cache_bytes_after_forget": sources.size if sources is not None else 0}


class _Server(http.server.ThreadingHTTPServer):
    body: bytes = b""
    etag: str = ""
    answers: list[int]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        body, etag = self.server.body, self.server.etag
        with_etag = self.path.startswith("/etag")
        fresh = with_etag and self.headers.get("If-None-Match") == etag
        self.server.answers.append(304 if fresh else 200)
        self.send_response(304 if fresh else 200)
        if with_etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", "0" if fresh else str(len(body)))
        self.end_headers()
        if not fresh:
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def summary(run: dict[str, Any]) -> dict[str, Any]:
    rows = run["passes"]
    later = rows[1:] or rows
    return {"mode": run["mode"], "first_cpu_s": rows[0]["cpu_s"], "first_wall_s": rows[0]["wall_s"],
            "later_cpu_s_median": statistics.median(r["cpu_s"] for r in later),
            "later_wall_s_median": statistics.median(r["wall_s"] for r in later),
            "rss_start_mib": run["rss_start_mib"], "rss_after_first_mib": rows[0]["rss_mib"],
            "rss_after_last_mib": rows[-1]["rss_mib"], "peak_rss_mib": run["peak_rss_mib"],
            "rss_after_forget_mib": run["rss_after_forget_mib"], "parses": run["parses"],
            "cache_bytes_after_forget": run["cache_bytes_after_forget"], "objects": run["objects"]}


def _proc_cpu_rss(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) and RSS (MiB) of process ``pid``."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = next(int(line.split()[1]) / 1024 for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))
    return cpu, rss


def operator_run(label: str, code: Path | None, url: str, passes: int, work: Path) -> dict[str, Any]:
    """The whole operator (``code``: another source tree's ``operator/``, e.g. the commit before the
    cache) on a fresh minimal control plane: an Application reading ``url`` to Ready, then
    ``passes`` passes at its 30 s interval; the operator's CPU and RSS around them, and its RSS
    after the Application is deleted."""
    sys.path.insert(0, str(ROOT))
    from tools.devcluster import devcluster as dc
    from tools.operatorprocess import OperatorProcess, source_launcher

    def wait(predicate: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        raise SystemExit(f"{label}: timed out after {timeout:.0f}s waiting for {what}")

    plane = dc.start("minimal", run_dir=work / "plane")
    operator: OperatorProcess | None = None
    try:
        kubectl = dc.find_binaries().kubectl
        assert kubectl is not None, "kubectl is not built: tools/devcluster/build.sh"
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            subprocess.run([str(kubectl), "--kubeconfig", plane.handle.kubeconfig, "apply", "--server-side", "-f",
                            str(path)], check=True, capture_output=True)
        api = plane.api()
        api.request("/api/v1/namespaces", "POST", {"metadata": {"name": "bench"}})
        # This interpreter runs ``code``'s operator (PYTHONPATH) or, without it, the installed one.
        env = {"PYTHONDONTWRITEBYTECODE": "1", **({"PYTHONPATH": str(code)} if code is not None else {})}
        operator = OperatorProcess.start(
            work / "operator.log", kubeconfig=plane.handle.kubeconfig, namespaces=["bench"],
            operator_namespace="bench", launcher=source_launcher(), name="bench-url-source", env=env, cwd=work,
            extra=["--use-operator-identity", "--default-profile", "", "--allow-cluster-scoped-objects",
                   "--url-source-allowed-networks", "127.0.0.0/8"])
        operator.wait_serving(120, health=False)
        apps = "/apis/oam-operator.dev/v1alpha1/namespaces/bench/applications"
        body = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                "metadata": {"name": "bundle", "namespace": "bench"},
                "spec": {"interval": "30s", "components": [{"name": "crds", "type": "manifests",
                                                            "properties": {"url": url}}]}}
        status, answer = api.request(apps, "POST", body)
        assert status == 201, answer

        def state() -> str:
            code_, found = api.request(f"{apps}/bundle")
            return str(((found or {}).get("status") or {}).get("state") or "") if code_ == 200 else "gone"

        def finished() -> list[dict[str, Any]]:
            return operator.passes(name="bundle")

        wait(lambda: state() == "Ready", 300, "the Application to be Ready")
        time.sleep(2)
        cpu_ready, rss_ready = _proc_cpu_rss(operator.pid)
        count = len(finished())
        wait(lambda: len(finished()) >= count + passes, 30 * passes + 120, f"{passes} passes")
        cpu_after, rss_after = _proc_cpu_rss(operator.pid)
        steady = finished()[count:count + passes]
        api.request(f"{apps}/bundle", "DELETE")
        wait(lambda: state() == "gone", 300, "the Application to be deleted")
        time.sleep(5)
        _, rss_deleted = _proc_cpu_rss(operator.pid)
        return {"mode": label, "passes": len(steady), "cpu_s_per_pass": round((cpu_after - cpu_ready) / len(steady), 3),
                "pass_s": [e.get("seconds") for e in steady], "states": [e.get("state") for e in steady],
                "rss_ready_mib": round(rss_ready, 1), "rss_after_passes_mib": round(rss_after, 1),
                "rss_after_delete_mib": round(rss_deleted, 1)}
    finally:
        if operator is not None:
            operator.stop(timeout=60)
        plane.stop()


def operator_mode(args: argparse.Namespace, base: str) -> list[dict[str, Any]]:
    """Before (``--before-ref``'s source, exported with ``git archive``) and after (this tree)."""
    import tarfile
    import tempfile

    results = []
    with tempfile.TemporaryDirectory(prefix="oam-bench-url-") as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before_ref, "operator"], capture_output=True,
                                 check=True).stdout
        archive_path = Path(tmp) / "before.tar"
        archive_path.write_bytes(archive)
        with tarfile.open(archive_path) as tar:
            tar.extractall(before, filter="data")
        for label, code in ((f"before ({args.before_ref})", before / "operator"), ("after", None)):
            work = Path(tmp) / f"run-{label.split()[0]}"
            work.mkdir()
            run = operator_run(label, code, f"{base}/etag/bundle.yaml", args.operator_passes, work)
            print(f"operator {label}: {run}", flush=True)
            results.append(run)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--passes", type=int, default=8)
    parser.add_argument("--operator-passes", type=int, default=0,
                        help="with more than 0: also the whole operator on a minimal control plane, this many "
                             "passes at the Application's 30 s interval, before and after")
    parser.add_argument("--before-ref", default="b1146fb",
                        help="the commit whose operator is 'before' in the operator runs (issue 37 measured b1146fb)")
    parser.add_argument("--mb", type=float, default=4.5, help="size of the source in MB (10^6 bytes)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.url, args.passes)))
        return 0
    source = bundle(args.mb)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.body, server.etag, server.answers = source, '"' + hashlib.sha256(source).hexdigest()[:32] + '"', []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    runs = []
    operator_runs: list[dict[str, Any]] = []
    try:
        if args.operator_passes > 0:
            operator_runs = operator_mode(args, base)
        for mode in MODES:
            url = f"{base}/etag/bundle.yaml" if mode == "after (ETag)" else f"{base}/plain/bundle.yaml"
            before = len(server.answers)
            result = subprocess.run([sys.executable, __file__, "--child", mode, "--url", url, "--passes",
                                     str(args.passes)], capture_output=True, text=True, check=False, cwd=ROOT)
            if result.returncode != 0:
                print(result.stderr[-3000:], file=sys.stderr)
                return 1
            run = json.loads(result.stdout.splitlines()[-1])
            run["answers"] = {str(code): server.answers[before:].count(code) for code in (200, 304)}
            runs.append(run)
    finally:
        server.shutdown()
    figures = {"source_bytes": len(source), "passes": args.passes, "runs": runs,
               "summary": [summary(run) for run in runs], "operator": operator_runs}
    print(f"source: {len(source)} bytes, {runs[0]['objects']} objects, {args.passes} passes per mode")
    print(f"{'mode':16} {'1st CPU s':>9} {'CPU s/pass':>10} {'wall s/pass':>11} {'RSS start':>9} "
          f"{'RSS last':>8} {'peak':>6} {'forgot':>6} {'parses':>6}")
    for s in figures["summary"]:
        print(f"{s['mode']:16} {s['first_cpu_s']:9.3f} {s['later_cpu_s_median']:10.3f} "
              f"{s['later_wall_s_median']:11.3f} "
              f"{s['rss_start_mib']:9.1f} {s['rss_after_last_mib']:8.1f} {s['peak_rss_mib']:6.1f} "
              f"{s['rss_after_forget_mib']:6.1f} {s['parses']:6d}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
