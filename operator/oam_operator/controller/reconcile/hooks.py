"""Running lifecycle hooks, crash-safe (docs/operator.md#lifecycle-hooks).

Every run of a hook is recorded in ``status.hooks`` (written through the pass's checkpoint)
before its object is created; the object carries the run in ``<domain>/hook-run``. A record
found ``Recorded`` after a crash is settled by reading the object: created by this run, it is
watched, not created again; absent, it is created. A run's object is never created twice and a
recorded run is never skipped. The runner is one phase's state machine per pass:
``Recorded`` → ``Running`` → ``Succeeded`` | ``Failed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.application import HookStatus
from oam_operator.common.durations import parse_go_duration
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.errors import ApiError
from oam_operator.reconciler.status import DefaultStatusAnalyzer, StatusAnalysisError

from .hookspec import Hook, HookDeletePolicy, HookPhase

RECORDED, RUNNING, SUCCEEDED, FAILED = "Recorded", "Running", "Succeeded", "Failed"
FIELD_MANAGER = "oam-operator-hooks"


@dataclass(frozen=True)
class PhaseOutcome:
    """What one phase's hooks came to in this pass: all ``done``, else ``failed`` (the
    ``HookFailed`` message) or ``waiting`` (a progress message)."""

    done: bool
    failed: str | None = None
    waiting: str | None = None


DONE = PhaseOutcome(True)


def _key(record: HookStatus) -> tuple[str, str, str, str, str]:
    return record.phase, record.api_version, record.kind, record.namespace or "", record.name


def run_label(record: HookStatus) -> str:
    """What the object's ``hook-run`` says: the phase and the run (one object may serve two phases)."""
    return f"{record.phase} {record.run}"


def _named(record: HookStatus) -> str:
    return f"{record.phase} hook {record.kind} {record.name}"


