"""The unit tier's one shared kit: fakes and builders for the pure tests (no cluster, no podman,
no network beyond a closed 127.0.0.1 port).

- ``run_in_order``: ``ClusterClient.run_bounded`` for the reconciler's fake clients, one task after
  the other.
- Passes of the driver (``controller/reconcile/passes.py``): ``pass_environment`` (a fixed clock, a client
  pointing at a closed local port), ``application`` bodies and ``FakeReconciler``, which stands
  in for ``reconciler.Reconciler`` with a scripted ``apply()``/``delete()``.
- Rendered chart objects (``tests/unit/helm``): ``of_kind``, ``one``, ``container``, ``args``,
  ``rules``, ``rule_set``, ``has_wildcard``.
- The Dockerfile (``tests/unit/helm/test_dockerfile.py``): ``parse``.
- kopf's daemon stop flag, as the Application loop uses it: ``DaemonStopped``.
"""

from __future__ import annotations

import asyncio
import copy
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from oam_operator.api.compact_inventory import encode
from oam_operator.controller.reconcile import passes
from oam_operator.controller.reconcile.appindex import AppIndex
from oam_operator.controller.reconcile.composition import OperatorTransform
from oam_operator.controller.reconcile.permissions import guess_resource
from oam_operator.controller.reconcile.seams import Environment, Memory, PassResult
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.reconcile.statuswriter import remember
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.concurrency import Outcome
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.identity import split_api_version
from oam_operator.reconciler.inventory import InventoryItem, Phase, dump_inventory
from oam_operator.reconciler.reconciler import Checkpoint
from oam_operator.reconciler.report import CallReport

# -- passes of the driver -----------------------------------------------------------------------

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DOMAIN = "oam-operator.dev"


def run_in_order(tasks: Sequence[Callable[[], Any]]) -> list[Outcome[Any]]:
    """What ``ClusterClient.run_bounded`` returns, the tasks run one after the other."""
    outcomes: list[Outcome[Any]] = []
    for task in tasks:
        try:
            outcomes.append(Outcome(value=task()))
        except Exception as exc:
            outcomes.append(Outcome(error=exc))
    return outcomes


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock:
    """A fixed clock the test moves by hand."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


#: The reconciler factory of the environments ``pass_environment`` makes (``fake_reconciler``).
_injected_reconciler: Callable[[str, Any, Any], Any] | None = None


def pass_environment(index: AppIndex | None = None, clock: Clock | None = None,
                     profiles: Mapping[str, Mapping[str, Any]] | None = None, **settings: Any) -> Environment:
    """An Environment whose cluster client points at a closed local port (any request fails)."""
    config = Configuration()
    config.host = "http://127.0.0.1:9"
    resolved = Settings.from_sources(settings, {})
    clients = TenantClients(ClusterClient(ApiClient(configuration=config)))
    known = dict(profiles or {})
    env = Environment(settings=resolved, transform=OperatorTransform.from_settings(resolved), clients=clients, cluster_id="c",
                      profiles=lambda name: known.get(name), all_profiles=lambda: dict(known),
                      apps=index if index is not None else AppIndex())
    if _injected_reconciler is not None:
        env.reconciler = _injected_reconciler
    env.clock = clock or Clock()
    env.jitter = lambda delay: delay  # type: ignore[assignment,method-assign]
    return env


def run_apply(body: Mapping[str, Any], memory: Memory, env: Environment, *args: Any, **kwargs: Any) -> PassResult:
    """One apply pass, its state machines kept in ``memory`` as the status writer keeps them
    (``statuswriter.remember``): consecutive calls are consecutive passes."""
    result = passes.apply_pass(body, memory, env, *args, **kwargs)
    remember(memory, result)
    return result


def run_delete(body: Mapping[str, Any], memory: Memory, env: Environment) -> PassResult:
    """One delete pass, kept in ``memory`` like ``run_apply``'s."""
    result = passes.delete_pass(body, memory, env)
    remember(memory, result)
    return result


def configmap_component(name: str = "c", object_name: str = "web-config") -> dict[str, Any]:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": object_name}, "data": {"k": "v"}}
    return {"name": name, "type": "passthrough", "properties": {"object": config}}


