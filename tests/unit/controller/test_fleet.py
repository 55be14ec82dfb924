"""A topology policy's cluster Applications (docs/multicluster.md#topology): what they are, which
clusters are selected, what a pass applies and says, and which profile events wake it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from oam_operator.controller.reconcile import fleet
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.operatorpolicies.topology import Topology
from oam_operator.reconciler.cachedreads import CachedAnswer
from oam_operator.reconciler.errors import PermanentApiError
from oam_operator.reconciler.objects import ObjectRef
from tests.unit import unitkit
from tests.unit.unitkit import FakeReconciler, application, compact, item_of, outcome, pass_environment

DOMAIN = "oam-operator.dev"


def profile(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "spec": {}}


PROFILES = {"eu": profile("eu", env="prod", region="eu"), "us": profile("us", env="prod", region="us"),
            "lab": profile("lab", env="test")}


def fleet_app(properties: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
    policy = {"name": "where", "type": "topology",
              "properties": properties or {"clusterSelector": {"matchLabels": {"env": "prod"}}}}
    return application(policies=[policy, {"name": "r", "type": "reconciliation", "properties": {"interval": "5m"}}],
                       **kwargs)


def test_a_cluster_application_is_the_fleet_applications_spec_for_one_profile() -> None:
    body = fleet_app()
    made = fleet.child(body, "eu", DOMAIN)
    assert made["metadata"] == {
        "name": "web-eu", "namespace": "shop", "labels": {"oam-operator.dev/fleet": "uid-web"},
        "annotations": {"oam-operator.dev/fleet-cluster": "eu",
                        "oam-operator.dev/status-hint": "has-observed-generation,has-ready-condition",
                        "oam-operator.dev/fleet-revision": "0"},
        "ownerReferences": [{"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "name": "web",
                             "uid": "uid-web", "controller": True, "blockOwnerDeletion": True}]}
    assert made["spec"] == {"components": body["spec"]["components"], "profile": "eu",
                            "policies": [{"name": "r", "type": "reconciliation", "properties": {"interval": "5m"}}]}
    assert "profile" not in body["spec"]  # the fleet Application's own spec is not touched
    alone = fleet.child(application(policies=[body["spec"]["policies"][0]]), "us", DOMAIN)
    assert "policies" not in alone["spec"]


def test_a_long_name_is_shortened_with_a_digest() -> None:
    name = fleet.child_name("a" * 200, "b" * 100)
    assert len(name) == 253 and name.startswith("a" * 200 + "-" + "b" * 41)
    assert name != fleet.child_name("a" * 200, "b" * 99 + "c") and fleet.child_name("web", "eu") == "web-eu"


def test_the_selection_is_sorted_and_names_only_existing_profiles() -> None:
    assert fleet.selected(Topology("p", match_labels=(("env", "prod"),)), PROFILES) == ["eu", "us"]
    assert fleet.selected(Topology("p", clusters=("us", "gone", "lab")), PROFILES) == ["lab", "us"]
    assert fleet.selected(Topology("p", match_labels=(("env", "staging"),)), PROFILES) == []


def test_a_clusters_line_reads_its_cluster_application() -> None:
    ready = {"metadata": {"generation": 3}, "status": {"observedGeneration": 3, "state": "Ready",
                                                      "summary": "Applied revision 2: 4 objects ready",
                                                      "revision": 2, "objects": 4, "readyObjects": 4}}
    line = fleet.cluster_state("eu", "web-eu", ready, DOMAIN)
    assert line.ready and line.to_json() == {"name": "eu", "application": "web-eu", "state": "Ready",
                                             "message": "Applied revision 2: 4 objects ready", "revision": 2,
                                             "objects": 4, "readyObjects": 4}
    older = {"metadata": {"generation": 4}, "status": ready["status"]}
    assert fleet.cluster_state("eu", "web-eu", older, DOMAIN).state == "Processing"
    missing = fleet.cluster_state("us", "web-us", None, DOMAIN)
    assert missing.to_json() == {"name": "us", "application": "web-us", "state": "Pending",
                                 "message": "not created yet"}
    assert fleet.summary([line, missing]) == "1/2"


@dataclass
class OperatorClient:
    """The operator's own client as the fleet pass uses it: the orphan annotations it patches, the
    cluster Applications it reads where the watch has no copy (none exists: 404)."""

    patches: list[tuple[str, Any]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        if (verb, method) == ("read", "GET"):
            self.reads.append(path)
            raise PermanentApiError("not found", status=404, reason="NotFound", verb=verb)
        assert (verb, method) == ("patch", "PATCH")
        self.patches.append((path, body))
        return {}


@dataclass
class Watched:
    """The watch's copies of the cluster Applications, by name."""

    found: dict[str, dict[str, Any]] = field(default_factory=dict)

    def lookup(self, ref: ObjectRef) -> CachedAnswer:
        assert (ref.group, ref.kind, ref.namespace) == ("oam-operator.dev", "Application", "shop")
        copy = self.found.get(ref.name)
        return CachedAnswer("present", copy) if copy is not None else CachedAnswer("absent")


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The reconciler of the test's passes: the objects each apply() got, and the client it was built with."""
    seen: dict[str, Any] = {"objects": [], "clients": []}
    fake = FakeReconciler()
    original = fake.apply

    def apply(inventory: Any, objects: list[dict[str, Any]], *args: Any, **kwargs: Any) -> bool:
        seen["objects"].append(objects)
        return original(inventory, objects, *args, **kwargs)

    fake.apply = apply  # type: ignore[method-assign]

    def build(domain: str, client: Any, options: Any) -> FakeReconciler:
        seen["clients"].append(client)
        return fake

    monkeypatch.setattr(unitkit, "_injected_reconciler", build)
    seen["fake"] = fake
    return seen


