"""Benchmark of ``oam-operator ui`` with a fleet (issue 28; prints figures, asserts nothing).

On a fresh minimal control plane: ``--apps`` Applications (default 1,000) with a status each,
one more with a ``--objects``-object inventory (default 500) in three bundles; ``oam-operator ui
-A`` and Debian's Chromium driven by Playwright. Figures:

- ``list_ms``: from the start of navigation until the browser has rendered every row of the list;
- ``tree_ms``: from the hash change to the big Application until its objects' rows are rendered;
- ``rss_mib`` / ``peak_rss_mib``: the UI process's RSS after both, and its peak (VmHWM);
- the UI's API requests (its own count: lists and watches of Applications and Events) after the
  first load, and again after ``--changes`` Applications had their status written and the page
  had shown the last one: a watch adds no request per Application, so the count stays put.

``--json FILE`` writes the figures. Targets (docs/ui.md): list ≤ 2 s, tree ≤ 1 s, RSS < 150 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.devcluster import find_binaries, start  # noqa: E402
from tools.operatorprocess import free_port  # noqa: E402

GROUP, VERSION, NS = "oam-operator.dev", "v1alpha1", "bench-ui"
CHROMIUM = "/usr/bin/chromium"


def _status(name: str, objects: int, bundles: int = 3) -> dict[str, Any]:
    per = max(objects // bundles, 1)
    inventory = [{"group": "", "version": "v1", "kind": "ConfigMap", "namespace": NS, "name": f"{name}-{i}",
                  "phase": "Ready", "status": "Current", "applyOrder": min(i // per, bundles - 1), "digest": "d"}
                 for i in range(objects)]
    return {"state": "Ready", "revision": 1, "observedGeneration": 1, "objects": objects, "readyObjects": objects,
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "all objects are Ready",
                            "lastTransitionTime": "2026-03-01T10:00:00Z"}],
            "bundles": [{"name": f"b{k}", "state": "Ready", "objects": per, "ready": per,
                         "waves": {"first": k, "last": k}, "dependsOn": [f"b{k - 1}"] if k else []}
                        for k in range(bundles)],
            "inventory": inventory}


def _create_fleet(api: Any, apps: int, objects: int) -> None:
    from kubernetes import client

    custom = client.CustomObjectsApi(api)
    client.CoreV1Api(api).create_namespace({"metadata": {"name": NS}})
    names = [f"app-{i:04d}" for i in range(apps)] + ["big"]
    for name in names:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application", "metadata": {"name": name, "namespace": NS},
                "spec": {"components": [{"name": "c", "type": "passthrough", "properties": {"object": {
                    "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}}}]}}
        custom.create_namespaced_custom_object(GROUP, VERSION, NS, "applications", body)
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, NS, "applications", name, {"status": _status(name, objects if name == "big" else 3)})


def _install_crds(api: Any) -> None:
    import yaml
    from kubernetes import dynamic

    resources = dynamic.DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                          kind="CustomResourceDefinition")
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        resources.server_side_apply(body=yaml.safe_load(path.read_text()), field_manager="bench-ui",
                                    force_conflicts=True)
    from kubernetes import client

    extensions = client.ApiextensionsV1Api(api)
    while not all(any(c.type == "Established" and c.status == "True" for c in
                      extensions.read_custom_resource_definition(name).status.conditions or [])
                  for name in ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev")):
        time.sleep(0.2)


def _rss_kib(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def _state(url: str) -> dict[str, Any]:
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url + "api/state", timeout=5) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


def measure(apps: int, objects: int, changes: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from tools.devcluster.pytest_plugin import api_client

    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        plane = start("minimal", name="bench-ui", run_dir=Path(tmp) / "plane", binaries=find_binaries())
        ui: subprocess.Popen[bytes] | None = None
        try:
            api = api_client(plane.handle)
            _install_crds(api)
            created = time.perf_counter()
            _create_fleet(api, apps, objects)
            print(f"created {apps + 1} Applications in {time.perf_counter() - created:.0f}s", file=sys.stderr)
            port = free_port()
            url = f"http://127.0.0.1:{port}/"
            env = {k: v for k, v in os.environ.items() if not k.startswith("OAM_OPERATOR_")}
            ui = subprocess.Popen([str(Path(sys.executable).parent / "oam-operator"), "ui", "-A", "--port", str(port),
                                   "--kubeconfig", plane.handle.kubeconfig], env=env, stderr=subprocess.DEVNULL)
            while True:
                try:
                    if _state(url)["synced"]:
                        break
                except OSError:
                    pass
                time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=["--no-sandbox", "--disable-gpu", "--no-proxy-server"])
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_default_timeout(120_000)
                page.goto(url)
                page.wait_for_function(f"() => document.querySelectorAll('tr[data-app]').length === {apps + 1}",
                                       polling="raf")
                list_ms = page.evaluate("performance.now()")
                page.evaluate(f"() => {{ window.t0 = performance.now(); location.hash = '#/app/{NS}/big'; }}")
                rows = "document.querySelectorAll('[data-bundle] tbody tr').length"
                page.wait_for_function(f"() => {rows} === {objects}", polling="raf")
                tree_ms = page.evaluate("performance.now() - window.t0")
                after_load = _state(url)["requests"]
                rss, peak = _rss_kib(ui.pid)
                from kubernetes import client

                custom = client.CustomObjectsApi(api)
                page.evaluate("() => { location.hash = '#/'; }")
                for i in range(changes):
                    status = _status(f"app-{i:04d}", 3)
                    status["revision"] = 2
                    custom.patch_namespaced_custom_object_status(GROUP, VERSION, NS, "applications", f"app-{i:04d}",
                                                                 {"status": status})
                last = f"app-{changes - 1:04d}"
                cell = f"document.querySelector(\"tr[data-app='{NS}/{last}'] [data-col=revision]\")"
                page.wait_for_function(f"() => {cell}?.textContent === '2'", polling="raf")
                after_changes = _state(url)["requests"]
                final_rss, final_peak = _rss_kib(ui.pid)
                browser.close()
        finally:
            if ui is not None:
                ui.terminate()
                ui.wait(timeout=30)
            plane.stop()
    return {"apps": apps + 1, "tree_objects": objects, "list_ms": round(list_ms), "tree_ms": round(tree_ms),
            "rss_mib": round(rss / 1024, 1), "peak_rss_mib": round(max(peak, final_peak) / 1024, 1),
            "rss_after_changes_mib": round(final_rss / 1024, 1),
            "requests_after_load": after_load, "changes": changes, "requests_after_changes": after_changes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--changes", type=int, default=100, help="Applications whose status is written after load")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = measure(args.apps, args.objects, args.changes)
    print(f"list of {figures['apps']} Applications rendered in {figures['list_ms']} ms of navigation (target 2000)")
    print(f"tree of {figures['tree_objects']} objects rendered in {figures['tree_ms']} ms (target 1000)")
    print(f"UI process RSS {figures['rss_mib']} MiB, peak {figures['peak_rss_mib']} MiB (target < 150)")
    print(f"UI API requests after load {figures['requests_after_load']}, after {figures['changes']} "
          f"Applications changed {figures['requests_after_changes']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
