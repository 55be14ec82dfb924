"""Two instances of the operator on one control plane, one Lease (docs/operator.md#leader-election).

Each test runs two ``oam-operator run`` host processes with the same settings in its own
namespace (the Lease's too); the kill and pause tests with short lease settings (6s/4s/1s) to
keep their runtime small, the hand-over test with the defaults (15s/10s/2s). The
API server writes an audit log (a control plane of this module's own, minimal profile: ConfigMaps
need no controllers), and each instance's user agent names it (``POD_NAME``), so the tests count
every write each instance made to each object — what "no duplicate writes" means.

- kill -9 of the leader mid-apply of a 300-object Application: the standby finishes it; every
  object is in the inventory (0 untracked); every write of the killed leader landed before the
  standby's first, and no instance wrote an object twice.
- SIGSTOP of the leader mid-apply past its lease: the standby takes over and finishes; the paused
  one, resumed, sends no write and stands by (the same process).
- the leader cut off from the API server (a proxy that stops forwarding) mid-apply: it stops by
  itself at its renew deadline, before the standby takes over, and stays up.
- one instance, its API server down for longer than the renew deadline: the process stays up,
  its gauge and ``/healthz`` show the loss, it leads again once the server is back and applies
  the changes made meanwhile.
- SIGTERM of the leader: it releases the Lease and the standby leads within about a second.
- a rolling upgrade as the chart's RollingUpdate does it (a new instance, SIGTERM of the old
  standby, another new one, SIGTERM of the old leader) while 200 Applications are applied: all
  Ready, none ever in Error, no ConfigMap written by two instances, none untracked, exits 0.

No object is written by both instances: an object the old leader created after its last status
write is in the inventory without ``lastAppliedAt``, and the new leader, finding our owner label
and the same digest on it, counts it as applied (docs/reconciler.md#applied-before-recorded).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from oam_operator.controller.reconcile.inventorycodec import read_inventory
from tools.chaos.proxy import Blackhole
from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import api_client, require_cluster, wait_until
from tools.operatorprocess import OperatorProcess

# Lease timings (renew deadlines, a paused leader's takeover) are measured against the clock: alone.
pytestmark = [pytest.mark.cluster, pytest.mark.run_alone]

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = "oam-operator.dev"
LEASE = ("--leader-election-lease-duration", "6s", "--leader-election-renew-deadline", "4s",
         "--leader-election-retry-period", "1s")
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass
class Plane:
    handle: dc.ClusterHandle
    audit_log: Path
    api: Any
    control: dc.ControlPlane


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    run_dir = tmp_path_factory.mktemp("audited")
    try:
        started = dc.start("minimal", run_dir=run_dir / "run", audit=True)
    except dc.DevclusterError as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))
    api = api_client(started.handle)
    extensions = client.ApiextensionsV1Api(api)
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        extensions.create_custom_resource_definition(yaml.safe_load(path.read_text()))

    def established() -> bool:
        return all(any(c.type == "Established" and c.status == "True"
                       for c in (extensions.read_custom_resource_definition(name).status.conditions or []))
                   for name in ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev"))

    wait_until(established, 60, "the CRDs to be Established")
    try:
        yield Plane(started.handle, run_dir / "run" / "logs" / "audit.log", api, started)
    finally:
        api.close()
        started.stop()


@pytest.fixture
def namespace(plane: Plane, request: pytest.FixtureRequest) -> str:
    name = "le-" + request.node.name.removeprefix("test_").replace("_", "-")[:40].strip("-")
    client.CoreV1Api(plane.api).create_namespace({"metadata": {"name": name}})
    return name


@pytest.fixture
def start(plane: Plane, namespace: str, tmp_path: Path,
          request: pytest.FixtureRequest) -> Iterator[Callable[..., OperatorProcess]]:
    started: list[OperatorProcess] = []

    def run(name: str, lease: tuple[str, ...] = LEASE, kubeconfig: str | None = None,
            env: dict[str, str] | None = None) -> OperatorProcess:
        log = tmp_path / f"{name}-{len(started)}.log"
        instance = OperatorProcess.start(
            log, kubeconfig=kubeconfig or plane.handle.kubeconfig, namespaces=[namespace],
            operator_namespace=namespace, name=name, env=env,
            extra=["--use-operator-identity", "--default-profile", "", *lease])
        started.append(instance)
        # the health server starts after the metrics one: a test may ask it next
        return instance.wait_serving(60)

    yield run
    for instance in started:
        instance.stop()
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        for instance in started:
            sys.stderr.write(f"\n--- {instance.name} ---\n{instance.log_path.read_text()[-4000:]}\n")


# -- helpers --------------------------------------------------------------------------------------


def holder(plane: Plane, namespace: str) -> str:
    try:
        lease = client.CoordinationV1Api(plane.api).read_namespaced_lease("oam-operator", namespace)
    except client.ApiException as error:
        if error.status == 404:
            return ""
        raise
    return str(lease.spec.holder_identity or "")


def role_and_losses(instance: OperatorProcess) -> tuple[str, int]:
    """What ``/healthz`` says of the instance's leadership (200 whatever the role)."""
    status, answer = instance.health()
    assert status == 200
    return str(answer["leadership"]["role"]), int(answer["leadership"]["losses"])