def environment(profiles: dict[str, dict[str, Any]], watched: Watched | None = None) -> Any:
    env = pass_environment(profiles=profiles)
    env.clients = TenantClients(OperatorClient())  # type: ignore[arg-type]
    env.cached_reads = watched or Watched()
    return env


def test_a_pass_applies_one_cluster_application_per_selected_profile_with_the_operators_identity(
        recorded: dict[str, Any]) -> None:
    ready = {"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "state": "Ready", "summary": "ok"}}
    env = environment(PROFILES, Watched({"web-eu": ready, "web-us": ready}))
    result = unitkit.run_apply(fleet_app(), Memory(), env)
    (objects,) = recorded["objects"]
    assert [(o["kind"], o["metadata"]["name"], o["spec"]["profile"]) for o in objects] == [
        ("Application", "web-eu", "eu"), ("Application", "web-us", "us")]
    assert recorded["clients"] == [env.clients.operator_client]
    assert outcome(result.status) == ("Ready", "Ready", "Applied revision 1: 2 clusters ready")
    assert result.status["clusterSummary"] == "2/2"
    assert [line["name"] for line in result.status["clusters"]] == ["eu", "us"]


def test_no_selected_cluster_waits_and_applies_nothing(recorded: dict[str, Any]) -> None:
    env = environment({"lab": PROFILES["lab"]})
    result = unitkit.run_apply(fleet_app(), Memory(), env)
    assert recorded["objects"] == []
    assert outcome(result.status) == ("Waiting", "NoClusters",
                                      'No ClusterProfile is selected by the topology policy "where"')
    assert (result.status["clusters"], result.status["clusterSummary"]) == ([], "0/0")


def test_orphan_annotates_a_removed_cluster_application_before_it_is_pruned(recorded: dict[str, Any]) -> None:
    env = environment({"eu": PROFILES["eu"]})
    held = [item_of(fleet.child(fleet_app(), cluster, DOMAIN)) for cluster in ("eu", "us")]
    body = fleet_app({"clusters": ["eu"], "onRemoval": "orphan"},
                     status={"observedGeneration": 2, "state": "Ready", "compactInventory": compact(*held)})
    unitkit.run_apply(body, Memory(), env)
    assert env.clients.operator_client.patches == [
        ("/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications/web-us",
         {"metadata": {"annotations": {"oam-operator.dev/abandon": "true"}}})]
    assert [o["metadata"]["name"] for o in recorded["objects"][0]] == ["web-eu"]
    # The watch has no copy of web-eu: it is read once, after the apply (what the status says), and
    # is not there yet. Without a rollout policy nothing is read before the apply.
    assert env.clients.operator_client.reads == ["/apis/oam-operator.dev/v1alpha1/namespaces/shop/applications/web-eu"]


def test_spec_profile_beside_a_topology_is_refused(recorded: dict[str, Any]) -> None:
    result = unitkit.run_apply(fleet_app(profile="eu"), Memory(), environment(PROFILES))
    assert outcome(result.status) == ("Error", "TransformFailed", (
        'policy "where": a topology policy chooses the clusters, and spec.profile is set too; set one of them'))
    assert recorded["objects"] == []


def test_profile_events_wake_the_fleet_applications_on_label_changes_only() -> None:
    from kubernetes.client import ApiClient, Configuration

    from oam_operator.controller.reconcile.settings import Settings
    from oam_operator.controller.service.runtime import Runtime
    from oam_operator.reconciler.client import ClusterClient

    configuration = Configuration()
    configuration.host = "http://127.0.0.1:9"
    runtime = Runtime(Settings(cluster_id="c"), ClusterClient(ApiClient(configuration)), None)
    runtime.memory.update({"u-fleet": Memory(status={"clusterSummary": "1/1"}),
                           "u-uses": Memory(status={"profile": "eu"}),
                           "u-other": Memory(status={"profile": "us"})})
    assert sorted(runtime.profile_changed("eu", profile("eu", env="prod"))) == ["u-fleet", "u-uses"]  # came
    assert runtime.profile_changed("eu", profile("eu", env="prod")) == []  # nothing changed
    assert runtime.profile_changed("eu", profile("eu", env="test")) == ["u-fleet"]  # labels
    changed = {**profile("eu", env="test"), "spec": {"capabilities": {"x": {}}}}
    assert runtime.profile_changed("eu", changed) == ["u-uses"]  # spec
    assert sorted(runtime.profile_changed("eu", None)) == ["u-fleet", "u-uses"]  # went
    assert "eu" not in runtime.profiles


def test_a_rollout_groups_the_clusters_in_waves_by_label_then_name() -> None:
    from oam_operator.operatorpolicies.rollout import Rollout

    profiles = {"a": profile("a", ring="2"), "b": profile("b", ring="1"), "c": profile("c"), "d": profile("d", ring="1")}
    assert fleet.groups(["a", "b", "c", "d"], profiles, Rollout("r", count=1, order_by="ring")) == [
        ["b"], ["d"], ["a"], ["c"]]
    assert fleet.groups(["a", "b", "c", "d"], profiles, Rollout("r", percent=50)) == [["a", "b"], ["c", "d"]]
    assert fleet.groups(["a", "b", "c"], profiles, Rollout("r", percent=1)) == [["a"], ["b"], ["c"]]
    assert fleet.groups(["a", "b"], profiles, None) == [["a", "b"]]
    tree = fleet.encoded([[fleet.child(fleet_app(), "b", DOMAIN, 1)], [fleet.child(fleet_app(), "a", DOMAIN, 1)]],
                         DOMAIN)
    assert [(o["metadata"]["name"], o["metadata"]["annotations"]["oam-operator.dev/apply-order"])
            for o in tree.objects] == [("web-b", "0"), ("web-a", "1")]
    assert [(plan.name, plan.first_wave) for plan in tree.bundles] == [("clusters-1", 0), ("clusters-2", 1)]


@dataclass
class History(OperatorClient):
    """The operator's client with the fleet Application's revision history: ``specs`` by revision."""

    specs: dict[int, dict[str, Any]] = field(default_factory=dict)

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **kwargs: Any) -> dict[str, Any]:
        if "/controllerrevisions/web-r" in path:
            self.reads.append(path)
            number = int(path.rsplit("-r", 1)[1])
            if number in self.specs:
                return {"revision": number, "data": {"spec": self.specs[number]}}
            raise PermanentApiError("not found", status=404, reason="NotFound", verb=verb)
        return super().request(verb, method, path, body=body, **kwargs)


