"""What the operator does with its own policies (``operatorpolicies``) inside a pass.

Decisions the apply branch (``passes._Pass``) asks for, in pass order; each returns data and
the pass acts on it:

1. the policies are read by the ``transform`` check (checks.py): cross-namespace and
   spec-conflict refusals are transform failures, verbatim.
2. ``timing`` and ``hold`` — before anything is applied: the ``reconciliation`` values replace the interval,
   timeout and error retry delay of this pass; its ``suspend`` gives ``Pending``/``Suspended``;
   a cycle through this Application gives ``Error``/``DependencyCycle``
   (``application cycle detected: a -> b -> a``, on every member); ``status.dependencies`` is
   refreshed; and while a **new revision** has not started (``processingDigest`` differs from
   ``lastProcessingDigest``), any dependency that is not Ready at its current generation gives
   ``Waiting``/``DependenciesNotReady`` with ``Waiting for Applications to be Ready: db
   (Processing), cache (Missing)``. A Waiting Application has no timed requeue: the index wakes
   it when a dependency appears, vanishes or changes readiness (the pass requeues it once at the
   end of a missing dependency's grace, operatorpolicies/missing.py).
3. ``unhealthy`` — when ``apply()`` is done: every ``health-checks`` object must be ``Current``
   (the reconciler's status analyzer), else ``Processing`` with ``Waiting for health checks
   (<ready>/<n> ready): <Kind> <name> (<detail>)``, on the processing backoff and timeout.

Decisions: a dependency that becomes un-Ready later tears nothing down and does not stop this
Application's drift correction, re-applies or pruning of the revision it already started; it
only holds the *next* revision (a spec or profile change). ``dependants_blocking`` (delete branch):
an Application with existing dependants — other than members of a cycle through it — stays
``Deleting``/``DeletionBlocked`` naming them until they are gone or drop the dependency; the
annotation ``<domain>/ignore-dependants: "true"`` deletes it anyway. The annotation
``<domain>/abandon`` and an empty inventory need no such check (nothing is torn down).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from oam_operator.api.application import ApplicationStatus, DependencyStatus
from oam_operator.api.conditions import Reason, State
from oam_operator.common.durations import parse_go_duration
from oam_operator.common.objectstatus import ObjectStatus
from oam_operator.operatorpolicies import AppRef, OperatorPolicies, ResolvedCheck, cycle_message
from oam_operator.operatorpolicies.graph import dependants_message, waiting_message
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.status import StatusAnalysisError, StatusAnalyzer

from .appindex import AppIndex

IGNORE_DEPENDANTS = "ignore-dependants"
_EMPTY = AppIndex()


@dataclass(frozen=True)
class PassTiming:
    """A ``reconciliation`` policy's values for this pass; ``None`` keeps the pass's own."""

    interval: float | None = None
    timeout: str | None = None
    retry_interval: float | None = None


@dataclass(frozen=True)
class Held:
    """Why the policies keep the pass from applying: the outcome it ends with."""

    state: State
    reason: Reason
    message: str
    error: bool  # an Error (a cycle) rather than a deliberate hold


def _seconds(text: str) -> float:
    return parse_go_duration(text).total_seconds()


def timing(policies: OperatorPolicies) -> PassTiming:
    settings = policies.reconciliation
    if settings is None:
        return PassTiming()
    return PassTiming(
        interval=_seconds(settings.interval) if settings.interval is not None else None,
        timeout=settings.timeout,
        retry_interval=_seconds(settings.retry_interval) if settings.retry_interval is not None else None,
    )


def hold(index: AppIndex | None, own: AppRef, policies: OperatorPolicies, status: ApplicationStatus) -> Held | None:
    """Why the policies keep the pass from applying, else ``None``; refreshes ``status.dependencies``."""
    if policies.suspend:
        return Held(State.PENDING, Reason.SUSPENDED, "Reconciliation is suspended", error=False)
    if not policies.depends_on:
        status.dependencies = None
        return None
    index = index if index is not None else _EMPTY
    states = index.states(policies.depends_on)
    status.dependencies = [DependencyStatus.model_validate(s.to_status()) for s in states]
    cycle = index.find_cycle(own, policies.depends_on)
    if cycle is not None:
        return Held(State.ERROR, Reason.DEPENDENCY_CYCLE, cycle_message(cycle), error=True)
    new_revision = status.processing_digest != status.last_processing_digest
    if new_revision and not all(s.ready for s in states):
        return Held(State.WAITING, Reason.DEPENDENCIES_NOT_READY, waiting_message(own.namespace, states), error=False)
    return None


def _detail(client: ClusterClient, check: ResolvedCheck, analyzer: StatusAnalyzer) -> str | None:
    """``None`` when the object is Current, else why not."""
    resource = client.resource_for(check.api_version, check.kind)
    if resource is None:
        return f"no such kind {check.api_version} {check.kind}"
    obj = client.get(resource, check.namespace if resource.namespaced else "", check.name)
    if obj is None:
        return "not found"
    try:
        result = analyzer.compute(obj)
    except StatusAnalysisError as error:
        return str(error)
    if result.status == ObjectStatus.CURRENT.value:
        return None
    return result.message or result.status


def unhealthy(client: ClusterClient, namespace: str, checks: Sequence[ResolvedCheck],
              analyzer: StatusAnalyzer) -> str | None:
    """After ``apply()`` is done: ``None`` when every health check passes, else the progress
    message naming the failing ones. Raises what the client raises."""
    if not checks:
        return None
    details = [(check, _detail(client, check, analyzer)) for check in checks]
    failing = [(check, detail) for check, detail in details if detail is not None]
    if not failing:
        return None
    shown = ", ".join(f"{check.display(namespace)} ({detail})" for check, detail in failing[:3])
    if len(failing) > 3:
        shown += f", and {len(failing) - 3} more"
    return f"Waiting for health checks ({len(checks) - len(failing)}/{len(checks)} ready): {shown}"


def dependants_blocking(index: AppIndex | None, own: AppRef, annotations: Mapping[str, str], domain: str) -> str | None:
    """The delete branch's message while dependants keep the Application, else ``None``."""
    annotation = f"{domain}/{IGNORE_DEPENDANTS}"
    if annotations.get(annotation) == "true":
        return None
    blocking = (index if index is not None else _EMPTY).blocking_dependants(own)
    if not blocking:
        return None
    return dependants_message(own.namespace, blocking, annotation)