def _job_verdict(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """A Job's end: (``Succeeded``/``Failed``, why), ``None`` while it runs."""
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            return SUCCEEDED, ""
        if condition.get("type") == "Failed":
            return FAILED, str(condition.get("message") or condition.get("reason") or "the Job failed")
    return None


class HookRunner:
    """Runs the hooks of one phase in one pass; ``record`` persists ``records`` now (the pass's
    checkpoint; it raises ``StatusNotWritten`` and then nothing is created)."""

    def __init__(self, client: ClusterClient, records: list[HookStatus], *, domain: str, owner_id: str,
                 namespace: str, default_timeout: str, now: datetime,
                 record: Callable[[list[HookStatus]], None]) -> None:
        self.client, self.records, self.domain, self.owner_id = client, records, domain, owner_id
        self.namespace, self.default_timeout, self.record = namespace, default_timeout, record
        self.now = now.replace(tzinfo=UTC) if now.tzinfo is None else now
        self.analyzer = DefaultStatusAnalyzer(domain, clock=lambda: now)

    def run(self, phase: HookPhase, hooks: Sequence[Hook], run: str) -> PhaseOutcome:
        """Advance ``hooks`` of ``phase`` for ``run``: record the new runs (one write), then create,
        watch and end each; done once every one Succeeded."""
        mine = [self.recorded(phase, hook, run) for hook in hooks]
        if any(record.state == RECORDED and record.started_at is None for record in mine):
            for record in mine:
                if record.started_at is None:
                    record.started_at = self.now.replace(microsecond=0)
            self.record(self.records)
        waiting: list[str] = []
        for hook, record in zip(hooks, mine, strict=True):
            self.advance(hook.manifest, record)
            if record.state == FAILED:
                return PhaseOutcome(False, failed=f"{_named(record)} failed: {record.message}")
            if record.state != SUCCEEDED:
                waiting.append(f"{record.kind} {record.name}")
        if waiting:
            return PhaseOutcome(False, waiting=f"Waiting for {phase.value} hooks to complete: {', '.join(waiting)}")
        return DONE

    def recorded(self, phase: HookPhase, hook: Hook, run: str) -> HookStatus:
        """The record of ``hook``'s ``run``: the one in the status, or a new one replacing its
        earlier run's (``started_at`` unset until written)."""
        namespace = hook.namespace or self.namespace
        fresh = HookStatus(phase=phase.value, api_version=hook.api_version, kind=hook.kind, namespace=namespace,
                           name=hook.name, run=run, state=RECORDED, delete_policy=hook.delete_policy.value,
                           timeout=hook.timeout or self.default_timeout)
        for index, record in enumerate(self.records):
            if _key(record) == _key(fresh):
                if record.run == run:
                    return record
                self.records[index] = fresh
                return fresh
        self.records.append(fresh)
        return fresh

    def resource(self, record: HookStatus) -> ApiResource | None:
        return self.client.resource_for(record.api_version, record.kind)

    def advance(self, manifest: Mapping[str, Any] | None, record: HookStatus) -> None:
        """One step of ``record``'s state machine (``manifest``: the object to create, if known)."""
        if record.state in (SUCCEEDED, FAILED):
            return
        resource = self.resource(record)
        if resource is None:
            self.fail(record, f"the cluster serves no {record.api_version} {record.kind}")
            return
        namespace = (record.namespace or "") if resource.namespaced else ""
        live = self.client.get(resource, namespace, record.name)
        if record.state == RECORDED:
            if live is not None and self.run_of(live) != run_label(record):
                self.clear_earlier(resource, record, live)
                return
            if live is None:
                if manifest is None:
                    self.fail(record, "its manifest is no longer generated")
                    return
                try:
                    live = self.client.create(resource, namespace, self.stamped(manifest, record),
                                              field_manager=FIELD_MANAGER)
                except ApiError as error:
                    if error.status != 409:
                        raise
                    return  # created meanwhile (another run's leftover being deleted): the next pass reads it
            record.state = RUNNING
        if live is None:
            self.fail(record, "it was deleted before it finished")
            return
        verdict = self.verdict_of(live)
        if verdict is not None:
            state, why = verdict
            if state == SUCCEEDED:
                record.state, record.message = SUCCEEDED, None
                if record.delete_policy == HookDeletePolicy.ON_SUCCESS.value:
                    self.client.delete(resource, namespace, record.name)
                return
            self.fail(record, why)
            return
        if record.started_at is not None and self.now - record.started_at >= parse_go_duration(record.timeout):
            self.fail(record, f"not finished within {record.timeout}")

    def clear_earlier(self, resource: ApiResource, record: HookStatus, live: Mapping[str, Any]) -> None:
        """An object of the same name from an earlier run (or not the operator's) is in the way."""
        if record.delete_policy != HookDeletePolicy.BEFORE_NEXT_RUN.value or self.run_of(live) is None:
            whose = "an earlier run's" if self.run_of(live) is not None else "an object the operator did not create"
            self.fail(record, f"{record.kind} {record.name} is in the way ({whose}, delete policy "
                              f"{record.delete_policy}): delete it to run the hook")
            return
        if not (live.get("metadata") or {}).get("deletionTimestamp"):
            self.client.delete(resource, record.namespace or "", record.name)

    def run_of(self, live: Mapping[str, Any]) -> str | None:
        """The run that created ``live`` (its ``hook-run`` when this Application's), else ``None``."""
        annotations = (live.get("metadata") or {}).get("annotations") or {}
        if annotations.get(f"{self.domain}/hook-of") != self.owner_id:
            return None
        run = annotations.get(f"{self.domain}/hook-run")
        return str(run) if run is not None else None

    def stamped(self, manifest: Mapping[str, Any], record: HookStatus) -> dict[str, Any]:
        """The manifest as created: the namespace, and whose run it is."""
        meta = dict(manifest.get("metadata") or {})
        annotations = dict(meta.get("annotations") or {})
        annotations[f"{self.domain}/hook-of"] = self.owner_id
        annotations[f"{self.domain}/hook-run"] = run_label(record)
        meta["annotations"] = annotations
        if record.namespace:
            meta["namespace"] = record.namespace
        return {**manifest, "metadata": meta}

    def verdict_of(self, live: Mapping[str, Any]) -> tuple[str, str] | None:
        """A Job by its conditions; any other kind by kstatus (Current: done, Failed: failed)."""
        if live.get("kind") == "Job" and str(live.get("apiVersion") or "").startswith("batch/"):
            return _job_verdict(live)
        try:
            result = self.analyzer.compute(live)
        except StatusAnalysisError as error:
            return FAILED, str(error)
        if result.status == "Current":
            return SUCCEEDED, ""
        if result.status == "Failed":
            return FAILED, result.message
        return None

    def fail(self, record: HookStatus, why: str) -> None:
        record.state, record.message = FAILED, why

    def clean_up(self) -> None:
        """At the end of a deletion: every recorded hook object whose policy is not ``Never`` is deleted."""
        for record in self.records:
            if record.delete_policy == HookDeletePolicy.NEVER.value:
                continue
            resource = self.resource(record)
            if resource is None:
                continue
            live = self.client.get(resource, record.namespace or "", record.name)
            if live is not None and self.run_of(live) is not None:
                self.client.delete(resource, record.namespace or "", record.name)