def cluster_copy(body: dict[str, Any], cluster: str, revision: int, state: str, message: str) -> dict[str, Any]:
    """A cluster Application as the watch holds it: carrying ``revision``, in ``state`` for its generation."""
    made = fleet.child(body, cluster, DOMAIN, revision)
    made["metadata"]["generation"] = revision
    made["status"] = {"observedGeneration": revision, "state": state, "summary": message}
    return made


ROLLOUT = {"name": "slowly", "type": "rollout", "properties": {"maxConcurrent": 1, "orderBy": "ring"}}
RINGS = {"a": profile("a", ring="1"), "b": profile("b", ring="2"), "c": profile("c", ring="3")}


def rollout_app(data: str, generation: int, status: dict[str, Any] | None = None, **rollout: Any) -> dict[str, Any]:
    where = {"name": "where", "type": "topology", "properties": {"clusters": ["a", "b", "c"]}}
    policy = {**ROLLOUT, "properties": {**ROLLOUT["properties"], **rollout}}
    component = {"name": "c", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"v": data}}}}
    return application(components=[component], policies=[where, policy], generation=generation,
                       status=status)


def run_until_settled(body: dict[str, Any], memory: Memory, env: Any) -> Any:
    """Passes of ``body`` until one ends in what the next would end in too (a restart passes on)."""
    result = unitkit.run_apply(body, memory, env)
    for _ in range(4):
        again = unitkit.run_apply({**body, "status": result.status}, memory, env)
        if again.status.get("conditions") == result.status.get("conditions"):
            return again
        result = again
    return result


