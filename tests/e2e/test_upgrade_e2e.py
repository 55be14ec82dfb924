"""Upgrade from the previous release and downgrade back to it (docs/chart.md#upgrades, issue 27).

The previous release is the last entry of ``releases.json``: its ``operator/`` and ``crds/`` are
taken from this repository's own history (``git archive``; CI runs on a full clone) and run as a
host process on the same interpreter. It brings up Applications of every status shape it writes —
a few objects, 3,000 objects, waiting for a missing Application, failed (TransformFailed),
suspended, and ordered after another by ``app-dependency`` — and is stopped. This version then
starts with the current CRDs, as ``helm upgrade`` would install them, and must take every
Application over with **no write to any of their objects** (the API server's audit log, each
process named by its user agent), at most one status write per Application, nothing deleted and
nothing orphaned, each Application in the state it had (Ready stays Ready). The downgrade puts the
previous release's CRDs and operator back against what this version wrote and must not rewrite
the objects either.

The hub also has SIG-Multicluster's ClusterProfile CRD (the tests' own minimal one), whose plural
is the operator's ClusterProfile's too, and one standard ClusterProfile in the namespace that this
version reads (``--inventory-namespaces``): neither the release nor this version writes it, and
the shared plural changes nothing of the above (docs/multicluster.md#the-standard-cluster-inventory).

A control plane of this module's own (minimal profile, audit log on): ConfigMaps need no
controllers. The duration of each phase is printed (``-s``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, dynamic

from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import api_client, require_cluster, wait_until
from tools.operatorprocess import OperatorProcess, source_launcher

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = "oam-operator.dev"
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
BIG = 3000  # objects of the large Application: its inventory is the largest status the release writes
NAMESPACE = "upgrade"
STANDARD_CRDS = ROOT / "tests" / "e2e" / "data" / "cluster-inventory"  # clusterprofiles.multicluster.x-k8s.io


def previous_release() -> dict[str, str]:
    """The last entry of releases.json: ``{"version", "commit"}``."""
    releases = json.loads((ROOT / "releases.json").read_text())["releases"]
    last: dict[str, str] = releases[-1]
    return last


def extract_release(commit: str, into: Path) -> Path:
    """``operator/`` and ``crds/`` of ``commit``, from this repository's history, under ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "release.tar"
    try:
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "-o", str(archive), commit,
                        "operator", "crds"], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        pytest.fail(f"git archive of release {commit} failed (not in this repository's history, a shallow "
                    f"clone?): {detail}", pytrace=False)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


@dataclass
class Plane:
    handle: dc.ClusterHandle
    audit_log: Path
    api: Any


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    run_dir = tmp_path_factory.mktemp("upgrade")
    try:
        started = dc.start("minimal", run_dir=run_dir / "run", audit=True)
    except dc.DevclusterError as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))
    api = api_client(started.handle)
    try:
        yield Plane(started.handle, run_dir / "run" / "logs" / "audit.log", api)
    finally:
        api.close()
        started.stop()


def install_crds(plane: Plane, crds: Path) -> None:
    """Server-side apply every CRD of ``crds`` (what the chart's CRD step does) and wait until Established."""
    resources = dynamic.DynamicClient(plane.api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                               kind="CustomResourceDefinition")
    names = []
    for path in sorted(crds.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        names.append(crd["metadata"]["name"])
        resources.server_side_apply(body=crd, field_manager="oam-upgrade-e2e", force_conflicts=True)
    extensions = client.ApiextensionsV1Api(plane.api)

    def established() -> bool:
        return all(any(c.type == "Established" and c.status == "True"
                       for c in (extensions.read_custom_resource_definition(name).status.conditions or []))
                   for name in names)

    wait_until(established, 60, "the CRDs to be Established")


def run_operator(plane: Plane, name: str, tmp_path: Path, source: Path | None) -> OperatorProcess:
    """``oam-operator run`` from ``source``'s ``operator/`` (a release), or this tree's (``None``)."""
    log_path = tmp_path / f"{name}.log"
    flags = ["--use-operator-identity", "--default-profile", "", "--default-interval", "30s"]
    # ``name`` is POD_NAME, in the user agent: the audit log tells the processes apart.
    if source is not None:  # the release's own source, before the venv's editable install of this tree
        return OperatorProcess.start(log_path, kubeconfig=plane.handle.kubeconfig, namespaces=[NAMESPACE],
                                     operator_namespace=NAMESPACE, extra=flags, name=name, launcher=source_launcher(),
                                     env={"PYTHONPATH": str(source / "operator")}, cwd=source)
    # The release never warned of a missing app-dependency target; this tree does after the grace
    # (docs/app-dependencies.md#a-missing-application): new information, not a repeat of what the
    # release told, so the grace is kept past the test's waits and "no Event" still means "nothing
    # told again".
    return OperatorProcess.start(log_path, kubeconfig=plane.handle.kubeconfig, namespaces=[NAMESPACE],
                                 operator_namespace=NAMESPACE, extra=[*flags, "--missing-dependency-grace", "1h",
                                                                      "--inventory-namespaces", NAMESPACE],
                                 name=name)


def components(prefix: str, count: int) -> list[dict[str, Any]]:
    return [{"name": f"c{i:04d}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{prefix}-{i:04d}"}, "data": {"k": str(i)}}}}
        for i in range(count)]