def application(name: str = "web", *, components: list[dict[str, Any]] | None = None,
                status: dict[str, Any] | None = None, generation: int = 2, deleting: bool = False,
                annotations: dict[str, str] | None = None, finalizers: list[str] | None = None,
                **spec: Any) -> dict[str, Any]:
    """An Application body as kopf hands it to a pass."""
    meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": f"uid-{name}", "generation": generation}
    if annotations:
        meta["annotations"] = annotations
    if deleting:
        meta["deletionTimestamp"] = stamp(NOW)
        meta["finalizers"] = finalizers if finalizers is not None else [DOMAIN]
    return {
        "apiVersion": "oam-operator.dev/v1alpha1",
        "kind": "Application",
        "metadata": meta,
        "spec": {"components": components if components is not None else [configmap_component()], **spec},
        "status": copy.deepcopy(status) if status is not None else {},
    }


def item_of(obj: Mapping[str, Any], phase: Phase = Phase.READY, status: str = "Current") -> InventoryItem:
    group, version = split_api_version(obj["apiVersion"])
    meta = obj.get("metadata") or {}
    return InventoryItem(group=group, version=version, kind=obj["kind"], namespace=meta.get("namespace", ""),
                         name=meta["name"], digest="d" * 64, phase=phase, status=status,
                         last_applied_at=NOW - timedelta(minutes=1))


def compact(*items: InventoryItem) -> dict[str, Any]:
    """A ``status.compactInventory`` holding ``items``."""
    return encode(dump_inventory(items))