@pytest.mark.parametrize("on_failure", ["revert", "halt"])
def test_a_failed_cluster_halts_the_rollout_and_returns_the_changed_ones(recorded: dict[str, Any],
                                                                        on_failure: str) -> None:
    first = rollout_app("1", 1, onFailure=on_failure)
    env = environment(RINGS, Watched({f"web-{c}": cluster_copy(first, c, 1, "Ready", "ok") for c in "abc"}))
    env.clients = TenantClients(History())  # type: ignore[arg-type]
    memory = Memory()
    ready = run_until_settled(first, memory, env)
    assert outcome(ready.status) == ("Ready", "Ready", "Applied revision 1: 3 clusters ready")
    assert [(line["name"], line["readyRevision"]) for line in ready.status["clusters"]] == [
        ("a", 1), ("b", 1), ("c", 1)]
    assert ready.status["rollout"] == {"revision": 1, "groups": 3}

    # Revision 2 goes to the first group only: the others are kept at revision 1 in later waves.
    second = rollout_app("2", 2, status=ready.status, onFailure=on_failure)
    recorded["objects"].clear()
    recorded["fake"].done = False  # the cluster Applications are not Ready for it yet
    rolling = run_until_settled(second, memory, env)
    waves = [(o["metadata"]["name"], o["metadata"]["annotations"]["oam-operator.dev/apply-order"],
              o["metadata"]["annotations"]["oam-operator.dev/fleet-revision"]) for o in recorded["objects"][-1]]
    assert waves == [("web-a", "0", "2"), ("web-b", "1", "2"), ("web-c", "2", "2")]
    assert outcome(rolling.status) == ("Processing", "Processing", "Rolling out revision 2: group 1 of 3 (a)")

    # The first cluster takes revision 2; the second fails it: the rollout halts there.
    env.clients.operator_client.specs[1] = dict(first["spec"])
    env.cached_reads.found["web-a"] = cluster_copy(second, "a", 2, "Ready", "ok")
    env.cached_reads.found["web-b"] = cluster_copy(second, "b", 2, "Error", "Reconciliation timed out after 5m")
    recorded["objects"].clear()
    halted = unitkit.run_apply({**second, "status": rolling.status}, memory, env)
    said = "Rollout of revision 2 halted: cluster b failed: Reconciliation timed out after 5m"
    if on_failure == "revert":
        said += "; reverted a to revision 1; reverted b to revision 1"
    else:
        said += "; onFailure is halt: the clusters that took it keep it"
    assert outcome(halted.status) == ("Error", "RolloutHalted", said)
    actions = {"actions": ["reverted a to revision 1", "reverted b to revision 1"]} if on_failure == "revert" else {}
    assert halted.status["rollout"] == {"revision": 2, "groups": 3, "halted": "b",
                                        "message": "Reconciliation timed out after 5m", **actions}
    (objects,) = recorded["objects"]
    carried = {o["metadata"]["name"]: o["metadata"]["annotations"]["oam-operator.dev/fleet-revision"]
               for o in objects}
    # c never took revision 2: it is kept as it is; all in one wave (nothing advances).
    kept = "1" if on_failure == "revert" else "2"
    assert carried == {"web-a": kept, "web-b": kept, "web-c": "1"}
    assert {o["metadata"]["annotations"]["oam-operator.dev/apply-order"] for o in objects} == {"0"}
    for name in ("web-a", "web-b"):
        returned = next(o for o in objects if o["metadata"]["name"] == name)
        assert returned["spec"]["components"][0]["properties"]["object"]["data"] == {"v": kept}

    # It stays halted for revision 2, saying the same, once the reverted clusters run revision 1 again.
    for cluster in "ab":
        env.cached_reads.found[f"web-{cluster}"] = cluster_copy(first, cluster, 1, "Ready", "ok")
    again = unitkit.run_apply({**second, "status": halted.status}, memory, env)
    assert outcome(again.status) == ("Error", "RolloutHalted", said)


