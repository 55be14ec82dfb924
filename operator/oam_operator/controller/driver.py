"""One pass of the driver (operator.md §4): the apply branch and the delete branch.

A pass is a plain, synchronous function of the Application's body, the operator's memory of
it (the status cache and the backoff state) and the environment; it returns the new status
and when to run again. It never writes the Application: the kopf layer (``handlers.py``)
persists the status, emits Events and schedules the next pass. Keeping the logic here makes
it testable step by step without kopf.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from oam_operator.api.compact_inventory import CompactInventoryError, read_status_inventory
from oam_operator.api.compact_inventory import encode as encode_inventory
from oam_operator.api.conditions import Condition, Reason, State, conditions_for
from oam_operator.api.meta import format_timestamp
from oam_operator.api.summary import summary_of
from oam_operator.durations import parse_go_duration
from oam_operator.oam.document.document import application_from_object, cluster_profile_from_object
from oam_operator.oam.errors import OamError, TransformError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.pipeline import Pipeline
from oam_operator.oam.policies.result import PolicyResult
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import (
    ApiError,
    ObjectValidationError,
    OwnershipConflictError,
    PermanentApiError,
    ReconcilerError,
)
from oam_operator.reconciler.inventory import InventoryItem, Phase, dump_inventory, load_inventory
from oam_operator.reconciler.options import ReconcilerOptions
from oam_operator.reconciler.policies import (
    AdoptionPolicy,
    DeletePolicy,
    MissingNamespacesPolicy,
    UpdatePolicy,
)
from oam_operator.reconciler.reconciler import Reconciler
from oam_operator.settings import Settings

from . import orchestration
from .appindex import AppIndex
from .backoff import Backoff, ErrorBackoff, Jitter
from .depth import depth_refusal
from .digest import component_digest
from .encode import EncodedTree, encode
from .fluxapis import missing_flux_apis
from .limits import size_refusal
from .progress import apply_progress, capitalised, delete_progress
from .selfref import self_reference
from .tenancy import NotPermitted, TenantClients

log = logging.getLogger("oam_operator.controller")
MAX_MESSAGE = 32768  # the API server's limit for a condition message
NAMESPACE_TERMINATING = ("Namespace {namespace} is being deleted: its objects are deleted with the operator's "
                         "identity")


@dataclass
class Memory:
    """What the operator remembers of one Application between passes (dropped on deletion)."""

    status: dict[str, Any] | None = None  # the next pass's input: persisted, or newer progress
    persisted: dict[str, Any] | None = None  # the status as this operator last wrote it
    written_at: float | None = None  # time.monotonic() of that write
    backoff: Backoff = field(default_factory=Backoff)
    error_backoff: ErrorBackoff = field(default_factory=ErrorBackoff)
    last_event: tuple[str, str, str] | None = None
    seen: tuple[int, str | None] | None = None
    profile_name: str = ""
    namespace_terminating: bool = False


@dataclass
class Environment:
    settings: Settings
    pipeline: Pipeline
    clients: TenantClients
    cluster_id: str
    profiles: Callable[[str], Mapping[str, Any] | None]
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    jitter: Jitter = field(default_factory=Jitter)
    reconciler_metrics: Any = None
    on_transform: Callable[[float, bool], None] | None = None
    apps: AppIndex | None = None  # the Application index of app-dependency policies (orchestration.py)


@dataclass
class Event:
    type: str
    reason: str
    message: str


@dataclass
class PassResult:
    """The outcome of a pass: the status to persist and when to run again.

    ``delay`` is seconds (``0`` = at once, no jitter) or ``None`` (no timed requeue).
    ``finished`` is set by the delete branch when the finalizer may go.
    """

    status: dict[str, Any]
    delay: float | None
    result: str
    finished: bool = False
    events: list[Event] = field(default_factory=list)
    error_type: str | None = None
    operations: dict[str, int] = field(default_factory=dict)


def _seconds(text: str) -> float:
    return parse_go_duration(text).total_seconds()


def _served_by(reconciler: Reconciler) -> Callable[[str, str], bool]:
    """``served(apiVersion, kind)`` from discovery; a failing discovery is no verdict (True)."""

    def served(api_version: str, kind: str) -> bool:
        try:
            return reconciler.client.resource_for(api_version, kind) is not None
        except Exception:
            return True

    return served


def _is_ready(item: InventoryItem) -> bool:
    return item.phase is Phase.COMPLETED or (item.phase is Phase.READY and item.status == "Current")


class _Pass:
    """Shared state of one pass; the two branches below are its methods."""

    def __init__(self, body: Mapping[str, Any], memory: Memory, env: Environment) -> None:
        self.body, self.memory, self.env = body, memory, env
        self.settings = env.settings
        meta = body.get("metadata") or {}
        self.meta = meta
        self.spec: Mapping[str, Any] = body.get("spec") or {}
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta.get("name", "")
        self.generation: int = int(meta.get("generation") or 1)
        self.annotations: Mapping[str, str] = meta.get("annotations") or {}
        self.domain = self.settings.domain
        self.now = env.clock()
        previous = memory.status if memory.status is not None else body.get("status") or {}
        self.status: dict[str, Any] = copy.deepcopy(dict(previous))
        self.interval = _seconds(self.spec.get("interval") or self.settings.default_interval)
        self.timeout_text: str = self.spec.get("timeout") or self.settings.default_timeout
        self.owner_id = f"{env.cluster_id}/{self.namespace}/{self.name}"
        self.retry_interval: float | None = None  # a reconciliation policy's retryInterval
        self.policy_result: PolicyResult | None = None

    # -- status helpers -------------------------------------------------------------------------

    def set_state(self, state: State, reason: Reason, message: str) -> None:
        message = message.replace("\n", " ")[:MAX_MESSAGE]
        previous = [Condition.model_validate(c) for c in self.status.get("conditions") or []]
        conditions = conditions_for(state, reason.value, message, self.generation, self.now, previous)
        self.status["state"] = state.value
        self.status["conditions"] = [c.to_json() for c in conditions]
        self.status["summary"] = summary_of(reason.value, message)

    def result(self, delay: float | None, result: str, *, jitter: bool = True, **extra: Any) -> PassResult:
        if delay is not None and delay > 0 and jitter:
            delay = self.env.jitter(delay)
        return PassResult(self.status, delay, result, **extra)

    def fail(self, reason: Reason, message: str, *, error_type: str, delay: float | None = None) -> PassResult:
        """An ``Error`` state: permanent until the input, a permission or another owner changes."""
        self.set_state(State.ERROR, reason, message)
        self.memory.backoff.reset()
        if delay is None and self.retry_interval is not None:
            delay = self.retry_interval
        if delay is None:
            delay = self.memory.error_backoff.next(reason.value, self.interval)
        return self.result(delay, "error", error_type=error_type)

    def reconciler(self, client: ClusterClient | None = None) -> Reconciler:
        spec, settings = self.spec, self.settings
        cross_namespace = settings.allow_cross_namespace_objects
        events = settings.dependent_events and self.annotations.get(f"{self.domain}/disable-events") != "true"
        options = ReconcilerOptions(
            adoption_policy=AdoptionPolicy(spec.get("adoptionPolicy") or settings.default_adoption_policy.value),
            update_policy=UpdatePolicy(spec.get("updatePolicy") or settings.default_update_policy.value),
            delete_policy=DeletePolicy(spec.get("deletePolicy") or "Delete"),
            missing_namespaces_policy=(
                MissingNamespacesPolicy.CREATE if cross_namespace else MissingNamespacesPolicy.DO_NOT_CREATE
            ),
            reapply_interval=parse_go_duration(settings.reapply_interval),
            concurrency=settings.apply_concurrency,
            enable_events=events,
            allowed_namespaces=None if cross_namespace else frozenset({self.namespace}),
            allow_cluster_scoped=settings.allow_cluster_scoped_objects,
            metrics=self.env.reconciler_metrics,
            clock=self.env.clock,
        )
        if client is None:
            client = self.env.clients.for_application(self.namespace, self.spec.get("serviceAccountName") or "")
        return Reconciler(self.domain, client, options)

    def deletion_client(self) -> tuple[ClusterClient, bool]:
        """The delete branch's client (tenancy.py) and whether the namespace is being deleted.

        Only an impersonating client needs the namespace's state: then one GET with the
        operator's identity per pass until the namespace is seen terminating (which is final).
        """
        clients = self.env.clients
        client = clients.for_deletion(self.namespace, self.spec.get("serviceAccountName") or "")
        if client is clients.operator_client:
            return client, False
        if not self.memory.namespace_terminating:
            try:
                namespace = clients.operator_client.request("read", "GET", f"/api/v1/namespaces/{self.namespace}")
            except ApiError:
                namespace = {}
            self.memory.namespace_terminating = bool((namespace.get("metadata") or {}).get("deletionTimestamp"))
        if self.memory.namespace_terminating:
            return clients.inside_namespace(client, self.namespace), True
        return client, False

    def timed_out(self) -> bool:
        since = self.status.get("processingSince")
        if not since:
            return False
        started = datetime.fromisoformat(since.replace("Z", "+00:00"))
        return self.now - started >= parse_go_duration(self.timeout_text)

    def reconciler_error(self, error: Exception, deleting: bool) -> PassResult:
        """§4.5: classify an exception of ``apply()``/``delete()``/``is_deletion_allowed()``."""
        if isinstance(error, ReconcilerError) and error.retryable:
            self.memory.error_backoff.reset()
            if deleting:
                self.set_state(State.DELETION_PENDING, Reason.DELETION_RETRYING, capitalised(str(error)))
            elif self.timed_out():
                self.set_state(State.PENDING, Reason.TIMEOUT, capitalised(str(error)))
            else:
                self.set_state(State.PENDING, Reason.RETRYING, capitalised(str(error)))
            delay = error.retry_after if error.retry_after is not None else self.memory.backoff.next("Retrying")
            status_code = getattr(error, "status", None)
            return self.result(delay, "pending", error_type=str(status_code) if status_code else "other")
        if isinstance(error, ObjectValidationError):
            return self.fail(Reason.INVALID_OBJECTS, capitalised(str(error)), error_type="validation")
        if isinstance(error, OwnershipConflictError):
            return self.fail(Reason.OWNERSHIP_CONFLICT, capitalised(str(error)), error_type="conflict")
        if isinstance(error, PermanentApiError):
            return self.fail(Reason.API_ERROR, capitalised(str(error)), error_type=str(error.status))
        log.exception("internal error in a pass of %s/%s", self.namespace, self.name, exc_info=error)
        return self.fail(Reason.ERROR, f"Internal error: {type(error).__name__}: {error}", error_type="other")

    # -- the apply branch (§4.2) ------------------------------------------------------------------

    def apply_branch(self) -> PassResult:
        status, settings = self.status, self.settings
        if not status.get("observedGeneration"):
            # First seen: recorded, and the pass goes on at once. No write of its own: the
            # pass's one status write (the inventory checkpoint) follows in a few milliseconds,
            # so a separate Pending/FirstSeen write (and Event) would only cost requests.
            self.set_state(State.PENDING, Reason.FIRST_SEEN, "First seen")
            status["observedGeneration"] = self.generation
        if self.spec.get("suspend"):
            self.set_state(State.PENDING, Reason.SUSPENDED, "Reconciliation is suspended")
            status["observedGeneration"] = self.generation
            return self.result(None, "pending")
        too_deep = depth_refusal(self.spec)
        if too_deep is not None:  # before anything walks the spec recursively (depth.py)
            status["observedGeneration"] = self.generation
            self.set_state(State.ERROR, Reason.TRANSFORM_FAILED, too_deep)
            self.memory.backoff.reset()
            return self.result(self.interval, "error", error_type="transform")

        profile_name = self.spec.get("profile") or settings.default_profile
        self.memory.profile_name = profile_name
        profile = self.env.profiles(profile_name) if profile_name else None
        if self.spec.get("profile") and profile is None:
            status["observedGeneration"] = self.generation
            return self.fail(Reason.PROFILE_NOT_FOUND, f"ClusterProfile {profile_name} not found", error_type="other")
        resolved = profile_name if profile is not None else ""
        status["profile"] = resolved
        digest = component_digest(self.domain, self.generation, dict(self.spec), resolved,
                                  (profile or {}).get("spec") if profile is not None else None)
        if not status.get("processingDigest"):
            status["processingDigest"] = digest
        elif status["processingDigest"] != digest:
            status["processingDigest"] = digest
            status.pop("processingSince", None)
            self.memory.backoff.reset()
            self.set_state(State.PROCESSING, Reason.RESTARTING,
                           "Restarting processing due to changes of the Application or its ClusterProfile")
            status["observedGeneration"] = self.generation
            return self.result(0.0, "progressing")

        try:
            reconciler = self.reconciler()
        except NotPermitted as refusal:
            status["observedGeneration"] = self.generation
            return self.fail(Reason.NOT_PERMITTED, str(refusal), error_type="other")

        try:
            encoded = self.transform(profile, resolved)
            policies = orchestration.read(self, self.policy_result or PolicyResult())
        except OamError as error:
            status["observedGeneration"] = self.generation
            self.set_state(State.ERROR, Reason.TRANSFORM_FAILED, str(error))
            self.memory.backoff.reset()
            return self.result(self.interval, "error", error_type="transform")
        except ObjectValidationError as error:
            status["observedGeneration"] = self.generation
            return self.fail(Reason.INVALID_OBJECTS, capitalised(str(error)), error_type="validation")
        held = orchestration.hold(self, policies)
        if held is not None:
            return held

        itself = self_reference(self.namespace, self.name, encoded.objects, f"{self.domain}/component")
        if itself is not None:
            status["observedGeneration"] = self.generation
            return self.fail(Reason.INVALID_OBJECTS, itself, error_type="validation")
        missing = missing_flux_apis(encoded.objects, _served_by(reconciler), self.domain)
        if missing is not None:
            status["observedGeneration"] = self.generation
            return self.fail(Reason.MISSING_API, missing, error_type="other")

        requested = self.annotations.get(f"{self.domain}/requested-at")
        try:
            inventory = read_inventory(status)
        except CompactInventoryError as error:
            return self.fail(Reason.ERROR, capitalised(str(error)), error_type="other")
        too_large = size_refusal(encoded.objects, inventory, self.namespace)
        if too_large is not None:  # before apply(): nothing may be created that the status cannot record
            status["observedGeneration"] = self.generation
            return self.fail(Reason.INVALID_OBJECTS, too_large, error_type="validation")
        if requested is not None and requested != status.get("lastHandledReconcileAt"):
            for item in inventory:
                if item.phase is Phase.READY:
                    item.last_applied_at = None
            self.memory.backoff.reset()
            status["lastHandledReconcileAt"] = requested

        if not status.get("revision") and status.get("lastAppliedAt"):
            status["revision"] = 1
        if status.get("processingDigest") != status.get("lastProcessingDigest"):
            status["revision"] = int(status.get("revision") or 0) + 1
            status["lastProcessingDigest"] = status["processingDigest"]

        before = dump_inventory(inventory)
        was_ready = status.get("state") == State.READY.value
        try:
            done = reconciler.apply(inventory, encoded.objects, self.namespace, self.owner_id, digest)
        except Exception as error:
            write_inventory(status, dump_inventory(inventory))
            self.summarise(inventory, encoded)
            return self.reconciler_error(error, deleting=False)
        after = dump_inventory(inventory)
        write_inventory(status, after)
        _, objects = self.summarise(inventory, encoded)
        report = reconciler.report
        operations = dict(report.operations)
        if done and (unhealthy := orchestration.health(self, policies, operations)) is not None:
            return unhealthy
        if done:
            applied_changed = status.get("appliedGeneration") != self.generation
            status["appliedGeneration"] = self.generation
            if not was_ready or applied_changed:
                status["lastAppliedAt"] = format_timestamp(self.now)
            status.pop("processingSince", None)
            self.memory.backoff.reset()
            self.memory.error_backoff.reset()
            self.set_state(State.READY, Reason.READY,
                           f"Applied revision {status.get('revision', 1)}: {objects} objects ready")
            return self.result(self.interval, "ready", operations=operations)
        if after != before:
            self.memory.backoff.reset()
        self.memory.error_backoff.reset()
        status.setdefault("processingSince", format_timestamp(self.now))
        bundle = encoded.bundle_of_wave(report.wave) if report.wave is not None else None
        bundle_ready, bundle_objects = self.bundle_counts(bundle.name if bundle else None)
        new_items = len(after) - len(before)
        message = apply_progress(report, self.namespace, bundle.name if bundle else None, bundle_ready,
                                 bundle_objects, max(new_items, 0))
        delay = self.memory.backoff.next("Processing")
        if self.timed_out():
            timed_out = f"Reconciliation timed out after {self.timeout_text}: {message}"
            self.set_state(State.ERROR, Reason.TIMEOUT, timed_out)
            return self.result(delay, "error", error_type="other", operations=operations)
        self.set_state(State.PROCESSING, Reason.PROCESSING, message)
        return self.result(delay, "progressing", operations=operations)

    def transform(self, profile: Mapping[str, Any] | None, profile_name: str = "") -> EncodedTree:
        started = time.monotonic()
        ok = False
        try:
            encoded, result = transform_application(self.body, self.env.pipeline, cluster_id=self.env.cluster_id,
                                                    domain=self.domain, profile=profile, profile_name=profile_name)
            self.policy_result = result.policy_result
            ok = True
        finally:
            if self.env.on_transform is not None:
                self.env.on_transform(time.monotonic() - started, ok)
        return encoded

    def summarise(self, inventory: list[InventoryItem], encoded: EncodedTree) -> tuple[int, int]:
        """Fill ``objects``, ``readyObjects`` and ``bundles``; return (ready, objects)."""
        status = self.status
        ready = sum(1 for item in inventory if _is_ready(item))
        status["objects"] = len(inventory)
        status["readyObjects"] = ready
        status["observedGeneration"] = self.generation
        bundles = []
        all_before_ready = True
        for plan in encoded.bundles:
            members = [i for i in inventory if plan.holds(i.group, i.kind, i.namespace, i.name, self.namespace)]
            bundle_ready = sum(1 for item in members if _is_ready(item))
            complete = bundle_ready == plan.objects
            state = "Ready" if complete else ("Applying" if all_before_ready else "Pending")
            all_before_ready = all_before_ready and complete
            bundles.append({
                "name": plan.name,
                "dependsOn": list(plan.depends_on),
                "objects": plan.objects,
                "ready": bundle_ready,
                "state": state,
                "waves": {"first": plan.first_wave, "last": plan.last_wave},
            })
        status["bundles"] = bundles
        return ready, len(inventory)

    def bundle_counts(self, bundle: str | None) -> tuple[int, int]:
        """(ready, objects) of ``bundle`` from the summary ``summarise`` just wrote."""
        for entry in self.status.get("bundles") or []:
            if entry["name"] == bundle:
                return int(entry["ready"]), int(entry["objects"])
        return 0, 0

    # -- the delete branch (§4.3) -----------------------------------------------------------------

    def delete_branch(self) -> PassResult:
        status = self.status
        if self.annotations.get(f"{self.domain}/abandon") == "true":
            write_inventory(status, [])
            return self.result(None, "deleted", finished=True,
                               events=[Event("Warning", "Abandoned", "Objects left in place; inventory dropped")])
        status.pop("processingDigest", None)
        status.pop("processingSince", None)
        try:
            inventory = read_inventory(status)
        except CompactInventoryError as error:
            return self.fail(Reason.ERROR, capitalised(str(error)), error_type="other")
        if not inventory:
            return self.result(None, "deleted", finished=True)
        blocked = orchestration.reverse_gate(self)
        if blocked is not None:
            return blocked
        client, terminating = self.deletion_client()
        reconciler = self.reconciler(client)
        before = dump_inventory(inventory)
        try:
            allowed, reason = reconciler.is_deletion_allowed(inventory, self.owner_id)
            if not allowed:
                self.set_state(State.DELETING, Reason.DELETION_BLOCKED, f"Deletion blocked: {reason}")
                return self.result(1.0 + self.memory.backoff.next("DeletionBlocked"), "pending")
            foreign = sorted(f for f in self.meta.get("finalizers") or [] if f != self.domain)
            if foreign:
                self.set_state(State.DELETING, Reason.DELETION_BLOCKED,
                               f"Deletion blocked due to existing foreign finalizers: {', '.join(foreign)}")
                return self.result(1.0 + self.memory.backoff.next("DeletionBlocked"), "pending")
            done = reconciler.delete(inventory, self.owner_id)
        except Exception as error:
            write_inventory(status, dump_inventory(inventory))
            return self.reconciler_error(error, deleting=True)
        after = dump_inventory(inventory)
        write_inventory(status, after)
        status["objects"] = len(inventory)
        status["readyObjects"] = sum(1 for item in inventory if _is_ready(item))
        operations = dict(reconciler.report.operations)
        if done:
            return self.result(None, "deleted", finished=True, operations=operations)
        if after != before:
            self.memory.backoff.reset()
        message = delete_progress(reconciler.report, self.namespace)
        if terminating:
            message = f"{NAMESPACE_TERMINATING.format(namespace=self.namespace)}: {message}"
        self.set_state(State.DELETING, Reason.DELETION_PROCESSING, message)
        return self.result(self.memory.backoff.next("DeletionProcessing"), "progressing", operations=operations)


def read_inventory(status: Mapping[str, Any]) -> list[InventoryItem]:
    """The persisted inventory: ``compactInventory``, else a c-o-r ``inventory`` (an upgrade, a tool)."""
    return load_inventory(read_status_inventory(status))


def write_inventory(status: dict[str, Any], dumped: list[dict[str, Any]]) -> None:
    """Persist ``dumped`` (c-o-r JSON) in the compact encoding; a c-o-r ``inventory`` is dropped."""
    status["compactInventory"] = encode_inventory(dumped)
    status.pop("inventory", None)


def transform_application(
    body: Mapping[str, Any],
    pipeline: Pipeline,
    *,
    cluster_id: str,
    domain: str,
    profile: Mapping[str, Any] | None,
    profile_name: str = "",
) -> tuple[EncodedTree, Any]:
    """The Application's objects and bundle plan exactly as a pass transforms them, and the
    transform's result (also used by ``oam-operator diff``, so a preview is what the operator would
    apply). Raises ``OamError``."""
    transformer = pipeline.transformer
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    document = {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": {"name": name, "namespace": namespace},
        "spec": {key: spec[key] for key in ("components", "policies") if key in spec},
    }
    app = application_from_object(
        document, component_types=transformer.component_types(), trait_types=transformer.trait_types()
    )
    capabilities = {}
    if profile is not None:
        try:
            evaluated = transformer.evaluate_profile(cluster_profile_from_object(profile))
        except OamError as error:
            # transform.md §11.1: a bad profile fails every Application that uses it.
            raise TransformError(f"ClusterProfile {go_quote(profile_name)}", error) from None
        capabilities = evaluated.capabilities
    transformer.validate_authored_properties(app)
    context = pipeline.context(
        cluster_id=cluster_id, namespace=namespace, domain=domain, capabilities=capabilities, component_label=True,
    )
    result = transformer.transform(app, context)
    return encode(result.cluster, domain), result


def apply_pass(body: Mapping[str, Any], memory: Memory, env: Environment) -> PassResult:
    """One run of the apply branch (§4.2) for an Application not being deleted."""
    return _Pass(body, memory, env).apply_branch()


def delete_pass(body: Mapping[str, Any], memory: Memory, env: Environment) -> PassResult:
    """One run of the delete branch (§4.3)."""
    return _Pass(body, memory, env).delete_branch()


_UNANNOUNCED = frozenset({Reason.FIRST_SEEN.value, Reason.PROCESSING.value, Reason.DELETION_PROCESSING.value})


def announced(status: Mapping[str, Any]) -> bool:
    """Whether the Ready condition of ``status`` is an outcome worth an Event on the Application.

    One Event per outcome, as Flux does: ``Ready``, an error, a retry, a restart, suspension,
    a blocked deletion. Not progress (``Processing``, ``DeletionProcessing``: the message changes
    with every wave and object, and the status shows it), and not ``FirstSeen`` (superseded
    within the same pass).
    """
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    return ready is not None and ready.get("reason") not in _UNANNOUNCED


def ready_event(status: Mapping[str, Any]) -> Event | None:
    """The Event that reports the Ready condition (§9), or ``None`` when there is none."""
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    if ready is None:
        return None
    kind = "Warning" if status.get("state") == State.ERROR.value else "Normal"
    return Event(kind, str(ready.get("reason", "")), str(ready.get("message", ""))[:1024])
