"""What the operator does with its own policies (``apppolicies``) inside a pass.

Hooks of the apply branch (``driver._Pass``), in pass order:

1. ``read`` — after the transform: the policies, resolved (cross-namespace and spec-conflict
   refusals are transform failures, verbatim).
2. ``hold`` — before anything is applied: the ``reconciliation`` values replace the interval,
   timeout and error retry delay of this pass; its ``suspend`` gives ``Pending``/``Suspended``;
   a cycle through this Application gives ``Error``/``DependencyCycle``
   (``application cycle detected: a -> b -> a``, on every member); ``status.dependencies`` is
   refreshed; and while a **new revision** has not started (``processingDigest`` differs from
   ``lastProcessingDigest``), any dependency that is not Ready at its current generation gives
   ``Waiting``/``DependenciesNotReady`` with ``Waiting for Applications to be Ready: db
   (Processing), cache (Missing)``. A Waiting Application has no timed requeue: the index wakes
   it when a dependency appears, vanishes or changes readiness.
3. ``health`` — when ``apply()`` is done: every ``health-checks`` object must be ``Current``
   (the reconciler's status analyzer), else ``Processing`` with ``Waiting for health checks
   (<ready>/<n> ready): <Kind> <name> (<detail>)``, on the processing backoff and timeout.

Decisions: a dependency that becomes un-Ready later tears nothing down and does not stop this
Application's drift correction, re-applies or pruning of the revision it already started; it
only holds the *next* revision (a spec or profile change). ``reverse_gate`` (delete branch):
an Application with existing dependants — other than members of a cycle through it — stays
``Deleting``/``DeletionBlocked`` naming them until they are gone or drop the dependency; the
annotation ``<domain>/ignore-dependants: "true"`` deletes it anyway. The annotation
``<domain>/abandon`` and an empty inventory need no such check (nothing is torn down).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from oam_operator.api.application import DependencyStatus
from oam_operator.api.conditions import Reason, State
from oam_operator.common.durations import parse_go_duration
from oam_operator.common.objectstatus import ObjectStatus as Status
from oam_operator.oam.policies.result import PolicyResult
from oam_operator.operatorpolicies import AppRef, OperatorPolicies, ResolvedCheck, cycle_message, read_operator_policies
from oam_operator.operatorpolicies.graph import dependants_message, waiting_message
from oam_operator.reconciler.status import DefaultStatusAnalyzer, StatusAnalysisError

from .appindex import AppIndex

if TYPE_CHECKING:
    from oam_operator.reconciler.client import ClusterClient

    from .driver import PassResult, _Pass

IGNORE_DEPENDANTS = "ignore-dependants"
_EMPTY = AppIndex()


def _index(p: _Pass) -> AppIndex:
    return p.env.apps if p.env.apps is not None else _EMPTY


def read(p: _Pass, result: PolicyResult) -> OperatorPolicies:
    return read_operator_policies(
        result, p.namespace, p.raw_spec, allow_cross_namespace=p.settings.allow_cross_namespace_dependencies
    )


def _seconds(text: str) -> float:
    return parse_go_duration(text).total_seconds()


def hold(p: _Pass, policies: OperatorPolicies) -> PassResult | None:
    """The pass's result when the policies keep it from applying, else ``None``."""
    settings = policies.reconciliation
    if settings is not None:
        if settings.interval is not None:
            p.interval = _seconds(settings.interval)
        if settings.timeout is not None:
            p.timeout_text = settings.timeout
        if settings.retry_interval is not None:
            p.retry_interval = _seconds(settings.retry_interval)
    status = p.status
    if policies.suspend:
        p.set_state(State.PENDING, Reason.SUSPENDED, "Reconciliation is suspended")
        return p.result(None, "pending")
    if not policies.depends_on:
        status.dependencies = None
        return None
    index = _index(p)
    own = AppRef(p.namespace, p.name)
    states = index.states(policies.depends_on)
    status.dependencies = [DependencyStatus.model_validate(s.to_status()) for s in states]
    cycle = index.find_cycle(own, policies.depends_on)
    if cycle is not None:
        return p.fail(Reason.DEPENDENCY_CYCLE, cycle_message(cycle), error_type="other")
    new_revision = status.processing_digest != status.last_processing_digest
    if new_revision and not all(s.ready for s in states):
        p.set_state(State.WAITING, Reason.DEPENDENCIES_NOT_READY, waiting_message(p.namespace, states))
        p.memory.backoff.reset()
        p.memory.error_backoff.reset()
        return p.result(None, "pending")
    return None


def _detail(client: ClusterClient, check: ResolvedCheck, analyzer: DefaultStatusAnalyzer) -> str | None:
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
    if result.status == Status.CURRENT.value:
        return None
    return result.message or result.status


def health(p: _Pass, policies: OperatorPolicies, operations: dict[str, int]) -> PassResult | None:
    """After ``apply()`` is done: ``None`` when every health check passes, else the pass's result."""
    checks: Sequence[ResolvedCheck] = policies.health_checks
    if not checks:
        return None
    client = p.env.clients.for_application(p.namespace, p.spec.service_account_name or "")
    analyzer = DefaultStatusAnalyzer(p.domain, clock=p.env.clock)
    try:
        details = [(check, _detail(client, check, analyzer)) for check in checks]
    except Exception as error:
        return p.reconciler_error(error, deleting=False)
    failing = [(check, detail) for check, detail in details if detail is not None]
    if not failing:
        return None
    shown = ", ".join(f"{check.display(p.namespace)} ({detail})" for check, detail in failing[:3])
    if len(failing) > 3:
        shown += f", and {len(failing) - 3} more"
    message = f"Waiting for health checks ({len(checks) - len(failing)}/{len(checks)} ready): {shown}"
    p.processing()
    delay = p.memory.backoff.next("Processing")
    if p.timed_out():
        p.set_state(State.ERROR, Reason.TIMEOUT, f"Reconciliation timed out after {p.timeout_text}: {message}")
        return p.result(delay, "error", error_type="other", operations=operations)
    p.set_state(State.PROCESSING, Reason.PROCESSING, message)
    return p.result(delay, "progressing", operations=operations)


def reverse_gate(p: _Pass) -> PassResult | None:
    """The delete branch's result while dependants keep the Application, else ``None``."""
    annotation = f"{p.domain}/{IGNORE_DEPENDANTS}"
    if p.annotations.get(annotation) == "true":
        return None
    blocking = _index(p).blocking_dependants(AppRef(p.namespace, p.name))
    if not blocking:
        return None
    p.set_state(State.DELETING, Reason.DELETION_BLOCKED, dependants_message(p.namespace, blocking, annotation))
    return p.result(1.0 + p.memory.backoff.next("DeletionBlocked"), "pending")
