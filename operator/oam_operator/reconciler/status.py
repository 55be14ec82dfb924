"""The status analyzer: a port of kstatus plus status hints (docs/reconciler.md#readiness).

The reconciler asks one question of every live object it has applied: is it ready? This
module answers it without any cluster access. ``compute_kstatus`` is a port of kstatus
(kubernetes-sigs/cli-utils ``pkg/kstatus/status``, tag v0.37.2), message for message, so
that readiness means the same thing as with ``kubectl``-adjacent tooling and the Go
component-operator-runtime. ``DefaultStatusAnalyzer`` wraps it the way component-operator-
runtime's ``pkg/status`` does: it honours the ``<name>/status-hint`` annotation (docs/reconciler.md#status-hints),
waits for the extra conditions of CRDs and APIServices, and does not call a running Job
ready.

Conventions shared by every rule here (decided where the spec is silent):

- A JSON ``null`` is read as "absent" everywhere. Python clients often materialise absent
  fields as ``None``; Go's unstructured helpers would reject some of them, which would turn
  a harmless ``null`` into a permanent error.
- Integers are JSON integers only: ``bool`` and ``float`` are not integers (Go's
  unstructured decoding makes the same distinction).
- Where kstatus would panic on a malformed ``status.containerStatuses`` entry, the entry is
  skipped: a status report is not worth a permanent failure.

The module is pure and has no import-time side effects; it imports only the standard
library and ``oam_operator.common`` (itself standard library only), never kopf, the kubernetes
client or ``oam_operator.oam``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Protocol, runtime_checkable

from oam_operator.common.objectstatus import ObjectStatus

from .strcase import kebab

__all__ = [
    "STATUS_HINT_SUFFIX",
    "DefaultStatusAnalyzer",
    "StatusAnalysisError",
    "StatusAnalyzer",
    "StatusHintError",
    "StatusHints",
    "StatusResult",
    "always_ready_kinds",
    "compute_kstatus",
    "parse_status_hints",
    "status_hint_annotation_key",
]


@dataclass(frozen=True)
class StatusResult:
    """What the analyzer says about one object.

    ``status`` is a plain ``str`` (one of the ``ObjectStatus`` values) so it can go into the
    inventory and JSON unchanged; ``message`` explains it and ends up in the call report.
    """

    status: str
    message: str


class StatusAnalysisError(ValueError):
    """The object's status cannot be analysed (malformed fields, bad hints, unknown phase).

    ``str()`` is the detail; the reconciler wraps it as ``error checking status of object
    <key>: <detail>`` in its own (permanent) error class (docs/reconciler.md#the-status-analyzer,
    docs/reconciler.md#errors). It is defined here,
    not in the reconciler's error module, so this module stays self-contained.
    """


class StatusHintError(StatusAnalysisError):
    """A syntactically invalid ``<name>/status-hint`` annotation; ``str()`` is the docs/reconciler.md#status-hints
    text."""


@runtime_checkable
class StatusAnalyzer(Protocol):
    """Readiness computation the reconciler delegates to (``ReconcilerOptions.status_analyzer``)."""

    def compute(self, obj: Mapping[str, Any]) -> StatusResult:
        """The status of a live object; raises ``StatusAnalysisError`` when it cannot tell."""
        ...


# ---------------------------------------------------------------------------------------
# Status hints (docs/reconciler.md#status-hints)
# ---------------------------------------------------------------------------------------

STATUS_HINT_SUFFIX: Final = "status-hint"

_HINT_HAS_OBSERVED_GENERATION: Final = "has-observed-generation"
_HINT_HAS_READY_CONDITION: Final = "has-ready-condition"
_HINT_CONDITIONS: Final = "conditions"


def status_hint_annotation_key(name: str) -> str:
    """``<name>/status-hint``: the annotation the analyzer of reconciler ``name`` reads."""
    return f"{name}/{STATUS_HINT_SUFFIX}"


@dataclass(frozen=True)
class StatusHints:
    """A parsed status-hint annotation; ``conditions`` keeps the order and duplicates given."""

    has_observed_generation: bool = False
    has_ready_condition: bool = False
    conditions: tuple[str, ...] = ()


def parse_status_hints(value: str) -> StatusHints:
    """Parse a status-hint annotation value; raise ``StatusHintError`` on the first bad piece.

    Public so that apply-time validation (docs/reconciler.md#steps-of-an-apply-call) can run the very same check.
    """
    has_observed_generation = False
    has_ready_condition = False
    conditions: list[str] = []
    for piece in value.split(","):
        # `<key>=<value>` needs a non-empty key; `=x` is a bare (and unknown) key.
        raw_key, sep, hint_value = piece.partition("=")
        if not sep or not raw_key:
            raw_key, hint_value, has_value = piece, "", False
        else:
            has_value = True
        key = kebab(raw_key)
        if key == _HINT_HAS_OBSERVED_GENERATION:
            if has_value:
                raise StatusHintError(f"status hint {_HINT_HAS_OBSERVED_GENERATION} does not take a value")
            has_observed_generation = True
        elif key == _HINT_HAS_READY_CONDITION:
            if has_value:
                raise StatusHintError(f"status hint {_HINT_HAS_READY_CONDITION} does not take a value")
            has_ready_condition = True
        elif key == _HINT_CONDITIONS:
            if not has_value:
                raise StatusHintError(f"status hint {_HINT_CONDITIONS} requires a value")
            # An empty entry names the type "", which never exists: documented, not rejected.
            conditions.extend(hint_value.split(";"))
        else:
            raise StatusHintError(f"unknown status hint {raw_key}")
    return StatusHints(has_observed_generation, has_ready_condition, tuple(conditions))


# ---------------------------------------------------------------------------------------
# Reading JSON-like objects
# ---------------------------------------------------------------------------------------


def _json_type(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _lookup(obj: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path``, or ``None`` when it is absent or an intermediate is no object.

    Lenient on purpose: kstatus' ``GetIntField``/``GetStringField`` fall back to their
    default in both cases.
    """
    current: Any = obj
    for part in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def _get_int(obj: Mapping[str, Any], path: Sequence[str], default: int) -> int:
    """kstatus ``GetIntField``: the integer at ``path``, else ``default``."""
    value = _lookup(obj, path)
    return value if _is_int(value) else default


def _get_str(obj: Mapping[str, Any], path: Sequence[str], default: str) -> str:
    """kstatus ``GetStringField``: the string at ``path``, else ``default``."""
    value = _lookup(obj, path)
    return value if isinstance(value, str) else default


def _strict_int(obj: Mapping[str, Any], path: Sequence[str]) -> int | None:
    """The integer at ``path`` or ``None`` when absent; a wrongly typed value raises.

    The strict counterpart of ``_get_int``, for the fields kstatus reads with
    ``NestedInt64`` (generations, ``desiredNumberScheduled``).
    """
    current: Any = obj
    for depth, part in enumerate(path):
        if current is None:
            return None
        if not isinstance(current, Mapping):
            where = ".".join(path[:depth])
            raise StatusAnalysisError(f"invalid {where}: expected an object, got {_json_type(current)}")
        current = current.get(part)
    if current is None:
        return None
    if not _is_int(current):
        raise StatusAnalysisError(f"invalid {'.'.join(path)}: expected an integer, got {_json_type(current)}")
    value: int = current
    return value


@dataclass(frozen=True)
class _Condition:
    """One entry of ``status.conditions``; absent strings read as ``""``."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    observed_generation: int | None = None  # 0 counts as absent (Go's omitempty)


def _read_conditions(obj: Mapping[str, Any]) -> list[_Condition]:
    """``status.conditions`` as typed records; a value of the wrong JSON type raises."""
    status = obj.get("status")
    if status is None:
        return []
    if not isinstance(status, Mapping):
        raise StatusAnalysisError(f"invalid status: expected an object, got {_json_type(status)}")
    raw = status.get("conditions")
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise StatusAnalysisError(f"invalid status.conditions: expected an array, got {_json_type(raw)}")
    conditions: list[_Condition] = []
    for index, item in enumerate(raw):
        where = f"status.conditions[{index}]"
        if not isinstance(item, Mapping):
            raise StatusAnalysisError(f"invalid {where}: expected an object, got {_json_type(item)}")
        fields: dict[str, str] = {}
        for field in ("type", "status", "reason", "message"):
            value = item.get(field)
            if value is None:
                value = ""
            elif not isinstance(value, str):
                raise StatusAnalysisError(f"invalid {where}.{field}: expected a string, got {_json_type(value)}")
            fields[field] = value
        observed = item.get("observedGeneration")
        if observed is not None and not _is_int(observed):
            raise StatusAnalysisError(
                f"invalid {where}.observedGeneration: expected an integer, got {_json_type(observed)}"
            )
        conditions.append(
            _Condition(
                type=fields["type"],
                status=fields["status"],
                reason=fields["reason"],
                message=fields["message"],
                observed_generation=observed or None,
            )
        )
    return conditions


def _has_condition(conditions: Iterable[_Condition], type_: str, status: str) -> bool:
    return any(c.type == type_ and c.status == status for c in conditions)


def _group_kind_key(obj: Mapping[str, Any]) -> str:
    """``<group>/<Kind>`` (``<Kind>`` for the core group): the key of the per-kind rules."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        return ""
    parts = api_version.split("/") if isinstance(api_version, str) else []
    if len(parts) > 2:
        return ""  # not a valid apiVersion: no per-kind rule (as Go's ParseGroupVersion)
    group = parts[0] if len(parts) == 2 else ""
    return f"{group}/{kind}" if group else kind


def _parse_timestamp(value: object) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime (naive means UTC), else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------------
# kstatus port (docs/reconciler.md#kstatus-rules)
# ---------------------------------------------------------------------------------------

_CURRENT: Final = ObjectStatus.CURRENT.value
_IN_PROGRESS: Final = ObjectStatus.IN_PROGRESS.value
_FAILED: Final = ObjectStatus.FAILED.value
_TERMINATING: Final = ObjectStatus.TERMINATING.value

_MAX_INT32: Final = 2147483647
_POD_SCHEDULE_WINDOW: Final = timedelta(seconds=15)

_KindRule = Callable[[Mapping[str, Any], list[_Condition], datetime], StatusResult]


def _current(message: str) -> StatusResult:
    return StatusResult(_CURRENT, message)


def _in_progress(message: str) -> StatusResult:
    return StatusResult(_IN_PROGRESS, message)


def _failed(message: str) -> StatusResult:
    return StatusResult(_FAILED, message)


def _generic(obj: Mapping[str, Any], conditions: list[_Condition]) -> StatusResult | None:
    """Deletion, observed generation and the standard Reconciling/Stalled conditions."""
    deletion = _lookup(obj, ("metadata", "deletionTimestamp"))
    if deletion is not None and not isinstance(deletion, str):
        raise StatusAnalysisError(f"invalid metadata.deletionTimestamp: expected a string, got {_json_type(deletion)}")
    if deletion:
        return StatusResult(_TERMINATING, "Resource scheduled for deletion")

    generation = _strict_int(obj, ("metadata", "generation"))
    if generation is not None:
        observed = _strict_int(obj, ("status", "observedGeneration"))
        if observed is not None and observed != generation:
            kind = obj.get("kind")
            kind_text = kind if isinstance(kind, str) else ""
            return _in_progress(f"{kind_text} generation is {generation}, but latest observed generation is {observed}")

    for cond in conditions:
        if cond.type == "Reconciling" and cond.status == "True":
            return _in_progress(cond.message)
        if cond.type == "Stalled" and cond.status == "True":
            return _failed(cond.message)
    return None


def _always_ready(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    return _current("Resource is always ready")


def _service(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    service_type = _get_str(obj, ("spec", "type"), "ClusterIP")
    cluster_ip = _get_str(obj, ("spec", "clusterIP"), "")
    if service_type == "LoadBalancer" and not cluster_ip:
        return _in_progress("ClusterIP not set. Service type: LoadBalancer")
    return _current("Service is ready")


def _pvc(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    phase = _get_str(obj, ("status", "phase"), "unknown")
    if phase != "Bound":
        return _in_progress(f"PVC is not Bound. phase: {phase}")
    return _current("PVC is Bound")


def _crash_looping_containers(obj: Mapping[str, Any]) -> list[str]:
    """Names of containers waiting in ``CrashLoopBackOff``; malformed entries are skipped."""
    statuses = _lookup(obj, ("status", "containerStatuses"))
    if statuses is None:
        return []
    if not isinstance(statuses, list | tuple):
        raise StatusAnalysisError(f"invalid status.containerStatuses: expected an array, got {_json_type(statuses)}")
    names: list[str] = []
    for entry in statuses:
        if not isinstance(entry, Mapping):
            continue
        name = entry.get("name")
        reason = _lookup(entry, ("state", "waiting", "reason"))
        if isinstance(name, str) and reason == "CrashLoopBackOff":
            names.append(name)
    return names


def _pod(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    phase = _get_str(obj, ("status", "phase"), "")
    if phase == "Succeeded":
        return _current("Pod has completed successfully")
    if phase == "Failed":
        return _current("Pod has completed, but not successfully")
    if phase == "Running":
        if _has_condition(conditions, "Ready", "True"):
            return _current("Pod is Ready")
        crashing = _crash_looping_containers(obj)
        if crashing:
            return _failed(f"Containers in CrashLoop state: {','.join(crashing)}")
        return _in_progress("Pod is running but is not Ready")
    if phase == "Pending":
        scheduled = next((c for c in conditions if c.type == "PodScheduled" and c.status == "False"), None)
        if scheduled is not None and scheduled.reason == "Unschedulable":
            created = _parse_timestamp(_lookup(obj, ("metadata", "creationTimestamp")))
            # Give the scheduler 15 s; an unknown creation time counts as long ago (as in Go).
            if created is not None and now - _POD_SCHEDULE_WINDOW < created:
                return _in_progress("Pod has not been scheduled")
            return _failed("Pod could not be scheduled")
        return _in_progress("Pod is in the Pending phase")
    if phase == "":
        return _in_progress("Pod phase not available")
    raise StatusAnalysisError(f"unknown phase {phase}")


def _deployment(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    # Without a progress deadline the controller never sets Progressing (MaxInt32 = unset).
    progressing = _get_int(obj, ("spec", "progressDeadlineSeconds"), _MAX_INT32) == _MAX_INT32
    available = False
    for cond in conditions:
        if cond.type == "Progressing":
            if cond.reason == "ProgressDeadlineExceeded":
                return _failed("Progress deadline exceeded")
            if cond.status == "True" and cond.reason == "NewReplicaSetAvailable":
                progressing = True
        elif cond.type == "Available" and cond.status == "True":
            available = True

    spec = _get_int(obj, ("spec", "replicas"), 1)
    replicas = _get_int(obj, ("status", "replicas"), 0)
    updated = _get_int(obj, ("status", "updatedReplicas"), 0)
    ready = _get_int(obj, ("status", "readyReplicas"), 0)
    available_replicas = _get_int(obj, ("status", "availableReplicas"), 0)

    if spec > replicas:
        return _in_progress(f"Replicas: {replicas}/{spec}")
    if spec > updated:
        return _in_progress(f"Updated: {updated}/{spec}")
    if replicas > spec:
        return _in_progress(f"Pending termination: {replicas - spec}")
    if updated > available_replicas:
        return _in_progress(f"Available: {available_replicas}/{updated}")
    if spec > ready:
        return _in_progress(f"Ready: {ready}/{spec}")
    if not progressing:
        return _in_progress("ReplicaSet not Available")
    if not available:
        return _in_progress("Deployment not Available")
    return _current(f"Deployment is available. Replicas: {replicas}")


def _statefulset(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    if _get_str(obj, ("spec", "updateStrategy", "type"), "") == "OnDelete":
        return _current("StatefulSet is using the ondelete update strategy")

    spec = _get_int(obj, ("spec", "replicas"), 1)
    ready = _get_int(obj, ("status", "readyReplicas"), 0)
    current = _get_int(obj, ("status", "currentReplicas"), 0)
    updated = _get_int(obj, ("status", "updatedReplicas"), 0)
    replicas = _get_int(obj, ("status", "replicas"), 0)
    partition = _get_int(obj, ("spec", "updateStrategy", "rollingUpdate", "partition"), -1)  # -1 = none

    if spec > replicas:
        return _in_progress(f"Replicas: {replicas}/{spec}")
    if spec > ready:
        return _in_progress(f"Ready: {ready}/{spec}")
    if replicas > spec:
        return _in_progress(f"Pending termination: {replicas - spec}")
    if partition != -1:
        if updated < spec - partition:
            return _in_progress(f"updated: {updated}/{spec - partition}")
        return _current(f"Partition rollout complete. updated: {updated}")
    if spec > current:
        return _in_progress(f"current: {current}/{spec}")
    if _get_str(obj, ("status", "currentRevision"), "") != _get_str(obj, ("status", "updateRevision"), ""):
        return _in_progress("Waiting for updated revision to match current")
    return _current(f"All replicas scheduled as expected. Replicas: {replicas}")


def _daemonset(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    # The generic check tolerates missing generations; a DaemonSet the controller has seen
    # always has them, so here their absence means "not observed yet".
    if _strict_int(obj, ("metadata", "generation")) is None:
        return _in_progress("Missing .metadata.generation field")
    if _strict_int(obj, ("status", "observedGeneration")) is None:
        return _in_progress("Missing .status.observedGeneration field")
    desired = _strict_int(obj, ("status", "desiredNumberScheduled"))
    if desired is None:
        return _in_progress("Missing .status.desiredNumberScheduled field")

    current = _get_int(obj, ("status", "currentNumberScheduled"), 0)
    updated = _get_int(obj, ("status", "updatedNumberScheduled"), 0)
    available = _get_int(obj, ("status", "numberAvailable"), 0)
    ready = _get_int(obj, ("status", "numberReady"), 0)

    if desired > current:
        return _in_progress(f"Current: {current}/{desired}")
    if desired > updated:
        return _in_progress(f"Updated: {updated}/{desired}")
    if desired > available:
        return _in_progress(f"Available: {available}/{desired}")
    if desired > ready:
        return _in_progress(f"Ready: {ready}/{desired}")
    return _current(f"All replicas scheduled as expected. Replicas: {desired}")


def _replicaset(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    if _has_condition(conditions, "ReplicaFailure", "True"):
        return _in_progress("Replica Failure condition. Check Pods")

    spec = _get_int(obj, ("spec", "replicas"), 1)
    replicas = _get_int(obj, ("status", "replicas"), 0)
    ready = _get_int(obj, ("status", "readyReplicas"), 0)
    available = _get_int(obj, ("status", "availableReplicas"), 0)
    labelled = _get_int(obj, ("status", "fullyLabeledReplicas"), 0)

    if spec > labelled:
        return _in_progress(f"Labelled: {labelled}/{spec}")
    if spec > available:
        return _in_progress(f"Available: {available}/{spec}")
    if spec > ready:
        return _in_progress(f"Ready: {ready}/{spec}")
    if replicas > spec:
        return _in_progress(f"Pending termination: {replicas - spec}")
    return _current(f"ReplicaSet is available. Replicas: {replicas}")


def _pdb(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    # The disruption budget is about evictions, not about the PDB being ready.
    return _current("AlwaysReady")


def _job(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    parallelism = _get_int(obj, ("spec", "parallelism"), 1)
    completions = _get_int(obj, ("spec", "completions"), parallelism)
    succeeded = _get_int(obj, ("status", "succeeded"), 0)
    failed = _get_int(obj, ("status", "failed"), 0)
    active = _get_int(obj, ("status", "active"), 0)
    for cond in conditions:
        if cond.type == "Complete" and cond.status == "True":
            return _current(f"Job Completed. succeeded: {succeeded}/{completions}")
        if cond.type == "Failed" and cond.status == "True":
            return _failed(f"Job Failed. failed: {failed}/{completions}")
    if not _get_str(obj, ("status", "startTime"), ""):
        return _in_progress("Job not started")
    return _current(f"Job in progress. success:{succeeded}, active: {active}, failed: {failed}")


def _crd(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    for cond in conditions:
        if cond.type == "NamesAccepted" and cond.status == "False":
            return _failed(cond.message)
        if cond.type == "Established":
            if cond.status == "False" and cond.reason != "Installing":
                return _failed(cond.message)
            if cond.status == "True":
                return _current("CRD is established")
    return _in_progress("Install in progress")


_KIND_RULES: Final[Mapping[str, _KindRule]] = {
    "ConfigMap": _always_ready,
    "Secret": _always_ready,
    "batch/CronJob": _always_ready,
    "Service": _service,
    "PersistentVolumeClaim": _pvc,
    "Pod": _pod,
    "apps/Deployment": _deployment,
    "extensions/Deployment": _deployment,
    "apps/StatefulSet": _statefulset,
    "apps/DaemonSet": _daemonset,
    "extensions/DaemonSet": _daemonset,
    "apps/ReplicaSet": _replicaset,
    "extensions/ReplicaSet": _replicaset,
    "policy/PodDisruptionBudget": _pdb,
    "batch/Job": _job,
    "apiextensions.k8s.io/CustomResourceDefinition": _crd,
}


def always_ready_kinds() -> frozenset[tuple[str, str]]:
    """The (group, kind) pairs whose rule reports Current whenever the object exists."""
    return frozenset(
        (key.rpartition("/")[0], key.rpartition("/")[2]) for key, rule in _KIND_RULES.items() if rule is _always_ready
    )


def _ready_condition_rule(conditions: list[_Condition]) -> StatusResult | None:
    """The widely used (if non-standard) ``Ready`` condition: the first decisive one wins."""
    for cond in conditions:
        if cond.type != "Ready":
            continue
        if cond.status == "True":
            return _current("Resource is Ready")
        if cond.status in ("False", "Unknown"):
            return _in_progress(cond.message)
    return None


def _kstatus(obj: Mapping[str, Any], conditions: list[_Condition], now: datetime) -> StatusResult:
    result = _generic(obj, conditions)
    if result is not None:
        return result
    rule = _KIND_RULES.get(_group_kind_key(obj))
    if rule is not None:
        return rule(obj, conditions, now)
    result = _ready_condition_rule(conditions)
    if result is not None:
        return result
    # No known conditions: kstatus assumes the object is current.
    return _current("Resource is current")


# Objects whose controller reports a ``Ready`` condition of the generation it reconciled (Flux's
# toolkit): kstatus calls such an object Current while it has no status at all, which reads a
# HelmRelease nobody reconciles as Ready. For these groups the object is Current only with
# ``Ready=True`` of its current generation (``status.observedGeneration``, else the condition's).
_CONDITION_CONTROLLERS: Final[dict[str, str]] = {
    "helm.toolkit.fluxcd.io": "Flux's helm-controller",
    "source.toolkit.fluxcd.io": "Flux's source-controller",
    "kustomize.toolkit.fluxcd.io": "Flux's kustomize-controller",
    "notification.toolkit.fluxcd.io": "Flux's notification-controller",
    "image.toolkit.fluxcd.io": "Flux's image-reflector-controller",
}


def _reconciled_ready(obj: Mapping[str, Any], conditions: list[_Condition], controller: str) -> StatusResult:
    """Readiness of an object of a condition-reporting controller (see ``_CONDITION_CONTROLLERS``)."""
    deletion = _lookup(obj, ("metadata", "deletionTimestamp"))
    if isinstance(deletion, str) and deletion:
        return StatusResult(_TERMINATING, "Resource scheduled for deletion")
    kind = str(obj.get("kind") or "")
    ready = next((c for c in reversed(conditions) if c.type == "Ready"), None)
    if ready is None:
        return _in_progress(f"{kind} not reconciled yet: no Ready condition (is {controller} running?)")
    generation = _strict_int(obj, ("metadata", "generation"))
    observed = _strict_int(obj, ("status", "observedGeneration"))
    if observed is None:
        observed = ready.observed_generation
    if generation is not None and observed != generation:
        return _in_progress(
            f"{kind} generation {generation} not reconciled yet: Ready is of generation "
            f"{observed if observed is not None else 'unknown'} (is {controller} running?)"
        )
    if _has_condition(conditions, "Stalled", "True"):
        return _failed(next(c.message for c in conditions if c.type == "Stalled" and c.status == "True"))
    if ready.status == "True":
        return _current("Resource is Ready")
    return _in_progress(ready.message or f"{kind} is not Ready")


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def compute_kstatus(obj: Mapping[str, Any], *, now: datetime | None = None) -> StatusResult:
    """Plain kstatus for ``obj`` (no hints, no extra conditions, no Job refinement).

    ``now`` (default: the current UTC time) only matters for the 15-second scheduling
    window of Pods. Raises ``StatusAnalysisError`` where kstatus returns an error.
    """
    if not isinstance(obj, Mapping):
        raise StatusAnalysisError(f"invalid object: expected an object, got {_json_type(obj)}")
    return _kstatus(obj, _read_conditions(obj), _aware(now if now is not None else _utc_now()))


# ---------------------------------------------------------------------------------------
# The analyzer (docs/reconciler.md#the-status-analyzer)
# ---------------------------------------------------------------------------------------


class DefaultStatusAnalyzer:
    """kstatus plus the ``<name>/status-hint`` annotation, CRD/APIService extra conditions
    and the "a Job is ready only when finished" rule (component-operator-runtime semantics).

    ``clock`` is the time source for the Pod scheduling window; the reconciler passes its
    own clock so tests can pin time. Instances are stateless and thread-safe.
    """

    def __init__(self, name: str, *, clock: Callable[[], datetime] | None = None) -> None:
        self._name = name
        self._hint_key = status_hint_annotation_key(name)
        self._clock: Callable[[], datetime] = clock if clock is not None else _utc_now

    @property
    def name(self) -> str:
        """The reconciler name whose status-hint annotation is read."""
        return self._name

    def __repr__(self) -> str:
        return f"DefaultStatusAnalyzer({self._name!r})"

    def _hints(self, obj: Mapping[str, Any]) -> StatusHints | None:
        annotations = _lookup(obj, ("metadata", "annotations"))
        if not isinstance(annotations, Mapping):
            return None
        raw = annotations.get(self._hint_key)
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise StatusAnalysisError(f"invalid annotation {self._hint_key}: expected a string, got {_json_type(raw)}")
        return parse_status_hints(raw)

    def compute(self, obj: Mapping[str, Any]) -> StatusResult:
        """The readiness of a live object (docs/reconciler.md#the-status-analyzer); never mutates ``obj``."""
        if not isinstance(obj, Mapping):
            raise StatusAnalysisError(f"invalid object: expected an object, got {_json_type(obj)}")
        # Step 1: the fields the hints work on; wrong JSON types raise.
        conditions = _read_conditions(obj)
        observed_generation = _strict_int(obj, ("status", "observedGeneration"))
        ready = next((c for c in reversed(conditions) if c.type == "Ready"), None)

        # Step 2: the hints act on a copy (only `status` changes, so a shallow copy of the
        # object and of `status` suffices; the original is never touched).
        target: Mapping[str, Any] = obj
        target_conditions = conditions
        extra_conditions: list[str] = []
        hints = self._hints(obj)
        if hints is not None:
            extra_conditions.extend(hints.conditions)
            status_patch: dict[str, Any] = {}
            if hints.has_observed_generation and observed_generation is None:
                # Without a reported generation, trust the Ready condition's, else force a
                # mismatch (-1) so the object stays InProgress until its controller reports.
                og = ready.observed_generation if ready is not None else None
                status_patch["observedGeneration"] = og if og is not None else -1
            if hints.has_ready_condition and ready is None:
                appended = {"type": "Ready", "status": "Unknown"}
                raw_conditions = _lookup(obj, ("status", "conditions")) or []
                status_patch["conditions"] = [*raw_conditions, appended]
                target_conditions = [*conditions, _Condition(type="Ready", status="Unknown")]
            if status_patch:
                status = obj.get("status")
                target = {**obj, "status": {**(status if isinstance(status, Mapping) else {}), **status_patch}}

        # Step 3: types whose readiness kstatus does not know fully.
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version == "apiextensions.k8s.io/v1" and kind == "CustomResourceDefinition":
            extra_conditions.extend(("Established", "NamesAccepted"))
        elif api_version == "apiregistration.k8s.io/v1" and kind == "APIService":
            extra_conditions.append("Available")

        # Step 4: kstatus, or for a condition-reporting controller's object without hints its
        # Ready condition of the current generation (``_CONDITION_CONTROLLERS``).
        group = api_version.split("/", 1)[0] if isinstance(api_version, str) and "/" in api_version else ""
        controller = _CONDITION_CONTROLLERS.get(group)
        if controller is not None and hints is None:
            result = _reconciled_ready(obj, conditions, controller)
        else:
            result = _kstatus(target, target_conditions, _aware(self._clock()))

        # Step 5: every extra condition must be present and True wherever it occurs (judged
        # on the original conditions, not on the hint-appended Ready).
        if result.status == _CURRENT:
            for type_ in extra_conditions:
                occurrences = [c for c in conditions if c.type == type_]
                if not occurrences or any(c.status != "True" for c in occurrences):
                    return _in_progress(f"Waiting for condition {type_}")

        # Step 6: kstatus calls a started Job Current; we wait until it has finished.
        if result.status == _CURRENT and api_version == "batch/v1" and kind == "Job":
            finished = any(c.type in ("Complete", "Failed") and c.status == "True" for c in conditions)
            if not finished:
                return _in_progress("Job not finished")
        return result