def test_a_cluster_never_ready_before_keeps_the_new_revision(recorded: dict[str, Any]) -> None:
    first = rollout_app("1", 1)
    env = environment(RINGS, Watched({"web-a": cluster_copy(first, "a", 1, "Error", "refused")}))
    env.clients = TenantClients(History())  # type: ignore[arg-type]
    halted = run_until_settled(first, Memory(), env)
    assert outcome(halted.status) == ("Error", "RolloutHalted", (
        "Rollout of revision 1 halted: cluster a failed: refused; a keeps revision 1 (it was never Ready)"))


def test_an_unreachable_cluster_that_ran_out_of_time_has_failed() -> None:
    """An unreachable cluster's Application retries (Pending), and after its timeout says Timeout:
    that fails a rollout as an Error does; a Pending retry within the timeout does not."""
    def copy(reason: str, state: str = "Pending", observed: int = 2) -> dict[str, Any]:
        made = {"metadata": {"generation": 2, "annotations": {"oam-operator.dev/fleet-revision": "2"}},
                "status": {"observedGeneration": observed, "state": state, "summary": "Cluster unreachable",
                           "conditions": [{"type": "Ready", "status": "False", "reason": reason}]}}
        return made

    timed_out = fleet.cluster_state("eu", "web-eu", copy("Timeout"), DOMAIN)
    assert timed_out.failed and fleet.failed({"eu": timed_out}, ["eu"], 2) == timed_out
    assert not fleet.cluster_state("eu", "web-eu", copy("Retrying"), DOMAIN).failed
    assert fleet.cluster_state("eu", "web-eu", copy("Refused", "Error"), DOMAIN).failed
    older = fleet.cluster_state("eu", "web-eu", copy("Timeout", observed=1), DOMAIN)  # of an older spec
    assert (older.state, older.failed) == ("Processing", False)


def test_a_rollout_says_which_group_it_waits_for() -> None:
    """docs/multicluster.md#rollout: the first group not all Ready for the revision, its clusters named."""
    body = rollout_app("2", 2)

    def state(cluster: str, revision: int, ready: str) -> fleet.ClusterState:
        return fleet.cluster_state(cluster, f"web-{cluster}", cluster_copy(body, cluster, revision, ready, "ok"), DOMAIN)

    ordered = [["a"], ["b", "c"], ["d"]]
    states = [state("a", 2, "Ready"), state("b", 2, "Ready"), state("c", 2, "Processing"), state("d", 1, "Ready")]
    assert fleet.rollout_progress(ordered, states, 2) == "Rolling out revision 2: group 2 of 3 (b, c)"
    assert fleet.rollout_progress(ordered, [state("a", 1, "Ready")], 2) == "Rolling out revision 2: group 1 of 3 (a)"
    done = [state(cluster, 2, "Ready") for cluster in "abcd"]
    assert fleet.rollout_progress(ordered, done, 2) is None