@dataclass
class _Client:
    """What a pass asks the reconciler's client: whether a kind is served (always, mapped by the
    offline plural rule), and the SelfSubjectAccessReviews of a lasting 403 (controller/reconcile/accessreview.py):
    allowed unless ``(group, resource, verb)`` is in ``denied``; ``review_error`` fails them."""

    impersonated_user: str | None = "system:serviceaccount:shop:default"
    denied: set[tuple[str, str, str]] = field(default_factory=set)
    review_error: Exception | None = None
    reviews: list[dict[str, Any]] = field(default_factory=list)

    def resource_for(self, api_version: str, kind: str) -> ApiResource:
        guessed = guess_resource(api_version, kind)
        group, version = split_api_version(api_version)
        return ApiResource(group, version, kind, guessed.plural, guessed.namespaced, ())

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> dict[str, Any]:
        assert (verb, method, path) == ("create", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        if self.review_error is not None:
            raise self.review_error
        attributes = body["spec"]["resourceAttributes"]
        self.reviews.append(attributes)
        key = (attributes["group"], attributes["resource"], attributes["verb"])
        return {"status": {"allowed": key not in self.denied}}

    def run_bounded(self, tasks: Sequence[Callable[[], Any]], limit: int) -> list[Outcome[Any]]:
        return run_in_order(tasks)


@dataclass
class FakeReconciler:
    """Stands in for ``reconciler.Reconciler``: ``apply()`` records every desired object (ready
    when ``done``) and returns ``done``; ``delete()`` marks every item deleting and returns
    ``deleted``; either raises ``error`` instead when it is set."""

    done: bool = True
    report: CallReport = field(default_factory=lambda: CallReport("done"))
    error: Exception | None = None
    deletion_allowed: tuple[bool, str] = (True, "")
    deleted: bool = False
    client: _Client = field(default_factory=_Client)
    calls: list[str] = field(default_factory=list)
    inventories: list[list[InventoryItem]] = field(default_factory=list)  # copies as each apply() got them
    holds: list[set[tuple[str, str, str, str]]] = field(default_factory=list)  # each apply()'s ``hold``

    def apply(self, inventory: list[InventoryItem], objects: list[dict[str, Any]], namespace: str,
              owner_id: str, digest: str, *, checkpoint: Checkpoint | None = None,
              hold: Collection[tuple[str, str, str, str]] = ()) -> bool:
        """With ``checkpoint``, new items are handed to it in ``ScheduledForApplication`` (as
        copies), and take their final phase only after it returned, as in the reconciler's
        in-call checkpoint."""
        self.calls.append("apply")
        self.inventories.append([item.model_copy(deep=True) for item in inventory])
        self.holds.append(set(hold))
        known = {item.identity() for item in inventory}
        added: list[tuple[InventoryItem, Phase, str]] = []
        for obj in objects:
            item = item_of(obj, Phase.READY if self.done else Phase.CREATING,
                           "Current" if self.done else "InProgress")
            if not item.namespace and obj["kind"] != "Namespace":
                item.namespace = namespace
            if item.identity() not in known:
                inventory.append(item)
                added.append((item, item.phase, item.status))
        if added and checkpoint is not None:
            for item, _, _ in added:
                item.phase, item.status, item.last_applied_at = Phase.SCHEDULED_FOR_APPLICATION, "InProgress", None
            checkpoint([i.model_copy(deep=True) for i in inventory])
            self.calls.append("checkpoint")
            for item, phase, status in added:
                item.phase, item.status, item.last_applied_at = phase, status, NOW - timedelta(minutes=1)
        if self.error is not None:
            raise self.error
        return self.done

    def is_deletion_allowed(self, inventory: list[InventoryItem], owner_id: str) -> tuple[bool, str]:
        self.calls.append("is_deletion_allowed")
        return self.deletion_allowed

    def delete(self, inventory: list[InventoryItem], owner_id: str) -> bool:
        self.calls.append("delete")
        if self.error is not None:
            raise self.error
        if self.deleted:
            inventory.clear()
            return True
        for item in inventory:
            item.mark_deleting()
        self.report = CallReport("deleting", pending=tuple((item, "Terminating") for item in inventory))
        return False


@pytest.fixture
def fake_reconciler(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeReconciler]:
    """The reconciler every pass of the test builds: the environments ``pass_environment`` makes
    while the test runs carry it (``Environment.reconciler``)."""
    fake = FakeReconciler()

    def build(domain: str, client: Any, options: Any) -> FakeReconciler:
        return fake

    monkeypatch.setattr(sys.modules[__name__], "_injected_reconciler", build)
    yield fake


def ready_condition(status: Mapping[str, Any]) -> dict[str, Any]:
    return next(c for c in status["conditions"] if c["type"] == "Ready")


def outcome(status: Mapping[str, Any]) -> tuple[str, str, str]:
    """(state, Ready reason, Ready message) of a status."""
    ready = ready_condition(status)
    return status["state"], ready["reason"], ready["message"]


# -- rendered chart objects ---------------------------------------------------------------------

Obj = dict[str, Any]


def of_kind(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[Obj], kind: str, name: str | None = None, namespace: str | None = None) -> Obj:
    found = [o for o in of_kind(objects, kind)
             if (name is None or o["metadata"]["name"] == name)
             and (namespace is None or o["metadata"].get("namespace") == namespace)]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container(objects: list[Obj]) -> Obj:
    deployment = one(objects, "Deployment")
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def args(objects: list[Obj]) -> list[str]:
    result: list[str] = container(objects)["args"]
    return result


def rules(objects: list[Obj], kind: str, namespace: str | None = None) -> list[Obj]:
    result: list[Obj] = one(objects, kind, namespace=namespace)["rules"]
    return result


def rule_set(rule_list: list[Obj]) -> set[tuple[str, str, str, str]]:
    """(apiGroup, resource, resourceName or "", verb) for every combination the rules grant."""
    granted = set()
    for rule in rule_list:
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                for name in rule.get("resourceNames") or [""]:
                    for verb in rule["verbs"]:
                        granted.add((group, resource, name, verb))
    return granted


def has_wildcard(rule_list: list[Obj]) -> bool:
    return any("*" in rule.get(field, []) for rule in rule_list
               for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"))


# -- the Dockerfile -----------------------------------------------------------------------------


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [rest for key, rest in self.instructions if key == keyword]


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)


def parse(path: Path) -> Dockerfile:
    """Instructions with continuations joined, comments dropped, grouped by stage."""
    logical: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", rest.strip(), re.IGNORECASE)
            assert match, line
            stages.append(Stage(base=match.group(1), name=match.group(2) or str(len(stages))))
        elif not stages:
            assert keyword == "ARG", f"only ARG may precede FROM: {line}"
            name, _, default = rest.partition("=")
            global_args[name.strip()] = default.strip()
        else:
            stages[-1].instructions.append((keyword, re.sub(r"\s+", " ", rest.strip())))
    return Dockerfile(global_args, stages)


class DaemonStopped:
    """kopf's daemon stop flag, as far as the Application loop and its gates use it."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def __bool__(self) -> bool:
        return self.event.is_set()

    async def wait(self) -> None:
        await self.event.wait()
