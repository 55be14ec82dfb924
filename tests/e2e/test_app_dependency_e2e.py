"""Ordering between Applications (issue 15): app-dependency, its reverse gate on deletion, cycles,
the index that wakes only dependants, and the reconciliation and health-checks policies."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from e2ekit import DOMAIN, GROUP, VERSION, Kube, condition, configmap_component

from tools.devcluster.pytest_plugin import default_wait, wait_until


def after(*names: str, policy: str = "after") -> dict[str, Any]:
    return {"name": policy, "type": "app-dependency", "properties": {"applications": [{"name": n} for n in names]}}


def spec(config: str, *policies: dict[str, Any]) -> dict[str, Any]:
    return {"components": [configmap_component(config)], "policies": list(policies)}


def _time(text: Any) -> datetime:
    if isinstance(text, datetime):
        return text
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def delete(kube: Kube, name: str) -> None:
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", name)


def ready_message(app: dict[str, Any]) -> str:
    ready = condition(app, "Ready")
    return str(ready["message"]) if ready else ""


def test_a_missing_dependency_is_a_warning_after_the_grace(start_operator: Any, kube: Kube) -> None:
    """Issue 44: a typo in a dependency's name looked like "not created yet", a Normal Event for
    ever. After the grace it is one Warning Event of its own reason; the wait goes on."""
    start_operator(kube.namespace, "--missing-dependency-grace", "2s")
    kube.apply_app("web", spec("web-config", after("databse")))
    kube.wait_state("web", "Waiting", "DependenciesNotReady")

    def warned() -> list[Any]:
        return [e for e in kube.events("web") if e.reason == "DependencyMissing"]

    (event,) = wait_until(warned, default_wait(kube.cluster), "web's DependencyMissing Event")
    assert (event.type, event.message) == ("Warning", "Application databse named by app-dependency does not exist "
                                           "after 2s; still waiting for it (check its name, or create it)")
    assert kube.app("web")["status"]["state"] == "Waiting"
    kube.apply_app("databse", spec("databse-config"))
    kube.wait_ready("web")
    assert len(warned()) == 1 and event.count in (None, 1)


def test_a_chain_reaches_ready_in_order(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    # Created last-first: each one must wait for the one before it. `a` is created only once `c`
    # has been seen waiting, so the wait (and its Event) happens whatever the machine's speed.
    kube.apply_app("c", spec("c-config", after("b")))
    kube.apply_app("b", spec("b-config", after("a")))
    kube.wait_state("c", "Waiting", "DependenciesNotReady")
    kube.apply_app("a", spec("a-config"))
    apps = {name: kube.wait_ready(name) for name in ("c", "b", "a")}
    for earlier, later in (("a", "b"), ("b", "c")):
        became_ready = _time(condition(apps[earlier], "Ready")["lastTransitionTime"])  # type: ignore[index]
        created = kube.core.read_namespaced_config_map(f"{later}-config", kube.namespace).metadata.creation_timestamp
        # Nothing of the later Application existed before the earlier one was Ready (whole seconds).
        assert created >= became_ready.replace(microsecond=0), (earlier, later)
    assert apps["c"]["status"]["dependencies"] == [
        {"namespace": kube.namespace, "name": "b", "state": "Ready", "ready": True}]
    assert "dependencies" not in apps["a"]["status"]
    # c waited, said so in an Event, and named what it waited for.
    def waited() -> list[Any]:
        return [e for e in kube.events("c") if e.reason == "DependenciesNotReady"]

    wait_until(waited, default_wait(kube.cluster), "c's DependenciesNotReady Event")
    assert waited()[0].message.startswith("Waiting for Applications to be Ready: b (")


def test_a_missing_dependency_is_waited_for_until_it_appears(start_operator: Any, kube: Kube,
                                                             full_cluster: Any) -> None:
    operator = start_operator(kube.namespace)
    kube.apply_app("web", spec("web-config", after("db")))
    app = kube.wait_state("web", "Waiting", "DependenciesNotReady")
    assert ready_message(app) == "Waiting for Applications to be Ready: db (Missing)"
    assert app["status"]["dependencies"] == [
        {"namespace": kube.namespace, "name": "db", "state": "Missing", "ready": False}]
    assert condition(app, "Reconciling")["status"] == "True"  # type: ignore[index]
    assert kube.owned() == []  # nothing applied while waiting
    result = subprocess.run(
        [str(Path(sys.executable).parent / "oam-operator"), "status", "web", "-n", kube.namespace, "--tree",
         "--kubeconfig", full_cluster.kubeconfig], capture_output=True, text=True, check=False)
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "Message: Waiting for Applications to be Ready: db (Missing)",
        "Depends on: db (Missing)",
        "",
        "(depends on)",
        "└── " + "Application db".ljust(38) + "Missing",
    ]
    waiting = operator.metrics()[("oam_operator_applications", frozenset({("state", "Waiting")}))]
    assert waiting == 1
    kube.apply_app("db", spec("db-config"))
    kube.wait_ready("db")
    app = kube.wait_ready("web")
    assert app["status"]["dependencies"][0]["state"] == "Ready"
    assert kube.owned() == [("ConfigMap", "db-config"), ("ConfigMap", "web-config")]
    wait_until(lambda: operator.metrics()[("oam_operator_applications", frozenset({("state", "Waiting")}))] == 0,
               default_wait(kube.cluster), "no Application counted as Waiting")


def test_a_cycle_is_reported_on_every_member_and_breaking_it_recovers(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("a", spec("a-config", after("b")))
    kube.apply_app("b", spec("b-config", after("a")))
    for name in ("a", "b"):
        app = kube.wait_state(name, "Error", "DependencyCycle")
        assert ready_message(app) == "application cycle detected: a -> b -> a"
        assert condition(app, "Stalled")["status"] == "True"  # type: ignore[index]
    assert kube.owned() == []
    kube.apply_app("b", spec("b-config"))  # b no longer depends on a
    kube.wait_ready("b")
    kube.wait_ready("a")


def test_deletion_waits_for_dependants_unless_forced(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("a", spec("a-config"))
    kube.apply_app("b", spec("b-config", after("a")))
    kube.apply_app("c", spec("c-config", after("b")))
    for name in ("a", "b", "c"):
        kube.wait_ready(name)
    for name in ("a", "b", "c"):
        delete(kube, name)
    # Deletion runs in reverse dependency order: whenever one is gone, its dependants are gone.
    seen_blocked = False

    def all_gone() -> bool:
        nonlocal seen_blocked
        present = {name for name in ("a", "b", "c") if kube.app_or_none(name) is not None}
        owned = {name for _, name in kube.owned()}
        configs = {name for name in ("a", "b", "c") if f"{name}-config" in owned}
        assert not ("b" not in configs and "c" in configs), "b's objects were deleted before c's"
        assert not ("a" not in configs and "b" in configs), "a's objects were deleted before b's"
        assert not ("b" not in present and "c" in present)
        assert not ("a" not in present and "b" in present)
        app = kube.app_or_none("a")
        if app is not None and "b" in present:
            message = ready_message(app)
            if message.startswith("Deletion blocked"):
                assert message == (
                    "Deletion blocked: Applications depend on it: b (delete them or remove their app-dependency "
                    f'on it; the annotation {DOMAIN}/ignore-dependants: "true" deletes it anyway)')
                seen_blocked = True
        return not present

    wait_until(all_gone, default_wait(kube.cluster), "the three Applications to be deleted", step=0.1)
    assert seen_blocked

    # The annotation forces the delete of an Application others still depend on.
    kube.apply_app("base", spec("base-config"), annotations={f"{DOMAIN}/ignore-dependants": "true"})
    kube.apply_app("top", spec("top-config", after("base")))
    kube.wait_ready("base")
    kube.wait_ready("top")
    delete(kube, "base")
    wait_until(lambda: kube.app_or_none("base") is None, default_wait(kube.cluster), "base to be deleted")
    assert kube.owned() == [("ConfigMap", "top-config")]
    assert kube.ready("top") is not None  # a dependency going away tears nothing down


def test_cross_namespace_references_need_the_setting(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    elsewhere = {"name": "after", "type": "app-dependency",
                 "properties": {"applications": [{"name": "db", "namespace": "other"}]}}
    kube.apply_app("web", spec("web-config", elsewhere))
    app = kube.wait_state("web", "Error", "TransformFailed")
    assert ready_message(app) == (
        'policy "after": application "other/db" is in another namespace; cross-namespace references need the '
        "operator setting --allow-cross-namespace-dependencies")
    assert kube.owned() == []


def test_reconciliation_and_health_checks_policies(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    suspended = {"name": "sync", "type": "reconciliation", "properties": {"suspend": True}}
    kube.apply_app("paused", spec("paused-config", suspended))
    app = kube.wait_state("paused", "Pending", "Suspended")
    assert ready_message(app) == "Reconciliation is suspended"
    conflicting = {"name": "sync", "type": "reconciliation", "properties": {"interval": "1m"}}
    kube.apply_app("both", {**spec("both-config", conflicting), "interval": "2m"})
    app = kube.wait_state("both", "Error", "TransformFailed")
    assert ready_message(app) == 'policy "sync": interval is also set by spec.interval; set it in one place only'

    checks = {"name": "needs", "type": "health-checks", "properties": {"checks": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "shared"}]}}
    kube.apply_app("checked", spec("checked-config", checks))
    app = kube.wait_state("checked", "Processing")
    wait_until(lambda: ready_message(kube.app("checked")) == "Waiting for health checks (0/1 ready): ConfigMap "
               "shared (not found)", default_wait(kube.cluster), "the health check to be reported")
    assert kube.core.read_namespaced_config_map("checked-config", kube.namespace) is not None
    kube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"k": "v"}})
    kube.wait_ready("checked")
    assert kube.owned() == [("ConfigMap", "checked-config")]  # the checked object is not adopted