def test_a_failed_cluster_is_named_with_its_whole_message_not_its_summary(recorded: dict[str, Any]) -> None:
    """The summary is cut for a column (api/summary.py); the fleet Application's verdict names the
    cluster's Ready message whole, so an unreachable cluster's reason is not cut off."""
    whole = "Cluster https://10.0.0.7:6443 (ClusterProfile eu): connection error: [Errno 111] Connection refused"
    cut = "Cluster https://10.0.0.7:6443 (ClusterProfile eu): connection…"
    body = fleet_app({"clusters": ["eu"]}, generation=1)
    failing = fleet.child(body, "eu", DOMAIN, 1)
    failing["metadata"]["generation"] = 1
    failing["status"] = {"observedGeneration": 1, "state": "Pending", "summary": cut,
                         "conditions": [{"type": "Ready", "status": "False", "reason": "Timeout", "message": whole}]}
    line = fleet.cluster_state("eu", "web-eu", failing, DOMAIN)
    assert (line.message, line.why, line.failed) == (cut, whole, True)
    result = unitkit.run_apply(body, Memory(), environment({"eu": PROFILES["eu"]}, Watched({"web-eu": failing})))
    assert outcome(result.status) == ("Error", "ClusterFailed", f"Cluster eu failed: {whole}")
    assert result.status["clusters"][0]["message"] == cut  # the list keeps the summary


def test_a_cluster_selected_while_halted_gets_nothing_until_the_spec_changes(recorded: dict[str, Any]) -> None:
    """docs/multicluster.md#rollout: a halted rollout writes nothing new, not even to a cluster
    that joined the selection; a new spec delivers to it with the others."""
    def every_profile(data: str, generation: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
        body = rollout_app(data, generation, status)
        body["spec"]["policies"][0]["properties"] = {"clusterSelector": {}}
        return body

    first = every_profile("1", 1)
    profiles = dict(RINGS)
    env = environment(RINGS, Watched({f"web-{c}": cluster_copy(first, c, 1, "Ready", "ok") for c in "abc"}))
    env.all_profiles = lambda: dict(profiles)
    env.clients = TenantClients(History())  # type: ignore[arg-type]
    env.clients.operator_client.specs[1] = dict(first["spec"])
    memory = Memory()
    ready = run_until_settled(first, memory, env)
    second = every_profile("2", 2, ready.status)
    recorded["fake"].done = False
    rolling = run_until_settled(second, memory, env)
    env.cached_reads.found["web-a"] = cluster_copy(second, "a", 2, "Error", "refused")
    halted = unitkit.run_apply({**second, "status": rolling.status}, memory, env)
    assert outcome(halted.status)[:2] == ("Error", "RolloutHalted")

    profiles["d"] = profile("d", ring="4")  # labelled in while halted
    recorded["objects"].clear()
    still = unitkit.run_apply({**second, "status": halted.status}, memory, env)
    assert outcome(still.status) == outcome(halted.status)
    assert "web-d" not in {o["metadata"]["name"] for o in recorded["objects"][-1]}
    line = next(line for line in still.status["clusters"] if line["name"] == "d")
    assert (line["state"], line["message"]) == ("Pending", "not created yet")

    recorded["objects"].clear()
    run_until_settled(every_profile("3", 3, still.status), memory, env)
    carried = {o["metadata"]["name"]: o["metadata"]["annotations"]["oam-operator.dev/fleet-revision"]
               for o in recorded["objects"][-1]}
    assert carried["web-d"] == "3"  # in the last wave, as any cluster of its ring


def test_a_no_op_pass_of_a_fleet_with_an_override_transforms_once(recorded: dict[str, Any],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The overrides check's verdict is kept (controller/reconcile/verdicts.py): the second pass
    transforms the Application alone, not each override again."""
    override = {"name": "eu-only", "type": "override", "properties": {"clusters": ["eu"], "components": [
        {"name": "c", "properties": {"object": {"data": {"k": "eu"}}}}]}}
    body = application(components=[{"name": "c", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}}}],
        policies=[{"name": "where", "type": "topology", "properties": {"clusters": ["eu", "us"]}}, override])
    ready = {"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "state": "Ready", "summary": "ok"}}
    env = environment(PROFILES, Watched({"web-eu": ready, "web-us": ready}))
    transforms: list[str] = []
    transform = env.transform.transform

    def counted(subject_body: Any, **kwargs: Any) -> Any:
        transforms.append(subject_body["metadata"]["name"])
        return transform(subject_body, **kwargs)

    monkeypatch.setattr(env.transform, "transform", counted)
    memory = Memory()
    first = unitkit.run_apply(body, memory, env)
    assert len(transforms) == 2  # the Application, then it with the override
    transforms.clear()
    unitkit.run_apply({**body, "status": first.status}, memory, env)
    assert len(transforms) == 1