def leader_of(plane: Plane, namespace: str, *instances: OperatorProcess) -> OperatorProcess:
    current = holder(plane, namespace)
    return next(i for i in instances if current.startswith(f"{i.name}_"))


def apply_app(plane: Plane, namespace: str, name: str, objects: int) -> None:
    components = [{"name": f"c{i:03d}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-{i:03d}"}, "data": {"k": str(i)}}}}
        for i in range(objects)]
    body = {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"components": components}}
    client.CustomObjectsApi(plane.api).create_namespaced_custom_object(DOMAIN, "v1alpha1", namespace,
                                                                        "applications", body)


def app(plane: Plane, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = client.CustomObjectsApi(plane.api).get_namespaced_custom_object(
        DOMAIN, "v1alpha1", namespace, "applications", name)
    return found


def wait_ready(plane: Plane, namespace: str, name: str, objects: int, timeout: float = 180) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        status = app(plane, namespace, name).get("status") or {}
        return status if status.get("state") == "Ready" and status.get("objects") == objects else None

    result: dict[str, Any] = wait_until(ready, timeout, f"{name} Ready with {objects} objects")
    return result


def owned_configmaps(plane: Plane, namespace: str) -> set[str]:
    items = client.CoreV1Api(plane.api).list_namespaced_config_map(namespace, label_selector=f"{DOMAIN}/owner-id")
    return {item.metadata.name for item in items.items}


def inventory_names(status: dict[str, Any]) -> set[str]:
    return {item.name for item in read_inventory(status)}


def audit_writes(plane: Plane, namespace: str) -> list[dict[str, Any]]:
    """Successful writes the API server recorded in ``namespace`` by an instance (its user agent)."""
    writes = []
    for line in plane.audit_log.read_text(errors="replace").splitlines():
        event = json.loads(line)
        ref = event.get("objectRef") or {}
        code = (event.get("responseStatus") or {}).get("code", 0)
        agent = str(event.get("userAgent") or "")
        if (ref.get("namespace") == namespace and event.get("verb") in WRITES and 200 <= code < 300
                and agent.startswith("oam-operator/") and event.get("stage") == "ResponseComplete"):
            writes.append({"agent": agent, "verb": event["verb"], "resource": ref.get("resource"),
                           "name": ref.get("name"), "at": datetime.fromisoformat(event["stageTimestamp"])})
    return writes


def by_instance(write: dict[str, Any]) -> str:
    return str(write["agent"]).rsplit("(", 1)[-1].rstrip(")")


def add_extra_config_map(plane: Plane, namespace: str, name: str = "small", objects: int = 4,
                         timeout: float = 60) -> None:
    """Add a ConfigMap ``<name>-extra`` to the Application ``name`` and wait until its ``objects`` are Ready."""
    patch = {"spec": {"components": [*app(plane, namespace, name)["spec"]["components"], {
        "name": "extra", "type": "passthrough", "properties": {"object": {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-extra"}, "data": {"k": "x"}}}}]}}
    client.CustomObjectsApi(plane.api).patch_namespaced_custom_object(DOMAIN, "v1alpha1", namespace, "applications",
                                                                       name, patch)
    wait_ready(plane, namespace, name, objects, timeout=timeout)


def assert_one_writer_at_a_time(plane: Plane, namespace: str, first: str, second: str) -> None:
    """No split brain: every write of ``first`` landed before the first write of ``second``; each
    object has at most one write, and none was written by both (see the module docstring)."""
    writes = audit_writes(plane, namespace)
    of_first = [w for w in writes if by_instance(w) == first]
    of_second = [w for w in writes if by_instance(w) == second]
    assert of_first and of_second
    assert max(w["at"] for w in of_first) < min(w["at"] for w in of_second)
    configmaps = [w for w in writes if w["resource"] == "configmaps"]
    per_writer = Counter((by_instance(w), str(w["name"])) for w in configmaps)
    assert set(per_writer.values()) == {1}, [key for key, count in per_writer.items() if count > 1][:10]
    firsts = {str(w["name"]) for w in of_first if w["resource"] == "configmaps"}
    seconds = {str(w["name"]) for w in of_second if w["resource"] == "configmaps"}
    assert sorted(firsts & seconds) == []
    assert firsts and seconds  # the hand-over was mid-apply: each wrote some of the objects


def wait_objects(plane: Plane, namespace: str, at_least: int) -> int:
    count: int = wait_until(lambda: len(owned_configmaps(plane, namespace)) >= at_least and
                            len(owned_configmaps(plane, namespace)), 120, f"{at_least} objects created", step=0.05)
    return count


# -- the tests ------------------------------------------------------------------------------------


def test_kill_9_of_the_leader_mid_apply_the_standby_finishes_without_double_work(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    a = start("inst-a")
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    b = start("inst-b")
    assert b.leader_gauge() == 0.0 and a.leader_gauge() == 1.0
    apply_app(plane, namespace, "big", 300)
    created = wait_objects(plane, namespace, 40)
    a.process.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    a.process.wait()
    assert created < 300, "the apply finished before the kill; the test needs it mid-way"
    wait_until(lambda: b.leader_gauge() == 1.0, 30, "inst-b to lead")
    took_over = time.monotonic() - killed
    status = wait_ready(plane, namespace, "big", 300)
    names = {f"big-{i:03d}" for i in range(300)}
    assert owned_configmaps(plane, namespace) == names  # 0 untracked: the owner label on exactly these
    assert inventory_names(status) == names
    assert_one_writer_at_a_time(plane, namespace, "inst-a", "inst-b")
    assert took_over <= 6 + 1 + 1  # the lease duration after the last renewal, plus the retry period
    assert leader_of(plane, namespace, a, b) is b


def test_a_paused_leader_is_replaced_and_once_resumed_writes_nothing(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    a = start("inst-a")
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    b = start("inst-b")
    apply_app(plane, namespace, "work", 300)
    wait_objects(plane, namespace, 40)
    a.process.send_signal(signal.SIGSTOP)  # its passes are mid-way: the next write is already due
    wait_until(lambda: b.leader_gauge() == 1.0, 30, "inst-b to take over from the paused leader")
    assert leader_of(plane, namespace, a, b) is b
    wait_ready(plane, namespace, "work", 300)
    resumed = datetime.now(UTC)
    a.process.send_signal(signal.SIGCONT)
    # It lost the Lease: it stops and forgets, and stands by again in the same process.
    wait_until(lambda: any(e.get("msg") == "standing by again after losing the Lease" for e in a.logs()), 20,
               "the resumed instance to stand by again")
    time.sleep(1)
    late = [w for w in audit_writes(plane, namespace) if by_instance(w) == "inst-a" and w["at"] >= resumed
            and w["resource"] != "leases"]
    assert late == []
    assert any(e.get("msg", "").startswith("leader election lost") for e in a.logs())
    assert a.process.poll() is None and a.leader_gauge() == 0.0
    wait_until(lambda: role_and_losses(a) == ("standby", 1), 30,
               "/healthz to say standby after one loss (kopf caches it for 10 s)")
    names = {f"work-{i:03d}" for i in range(300)}
    assert owned_configmaps(plane, namespace) == names
    assert_one_writer_at_a_time(plane, namespace, "inst-a", "inst-b")
    assert b.process.poll() is None and b.leader_gauge() == 1.0


def test_a_leader_cut_off_from_the_api_server_stops_before_the_standby_starts(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess], tmp_path: Path) -> None:
    blackhole = Blackhole(plane.handle.server)
    a = start("inst-a", LEASE, blackhole.kubeconfig(plane.handle.kubeconfig, tmp_path / "through-proxy.kubeconfig"))
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    b = start("inst-b")
    apply_app(plane, namespace, "cut", 300)
    wait_objects(plane, namespace, 40)
    blackhole.cut.set()
    cut = time.time()
    wait_until(lambda: any(str(e.get("msg", "")).startswith("leader election lost") for e in a.logs()), 30,
               "inst-a to stop by itself at its renew deadline")
    wait_until(lambda: b.leader_gauge() == 1.0, 30, "inst-b to take over")
    led = next(stamp(e) for e in b.logs() if e.get("msg") == "became the leader")
    lost = stamp(next(e for e in a.logs() if str(e.get("msg", "")).startswith("leader election lost")))
    assert lost < led  # stopped before the standby started (6s lease − 4s renew deadline = 2 s apart)
    assert lost - cut <= 4 + 1  # the renew deadline after its last renewal, at most, plus the watchdog
    assert a.process.poll() is None and a.leader_gauge() == 0.0  # up, not leading: no exit
    wait_ready(plane, namespace, "cut", 300)
    assert owned_configmaps(plane, namespace) == {f"cut-{i:03d}" for i in range(300)}
    assert_one_writer_at_a_time(plane, namespace, "inst-a", "inst-b")


def stamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["ts"]).replace("Z", "+00:00")).timestamp()


def test_sigterm_hands_the_lease_over_at_once(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    a = start("inst-a", ())  # the default lease settings: a hand-over must not wait for them
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    b = start("inst-b", ())
    assert b.leader_gauge() == 0.0
    # Liveness is 200 for the standby too, and says which one it is.
    status, answer = b.health()
    assert status == 200 and answer["leadership"]["role"] == "standby"
    assert answer["leadership"]["holder"].startswith("inst-a_")
    apply_app(plane, namespace, "small", 3)
    wait_ready(plane, namespace, "small", 3)
    stopping = time.monotonic()
    a.process.send_signal(signal.SIGTERM)
    wait_until(lambda: holder(plane, namespace).startswith("inst-b_"), 10, "inst-b to hold the Lease", step=0.05)
    handed_over = time.monotonic() - stopping
    assert a.process.wait(timeout=30) == 0
    assert handed_over < 5  # far sooner than the lease duration (15 s): released, not expired
    assert any(e.get("msg") == "released the Lease" for e in a.logs())
    wait_until(lambda: b.leader_gauge() == 1.0, 5, "inst-b's gauge to say it leads")
    # The new leader reconciles: a change is applied by inst-b.
    add_extra_config_map(plane, namespace)
    extra = [w for w in audit_writes(plane, namespace) if w["name"] == "small-extra"]
    assert extra and {by_instance(w) for w in extra} == {"inst-b"}


def test_a_container_restarted_after_kill_9_takes_its_own_lease_at_once(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    """Issue 43: the restarted container of the same Pod (its name and UID: the chart's POD_UID)
    takes the Lease its dead predecessor held without waiting for it to expire (60 s here); a
    standby of another Pod waits for the expiry, as before."""
    lease = ("--leader-election-lease-duration", "60s", "--leader-election-renew-deadline", "40s",
             "--leader-election-retry-period", "2s")
    pod = {"POD_UID": "4f1c2b9e-0d7a-4c55-9a51-2b8f0c6d1e3a"}
    first = start("inst-a", lease, env=pod)
    wait_until(lambda: holder(plane, namespace).startswith(f"inst-a_{pod['POD_UID']}_"), 30, "inst-a to lead")
    dead = holder(plane, namespace)
    other = start("inst-b", lease, env={"POD_UID": "9a51c2b8-0d7a-4c55-4f1c-2b8f0c6d1e3a"})
    apply_app(plane, namespace, "small", 3)
    wait_ready(plane, namespace, "small", 3)
    first.kill()
    restarted = start("inst-a", lease, env=pod)
    wait_until(lambda: holder(plane, namespace) not in ("", dead), 30,
               "the restarted container to take the Lease of its dead predecessor (60 s from expiring)")
    assert holder(plane, namespace).startswith(f"inst-a_{pod['POD_UID']}_")
    wait_until(lambda: restarted.leader_gauge() == 1.0, 10, "the restarted container's gauge to say it leads")
    assert other.leader_gauge() == 0.0  # the other Pod's standby still waits
    add_extra_config_map(plane, namespace)


def test_a_deletion_the_leader_finished_leaves_the_standby_nothing_to_do(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    """The standby's deletion handler waits for the Lease; once the leader removed the Application it
    ends without a write, so taking over later runs no stale deletion."""
    a = start("inst-a", ())
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    b = start("inst-b", ())
    apply_app(plane, namespace, "gone", 3)
    wait_ready(plane, namespace, "gone", 3)
    custom = client.CustomObjectsApi(plane.api)
    custom.delete_namespaced_custom_object(DOMAIN, "v1alpha1", namespace, "applications", "gone")

    def deleted() -> bool:
        try:
            app(plane, namespace, "gone")
        except client.ApiException as error:
            return error.status == 404
        return False

    wait_until(deleted, 60, "the leader to delete the Application")
    time.sleep(6)  # the standby's handler checks every 5 s whether it is still there
    a.process.send_signal(signal.SIGTERM)
    assert a.process.wait(timeout=30) == 0
    wait_until(lambda: b.leader_gauge() == 1.0, 10, "inst-b to lead")
    time.sleep(2)
    assert [e for e in b.logs() if e.get("msg") == "pass finished"] == []
    assert [w for w in audit_writes(plane, namespace) if by_instance(w) == "inst-b" and w["resource"] != "leases"] == []
    assert not [e for e in b.logs() if e.get("level") == "error"]


def test_an_api_server_down_past_the_renew_deadline_costs_the_lease_not_the_process(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    """One instance, leader election on: the API server stops for 8 s (the renew deadline is 4 s),
    then starts again. The leader stops at its deadline, shows it (gauge 0, ``/healthz`` role
    ``lost``), forgets, stands by, leads again without a restart, and applies what changed while
    it was not leading: a new component and a hand edit of an owned object."""
    a = start("inst-a")
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    pid = a.process.pid
    apply_app(plane, namespace, "steady", 5)
    wait_ready(plane, namespace, "steady", 5)
    gauges: list[float | None] = []
    watching = threading.Event()

    def watch_role() -> None:  # the operator's own metrics answer while its API server is down
        while not watching.wait(0.25):
            gauges.append(a.leader_gauge())

    watcher = threading.Thread(target=watch_role, daemon=True)
    watcher.start()
    stopped = time.time()
    plane.control.stop_component("kube-apiserver")
    time.sleep(8)  # down for twice the renew deadline
    plane.control.start_component("kube-apiserver")
    back = time.time()
    # Changes the operator must not miss: made as the server is back, before or while it leads again.
    core = client.CoreV1Api(plane.api)
    core.patch_namespaced_config_map("steady-000", namespace, {"data": {"k": "edited by hand"}})
    add_extra_config_map(plane, namespace, "steady", 6, timeout=120)
    wait_until(lambda: core.read_namespaced_config_map("steady-000", namespace).data == {"k": "0"}, 120,
               "the hand edit made during the outage to be corrected")
    wait_until(lambda: a.leader_gauge() == 1.0, 30, "inst-a to lead again")
    watching.set()
    watcher.join()
    assert a.process.poll() is None and a.process.pid == pid  # the same process throughout
    assert 0.0 in gauges  # the loss was visible while it lasted (kopf caches /healthz for 10 s: see below)
    messages = [str(e.get("msg", "")) for e in a.logs()]
    assert sum(m.startswith("leader election lost") for m in messages) == 1
    assert messages.count("standing by again after losing the Lease") == 1
    assert messages.count("became the leader") == 2
    wait_until(lambda: role_and_losses(a) == ("leader", 1), 30, "/healthz to say it leads again after one loss")
    lost = stamp(next(e for e in a.logs() if str(e.get("msg", "")).startswith("leader election lost")))
    again = stamp([e for e in a.logs() if e.get("msg") == "became the leader"][-1])
    sys.stdout.write(f"\nAPI server down {back - stopped:.1f} s: the Lease lost {lost - stopped:.1f} s after the stop, "
                     f"led again {again - back:+.1f} s from its /readyz answering 200\n")


def apply_fleet(plane: Plane, namespace: str, count: int, objects: int) -> list[str]:
    names = [f"fleet-{i:03d}" for i in range(count)]
    for name in names:
        apply_app(plane, namespace, name, objects)
    return names


class StateWatch:
    """Every ``status.state`` each Application of ``namespace`` passed through (a watch, so a
    short-lived Error between two polls is seen too)."""

    def __init__(self, plane: Plane, namespace: str) -> None:
        self.seen: dict[str, set[str]] = {}
        self.stopping = threading.Event()
        self.custom = client.CustomObjectsApi(plane.api)
        self.namespace = namespace
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        from kubernetes import watch
        version = ""
        while not self.stopping.is_set():
            stream = watch.Watch()
            kwargs: dict[str, Any] = {"timeout_seconds": 2}
            if version:
                kwargs["resource_version"] = version
            for event in stream.stream(self.custom.list_namespaced_custom_object, DOMAIN, "v1alpha1",
                                       self.namespace, "applications", **kwargs):
                item = event["object"]
                version = str(item["metadata"]["resourceVersion"])
                state = (item.get("status") or {}).get("state")
                if state:
                    self.seen.setdefault(item["metadata"]["name"], set()).add(str(state))
                if self.stopping.is_set():
                    stream.stop()

    def ready(self) -> int:
        """How many Applications were seen Ready (``list`` copies the values in one step)."""
        return sum("Ready" in states for states in list(self.seen.values()))

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)


def test_a_rolling_upgrade_during_a_fleet_of_200_applications(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    """The chart's RollingUpdate (2 replicas, maxUnavailable 0, maxSurge 1) while 200 Applications of
    3 ConfigMaps are applied: a new instance, SIGTERM of the old standby, another new one, SIGTERM of
    the old leader (it releases the Lease). Every Application ends Ready, none was ever in Error, no
    ConfigMap was written by two instances, none is untracked, and the old instances exit 0."""
    began = time.monotonic()
    old_leader = start("old-a")
    wait_until(lambda: holder(plane, namespace).startswith("old-a_"), 30, "old-a to lead")
    old_standby = start("old-b")
    states = StateWatch(plane, namespace)
    new_c = start("new-c")
    old_standby.process.send_signal(signal.SIGTERM)
    assert old_standby.process.wait(timeout=30) == 0
    new_d = start("new-d")
    # The fleet arrives and the old leader gets its SIGTERM as soon as 10 are Ready: by progress, not
    # by time, so it is mid-apply however fast this machine is.
    fleet = [f"fleet-{i:03d}" for i in range(200)]
    creating = threading.Thread(target=apply_fleet, args=(plane, namespace, 200, 3), daemon=True)
    creating.start()
    wait_until(lambda: states.ready() >= 10, 120, "10 of the fleet to be Ready", step=0.02)
    old_leader.process.send_signal(signal.SIGTERM)
    ready_before_handover = states.ready()
    creating.join(timeout=120)
    assert old_leader.process.wait(timeout=60) == 0
    assert any(e.get("msg") == "released the Lease" for e in old_leader.logs())
    wait_until(lambda: holder(plane, namespace)[:6] in {"new-c_", "new-d_"}, 10, "a new instance to lead")
    inventories: dict[str, set[str]] = {}
    for name in fleet:
        inventories[name] = inventory_names(wait_ready(plane, namespace, name, 3, timeout=240))
    states.stop()
    took = time.monotonic() - began
    expected = {f"{name}-{i:03d}" for name in fleet for i in range(3)}
    assert set().union(*inventories.values()) == expected
    assert owned_configmaps(plane, namespace) == expected  # 0 untracked
    assert sorted(n for n, seen in states.seen.items() if "Error" in seen) == []
    assert set(states.seen) == set(fleet)
    writers: dict[str, set[str]] = {}
    for write in audit_writes(plane, namespace):
        if write["resource"] == "configmaps":
            writers.setdefault(str(write["name"]), set()).add(by_instance(write))
    assert sorted(n for n, who in writers.items() if len(who) > 1) == []
    assert set(writers) == expected
    leader = leader_of(plane, namespace, new_c, new_d)
    assert leader.leader_gauge() == 1.0 and new_c.process.poll() is None and new_d.process.poll() is None
    wrote = Counter(who for names in writers.values() for who in names)
    finished = {str(w["name"]) for w in audit_writes(plane, namespace)
                if w["resource"] == "applications" and by_instance(w) == leader.name}
    assert finished  # handed over mid-fleet: the new leader finished some
    sys.stdout.write(f"\nrolling upgrade over 200 Applications: {took:.1f} s from the first start to all Ready; "
                     f"{ready_before_handover} Ready at the leader's SIGTERM; ConfigMaps written per instance: "
                     f"{dict(sorted(wrote.items()))}; Applications the new leader wrote: {len(finished)}\n")


def application_patches(plane: Plane, namespace: str, name: str) -> list[tuple[str, int]]:
    """(user agent's product, response code) of every patch of the Application itself (not its
    status) that the API server recorded."""
    found = []
    for line in plane.audit_log.read_text(errors="replace").splitlines():
        event = json.loads(line)
        ref = event.get("objectRef") or {}
        if (ref.get("namespace") == namespace and ref.get("resource") == "applications" and ref.get("name") == name
                and not ref.get("subresource") and event.get("verb") == "patch"
                and event.get("stage") == "ResponseComplete"):
            found.append((str(event.get("userAgent") or "").split("/", 1)[0],
                          int((event.get("responseStatus") or {}).get("code", 0))))
    return found


def test_only_the_leader_adds_the_finalizer(plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    """Issue 36: both instances' kopf used to add it, and one of the two patches failed with 422."""
    start("inst-a")
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    start("inst-b")
    apply_app(plane, namespace, "work", 3)
    ready = wait_ready(plane, namespace, "work", 3)
    assert ready["state"] == "Ready"
    time.sleep(2)  # a late patch of the standby would land by now
    assert application_patches(plane, namespace, "work") == [("kopf", 200)]
    assert DOMAIN in (app(plane, namespace, "work")["metadata"].get("finalizers") or [])


def test_an_application_created_while_no_instance_led_gets_its_finalizer_from_the_next_leader(
        plane: Plane, namespace: str, start: Callable[..., OperatorProcess]) -> None:
    a = start("inst-a")
    wait_until(lambda: holder(plane, namespace).startswith("inst-a_"), 30, "inst-a to lead")
    a.process.send_signal(signal.SIGSTOP)  # the leader is paused: nobody adds a finalizer now
    try:
        apply_app(plane, namespace, "work", 3)
        b = start("inst-b")
        time.sleep(2)
        assert DOMAIN not in (app(plane, namespace, "work")["metadata"].get("finalizers") or [])  # a standby adds none
        # Its start, then a whole lease duration of an unchanged record: 60 s leaves room for a loaded machine.
        wait_until(lambda: b.leader_gauge() == 1.0, 60, "inst-b to take over from the paused leader")
        wait_ready(plane, namespace, "work", 3)
        assert DOMAIN in (app(plane, namespace, "work")["metadata"].get("finalizers") or [])
        assert any(e.get("msg") == "finalizer added on taking over" and e.get("name") == "work" for e in b.logs())
    finally:
        a.process.send_signal(signal.SIGCONT)