def inline_configmaps(prefix: str, count: int, per_component: int = 1000) -> list[dict[str, Any]]:
    """``count`` ConfigMaps in ``manifests`` components of at most ``per_component`` documents
    (an Application has at most 1,000 components)."""
    found = []
    for part, first in enumerate(range(0, count, per_component)):
        docs = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {prefix}-{n:04d}}}\n"
                       f"data: {{k: '{n}'}}\n" for n in range(first, min(count, first + per_component)))
        found.append({"name": f"part-{part}", "type": "manifests", "properties": {"inline": docs}})
    return found


def after(*names: str) -> list[dict[str, Any]]:
    return [{"name": "after", "type": "app-dependency",
             "properties": {"applications": [{"name": name} for name in names]}}]


#: name -> (spec, the state it settles in, its reason, its objects)
SHAPES: dict[str, tuple[dict[str, Any], str, str, int]] = {
    "few": ({"components": components("few", 3)}, "Ready", "Ready", 3),
    "big": ({"components": inline_configmaps("big", BIG)}, "Ready", "Ready", BIG),
    "waiting": ({"components": components("waiting", 2), "policies": after("missing")},
                "Waiting", "DependenciesNotReady", 0),
    # A refusal whose wording the release and this tree share: a reworded one is a new message,
    # rightly written and announced once (the unknown-type refusal was reworded after v0.1.0).
    "failed": ({"components": [{"name": "bad", "type": "passthrough", "properties": {}}]},
               "Error", "TransformFailed", 0),
    "suspended": ({"components": components("suspended", 2), "suspend": True}, "Pending", "Suspended", 0),
    "dependent": ({"components": components("dependent", 2), "policies": after("few")}, "Ready", "Ready", 2),
}


def apps(plane: Plane) -> dict[str, dict[str, Any]]:
    listed = client.CustomObjectsApi(plane.api).list_namespaced_custom_object(DOMAIN, "v1alpha1", NAMESPACE,
                                                                              "applications")
    return {item["metadata"]["name"]: item for item in listed["items"]}


def settled(plane: Plane) -> dict[str, dict[str, Any]] | None:
    """Every Application's status once each is in the state its shape settles in."""
    found = apps(plane)
    for name, (_, state, reason, objects) in SHAPES.items():
        status = (found.get(name) or {}).get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
        if status.get("state") != state or ready.get("reason") != reason:
            return None
        if state == "Ready" and (status.get("objects") != objects or status.get("readyObjects") != objects):
            return None
    return {name: found[name].get("status") or {} for name in SHAPES}


def owned_configmaps(plane: Plane) -> dict[str, str]:
    """Every ConfigMap the operator owns: name -> resourceVersion."""
    items = client.CoreV1Api(plane.api).list_namespaced_config_map(NAMESPACE, label_selector=f"{DOMAIN}/owner-id")
    return {item.metadata.name: item.metadata.resource_version for item in items.items}


def audit_offset(plane: Plane) -> int:
    time.sleep(0.5)  # the API server flushes its audit buffer
    return plane.audit_log.stat().st_size if plane.audit_log.exists() else 0


def writes_of(plane: Plane, offset: int, instance: str) -> list[dict[str, Any]]:
    """The successful writes in the namespace since ``offset`` by the process named ``instance``."""
    time.sleep(0.5)
    found = []
    with plane.audit_log.open("rb") as log:
        log.seek(offset)
        for line in log:
            event = json.loads(line)
            ref = event.get("objectRef") or {}
            code = (event.get("responseStatus") or {}).get("code", 0)
            if (event.get("stage") == "ResponseComplete" and event.get("verb") in WRITES and 200 <= code < 300
                    and str(event.get("userAgent") or "").endswith(f"({instance})")
                    and ref.get("namespace") == NAMESPACE):
                found.append({"verb": event["verb"], "resource": ref.get("resource"),
                              "subresource": ref.get("subresource", ""), "name": ref.get("name")})
    return found


def reads_standard(plane: Plane, offset: int, instance: str) -> bool:
    """Whether the process named ``instance`` listed or watched the standard ClusterProfiles since ``offset``."""
    with plane.audit_log.open("rb") as log:
        log.seek(offset)
        for line in log:
            event = json.loads(line)
            ref = event.get("objectRef") or {}
            if (ref.get("apiGroup") == "multicluster.x-k8s.io" and event.get("verb") in ("list", "watch")
                    and str(event.get("userAgent") or "").endswith(f"({instance})")):
                return True
    return False


def take_over(plane: Plane, tmp_path: Path, name: str, source: Path | None) -> tuple[OperatorProcess, float]:
    """Start an operator and wait until it has passed every Application and all have settled."""
    started = time.monotonic()
    operator = run_operator(plane, name, tmp_path, source)

    def done() -> bool:
        if (exited := operator.exited()) is not None:
            pytest.fail(exited)
        passed = {str(entry.get("name")) for entry in operator.passes()}  # whatever each pass's outcome
        return set(SHAPES) - {"suspended"} <= passed and settled(plane) is not None

    wait_until(done, 300, f"{name} to pass every Application")
    return operator, time.monotonic() - started


def assert_no_object_written(plane: Plane, offset: int, instance: str, before: dict[str, str],
                             statuses: dict[str, dict[str, Any]]) -> Counter[str]:
    """What an upgrade or a downgrade must not do; the status writes per Application."""
    writes = writes_of(plane, offset, instance)
    assert any(w["resource"] == "leases" for w in writes), "no write of the process found: the audit filter is wrong"
    to_objects = [w for w in writes if w["resource"] not in ("applications", "leases")]  # leases: the election's
    assert to_objects == [], to_objects[:10]  # no object written, no Event posted (Ready was already told)
    assert [w for w in writes if w["verb"] in ("delete", "deletecollection")] == []
    status_writes = Counter(str(w["name"]) for w in writes
                            if w["resource"] == "applications" and w["subresource"] == "status")
    assert all(count <= 1 for count in status_writes.values()), status_writes
    assert [w for w in writes if w["resource"] == "applications" and w["subresource"] != "status"] == []
    assert owned_configmaps(plane) == before  # nothing deleted, created or rewritten: the same versions
    now = settled(plane)
    assert now is not None
    for name, status in statuses.items():  # the same state, reason and inventory as before
        assert now[name].get("state") == status.get("state"), name
        assert now[name].get("compactInventory") == status.get("compactInventory"), name
    return status_writes


def test_an_upgrade_from_the_previous_release_and_back_writes_no_object(plane: Plane, tmp_path: Path) -> None:
    release = previous_release()
    source = extract_release(release["commit"], tmp_path / "release")
    install_crds(plane, source / "crds")
    install_crds(plane, STANDARD_CRDS)  # a hub with a cluster inventory before the upgrade
    client.CoreV1Api(plane.api).create_namespace({"metadata": {"name": NAMESPACE}})
    standard = client.CustomObjectsApi(plane.api).create_namespaced_custom_object(
        "multicluster.x-k8s.io", "v1alpha1", NAMESPACE, "clusterprofiles", {
            "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": "inventory", "namespace": NAMESPACE}, "spec": {"clusterManager": {"name": "e2e"}}})
    timings: dict[str, float] = {}

    started = time.monotonic()
    old = run_operator(plane, "previous", tmp_path, source)
    custom = client.CustomObjectsApi(plane.api)
    for name, (spec, _, _, _) in SHAPES.items():
        custom.create_namespaced_custom_object(DOMAIN, "v1alpha1", NAMESPACE, "applications", {
            "apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec})
    statuses = wait_until(lambda: settled(plane), 600, f"release {release['version']}'s Applications to settle")
    timings["previous release: every shape settled"] = time.monotonic() - started
    assert len(statuses["big"].get("compactInventory") or {}) > 0  # the release's own encoding
    old.stop(timeout=60)
    assert old.process.returncode == 0, old.log_path.read_text()[-3000:]
    before = owned_configmaps(plane)
    assert len(before) == 3 + BIG + 2  # few, big, dependent: nothing of the waiting or suspended ones

    # Upgrade: this version's CRDs (the chart's CRD step), then this version's operator.
    install_crds(plane, ROOT / "crds")
    offset = audit_offset(plane)
    new, timings["upgrade: every Application passed"] = take_over(plane, tmp_path, "current", None)
    new.stop(timeout=60)
    upgraded = assert_no_object_written(plane, offset, "current", before, statuses)
    assert reads_standard(plane, offset, "current")  # it did read the inventory it must not write

    # Downgrade by one release: the chart renders the CRDs as templates, so they go back too.
    install_crds(plane, source / "crds")
    offset = audit_offset(plane)
    down, timings["downgrade: every Application passed"] = take_over(plane, tmp_path, "downgraded", source)
    down.stop(timeout=60)
    downgraded = assert_no_object_written(plane, offset, "downgraded", before, statuses)
    now = client.CustomObjectsApi(plane.api).get_namespaced_custom_object(
        "multicluster.x-k8s.io", "v1alpha1", NAMESPACE, "clusterprofiles", "inventory")
    assert now["metadata"]["resourceVersion"] == standard["metadata"]["resourceVersion"]  # never written
    sys.stdout.write(f"\nupgrade from {release['version']} ({release['commit'][:7]}): "
                     f"status writes {dict(upgraded)}, downgrade: {dict(downgraded)}\n")
    for phase, seconds in timings.items():
        sys.stdout.write(f"  {phase}: {seconds:.1f} s\n")
