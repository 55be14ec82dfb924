"""The one ordered list of checks an Application passes before anything is applied (docs/operator.md#the-checks).

The apply pass, the admission webhook and ``oam-operator diff`` run this list, in this order,
so a refusal carries the same reason and words wherever it is met. What differs between them
is declared on each check, not written out in copies:

- ``needs_cluster``: the verdict depends on what the cluster holds now (a ClusterProfile,
  served APIs). Admission admits what only the cluster's state refuses — ``kubectl apply -f
  dir/`` may create the Application before its profile — and leaves it to the status.
- ``admission`` / ``preview``: what admission and ``diff`` do with a check's refusal —
  ``REFUSE`` it, ``ADMIT`` (stop checking and let it through) or ``SKIP`` the check.
- Admission's transform reads no network (``OperatorTransform.without_network``); the checks
  after the transform leave its placeholders out (``Subject.objects``).

A check is a function of the ``Subject`` (the Application and what earlier checks found:
the profile, the transform, the operator policies) returning its ``Refusal`` or ``None``. The
apply pass's own steps are rows of the same table (``Step``): they decide how to go on, not
whether the Application is acceptable, and only the operator runs them (their admission and
``diff`` columns say ``SKIP``). ``ORDER`` is the table; a pass reads it top to bottom.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from oam_operator.api.conditions import Reason, State
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.oam.engine.transformer import TransformResult
from oam_operator.oam.errors import OamError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.remote.noticed import noticing
from oam_operator.operatorpolicies import ChangeWindows, OperatorPolicies, read_operator_policies
from oam_operator.operatorpolicies.override import TYPE as OVERRIDE
from oam_operator.operatorpolicies.override import Override, applied
from oam_operator.operatorpolicies.override import declared as declared_overrides
from oam_operator.operatorpolicies.topology import declared
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ObjectValidationError
from oam_operator.reconciler.inventory import InventoryItem

from .changewindows import ProfileWindowsRefused, change_windows
from .composition import OperatorTransform, is_placeholder
from .depth import depth_refusal
from .encode import EncodedTree
from .fluxapis import missing_flux_apis
from .hookspec import Hook, HookRefused, split_hooks
from .limits import size_refusal
from .progress import capitalised
from .seams import PassResult
from .selfref import self_reference
from .tenancy import NotPermitted
from .verdicts import digest_of

__all__ = ["CHECKS", "ORDER", "Check", "Handling", "PassSteps", "Refusal", "Requeue", "Step", "Subject",
           "first_refusal", "on_applied_spec", "served_by"]


class Requeue(StrEnum):
    """When the apply pass tries a refused Application again."""

    NONE = "none"  # not until it changes: it is held on purpose (suspended)
    INTERVAL = "interval"  # at its interval: only a change of the document can fix it
    BACKOFF = "backoff"  # on the error backoff: a permission, another object or an owner may fix it


class Handling(StrEnum):
    """What admission or ``diff`` does with a check's refusal."""

    REFUSE = "refuse"
    ADMIT = "admit"  # stop checking; the Application is let through (the status says the rest)
    SKIP = "skip"  # the check is not run


@dataclass(frozen=True)
class Refusal:
    """A check's verdict against the Application: the status it gives and when to try again."""

    check: str
    state: State
    reason: Reason
    message: str
    error_type: str | None
    requeue: Requeue


class Tenancy(Protocol):
    def user_for(self, namespace: str, service_account: str) -> str | None: ...


@dataclass
class Subject:
    """One Application as the checks see it, and what they find out on the way."""

    body: Mapping[str, Any]
    settings: Settings
    transform: OperatorTransform
    profiles: Callable[[str], Mapping[str, Any] | None]
    tenancy: Tenancy
    cluster_id: str
    #: Whether the cluster serves ``(apiVersion, kind)``; ``None``: not known (no cluster at hand).
    served: Callable[[str, str], bool] | None = None
    #: The persisted inventory, set before ``size`` (the apply pass reads it in between).
    inventory: Sequence[InventoryItem] = ()
    on_transform: Callable[[float, bool], None] | None = None
    # -- found by the checks
    profile_name: str = ""  # the profile asked for (spec, else the operator's default)
    profile_checked: bool = False  # whether the ``profile`` check ran (``profile_name`` is known)
    profile: Mapping[str, Any] | None = None
    encoded: EncodedTree | None = None
    result: TransformResult | None = None
    policies: OperatorPolicies = field(default_factory=OperatorPolicies)
    windows: ChangeWindows | None = None  # the profile's and the policy's change windows (changewindows.py)
    hooks: list[Hook] = field(default_factory=list)  # the lifecycle hooks, taken out of ``encoded`` (hookspec.py)
    reads_outside: bool = False  # the transform read a URL source or a chart (quiet.py)

    @property
    def meta(self) -> Mapping[str, Any]:
        return self.body.get("metadata") or {}

    @property
    def namespace(self) -> str:
        return str(self.meta.get("namespace") or "")

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or "")

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.body.get("spec") or {}

    @property
    def resolved_profile(self) -> str:
        """The profile's name as the status records it: ``""`` when none applies."""
        return self.profile_name if self.profile is not None else ""

    def objects(self) -> list[Mapping[str, Any]]:
        """The generated objects, without a network-free transform's placeholders."""
        assert self.encoded is not None, "the transform check has not run"
        return [obj for obj in self.encoded.objects if not is_placeholder(obj)]


def _refusal(check: str, reason: Reason, message: str, error_type: str | None,
             requeue: Requeue = Requeue.BACKOFF, state: State = State.ERROR) -> Refusal:
    return Refusal(check, state, reason, message, error_type, requeue)


def _suspended(subject: Subject) -> Refusal | None:
    if not subject.spec.get("suspend"):
        return None
    return _refusal("suspended", Reason.SUSPENDED, "Reconciliation is suspended", None, Requeue.NONE, State.PENDING)


def _depth(subject: Subject) -> Refusal | None:
    too_deep = depth_refusal(subject.spec)  # before anything walks the spec recursively (depth.py)
    if too_deep is None:
        return None
    return _refusal("depth", Reason.TRANSFORM_FAILED, too_deep, "transform", Requeue.INTERVAL)


def _profile(subject: Subject) -> Refusal | None:
    if declared(subject.spec) is not None:  # its cluster Applications name the profiles (fleet.py)
        subject.profile_name, subject.profile_checked, subject.profile = "", True, None
        return None
    asked = subject.spec.get("profile")
    subject.profile_name = str(asked or subject.settings.default_profile or "")
    subject.profile_checked = True
    subject.profile = subject.profiles(subject.profile_name) if subject.profile_name else None
    if asked and subject.profile is None:
        return _refusal("profile", Reason.PROFILE_NOT_FOUND, f"ClusterProfile {subject.profile_name} not found",
                        "other")
    return None


def _tenancy(subject: Subject) -> Refusal | None:
    try:
        subject.tenancy.user_for(subject.namespace, str(subject.spec.get("serviceAccountName") or ""))
    except NotPermitted as refused:
        return _refusal("tenancy", Reason.NOT_PERMITTED, str(refused), "other")
    return None


def _transform(subject: Subject) -> Refusal | None:
    started, ok = time.monotonic(), False
    try:
        try:
            with noticing() as reads:
                subject.encoded, subject.result = subject.transform.transform(
                    subject.body, cluster_id=subject.cluster_id, domain=subject.settings.domain,
                    profile=subject.profile, profile_name=subject.resolved_profile)
            subject.reads_outside = reads.outside
            ok = True
        finally:
            if subject.on_transform is not None:
                subject.on_transform(time.monotonic() - started, ok)
        subject.policies = read_operator_policies(
            subject.result.policy_result, subject.namespace, subject.spec,
            allow_cross_namespace=subject.settings.allow_cross_namespace_dependencies)
        subject.windows = change_windows(subject.profile_name, subject.profile, subject.policies.change_window)
    except ProfileWindowsRefused as refused:  # as a profile the transform cannot read: every user refused
        return _refusal("transform", Reason.TRANSFORM_FAILED, str(refused), "transform", Requeue.INTERVAL)
    except OamError as error:
        return _refusal("transform", Reason.TRANSFORM_FAILED, str(error), "transform", Requeue.INTERVAL)
    except ObjectValidationError as error:
        return _refusal("transform", Reason.INVALID_OBJECTS, capitalised(str(error)), "validation")
    return None


def _overrides(subject: Subject) -> Refusal | None:
    """Each override policy's components, merged, against their schemas: the transform of the
    Application with that override alone (docs/multicluster.md#overrides), its words after the
    policy's name. The operator keeps the verdict while its input is the same (verdicts.py)."""
    found = declared_overrides(subject.spec)
    if not found:
        return None
    memo, application = subject.transform.override_verdicts, f"{subject.namespace}/{subject.name}"
    digest = digest_of([subject.namespace, subject.name, subject.cluster_id, subject.settings.domain,
                        subject.spec.get("components"), subject.spec.get("policies")])
    if memo is not None:
        known, verdict = memo.lookup(application, digest)
        if known:
            kept: Refusal | None = verdict
            return kept
    refusal = _override_refusal(subject, found)
    if memo is not None:
        memo.keep(application, digest, refusal)
    return refusal


def _override_refusal(subject: Subject, overrides: list[Override]) -> Refusal | None:
    fleet_types = (OVERRIDE, "topology", "rollout")
    for found in overrides:
        spec = dict(subject.spec)
        spec["components"] = applied(spec.get("components") or [], [found])
        spec["policies"] = [p for p in spec.get("policies") or () if (p or {}).get("type") not in fleet_types]
        try:
            subject.transform.transform({**subject.body, "spec": spec}, cluster_id=subject.cluster_id,
                                        domain=subject.settings.domain, profile=None)
        except OamError as error:
            return _refusal("overrides", Reason.TRANSFORM_FAILED, f"policy {go_quote(found.policy)}: {error}",
                            "transform", Requeue.INTERVAL)
        except ObjectValidationError as error:
            return _refusal("overrides", Reason.INVALID_OBJECTS,
                            f"Policy {go_quote(found.policy)}: {error}", "validation")
    return None


def _self_reference(subject: Subject) -> Refusal | None:
    itself = self_reference(subject.namespace, subject.name, subject.objects(), f"{subject.settings.domain}/component")
    return None if itself is None else _refusal("self-reference", Reason.INVALID_OBJECTS, itself, "validation")


def _hooks(subject: Subject) -> Refusal | None:
    """The lifecycle hooks' annotations (docs/operator.md#lifecycle-hooks); the hooks leave the waved objects."""
    assert subject.encoded is not None, "the transform check has not run"
    try:
        subject.encoded, subject.hooks = split_hooks(subject.encoded, subject.settings.domain)
    except HookRefused as refused:
        return _refusal("hooks", Reason.INVALID_OBJECTS, f"Hook {refused}", "validation")
    if not subject.settings.allow_cross_namespace_objects:
        for hook in subject.hooks:
            if hook.namespace and hook.namespace != subject.namespace:
                return _refusal("hooks", Reason.INVALID_OBJECTS,
                                f"Hook {hook.kind} {hook.name}: namespace {hook.namespace} is not the Application's "
                                f"({subject.namespace}); the operator runs without --allow-cross-namespace-objects",
                                "validation")
    return None


def _flux_apis(subject: Subject) -> Refusal | None:
    if subject.served is None:
        return None
    missing = missing_flux_apis(subject.objects(), subject.served, subject.settings.domain)
    return None if missing is None else _refusal("flux-apis", Reason.MISSING_API, missing, "other")


def _size(subject: Subject) -> Refusal | None:
    # Before apply(): nothing may be created that the status cannot record.
    assert subject.encoded is not None, "the transform check has not run"
    too_large = size_refusal(subject.objects(), list(subject.inventory), subject.namespace, subject.body,
                             subject.encoded.bundles)
    return None if too_large is None else _refusal("size", Reason.INVALID_OBJECTS, too_large, "validation")


@dataclass(frozen=True)
class Check:
    """One check of the list: what it is called, what it refuses with, and how each user treats it."""

    name: str
    run: Callable[[Subject], Refusal | None]
    reasons: tuple[Reason, ...]
    needs_cluster: bool = False
    admission: Handling = Handling.REFUSE
    preview: Handling = Handling.REFUSE


class PassSteps(Protocol):
    """The apply pass's own steps (passes.py): each returns the pass's early result, or ``None``
    to go on with the next row."""

    def restore(self, subject: Subject) -> PassResult | None: ...
    def restart_on_change(self, subject: Subject) -> PassResult | None: ...
    def deliver(self, subject: Subject) -> PassResult | None: ...
    def prepare_reconciler(self, subject: Subject) -> PassResult | None: ...
    def gate(self, subject: Subject) -> PassResult | None: ...
    def read_inventory(self, subject: Subject) -> PassResult | None: ...
    def hold_for_window(self, subject: Subject) -> PassResult | None: ...
    def cluster_applications(self, subject: Subject) -> PassResult | None: ...


@dataclass(frozen=True)
class Step:
    """One of the apply pass's own steps, a row between the checks: only the operator runs it."""

    name: str
    run: Callable[[PassSteps, Subject], PassResult | None]
    admission: Handling = Handling.SKIP
    preview: Handling = Handling.SKIP


ORDER: tuple[Check | Step, ...] = (
    # Suspended: admitted (the operator does not transform it either); diff previews it anyway.
    Check("suspended", _suspended, (Reason.SUSPENDED,), admission=Handling.ADMIT, preview=Handling.SKIP),
    # A rolled-back spec: the restored revision's spec is applied instead (docs/operator.md#automatic-rollback).
    Step("rollback", lambda steps, subject: steps.restore(subject)),
    Check("depth", _depth, (Reason.TRANSFORM_FAILED,)),
    Check("profile", _profile, (Reason.PROFILE_NOT_FOUND,), needs_cluster=True, admission=Handling.ADMIT),
    Step("restart-on-change", lambda steps, subject: steps.restart_on_change(subject)),  # a new digest restarts
    Step("deliver", lambda steps, subject: steps.deliver(subject)),  # the cluster the objects go to
    Check("tenancy", _tenancy, (Reason.NOT_PERMITTED,)),
    Step("reconciler", lambda steps, subject: steps.prepare_reconciler(subject)),  # with the Application's identity
    Check("transform", _transform, (Reason.TRANSFORM_FAILED, Reason.INVALID_OBJECTS)),
    Check("overrides", _overrides, (Reason.TRANSFORM_FAILED, Reason.INVALID_OBJECTS)),
    Step("gate", lambda steps, subject: steps.gate(subject)),  # the operator policies' timing and dependencies
    Check("self-reference", _self_reference, (Reason.INVALID_OBJECTS,)),
    Check("hooks", _hooks, (Reason.INVALID_OBJECTS,)),  # the lifecycle hooks leave the waved objects
    Check("flux-apis", _flux_apis, (Reason.MISSING_API,), needs_cluster=True, admission=Handling.SKIP),
    Step("inventory", lambda steps, subject: steps.read_inventory(subject)),  # the persisted inventory
    Step("change-window", lambda steps, subject: steps.hold_for_window(subject)),  # a new revision waits while closed
    Step("fleet", lambda steps, subject: steps.cluster_applications(subject)),  # a topology's, instead
    Check("size", _size, (Reason.INVALID_OBJECTS,)),
)
"""The checks and the pass's steps in the order every user runs them."""

CHECKS: tuple[Check, ...] = tuple(row for row in ORDER if isinstance(row, Check))
"""The checks alone, in their order: what admission and ``diff`` run."""


_OF_THE_SPEC: tuple[Check, ...] = tuple(
    row for row in ORDER[[r.name for r in ORDER].index("transform"):[r.name for r in ORDER].index("inventory")]
    if isinstance(row, Check))
"""The checks that read the spec's objects, from ``transform`` to ``flux-apis``."""


def on_applied_spec(subject: Subject, spec: Mapping[str, Any]) -> Refusal | None:
    """Point ``subject`` at the spec of the revision already applied (its recorded spec) while a
    new revision is held by closed change windows, so its drift is corrected or reported
    (docs/operator.md#change-windows). The checks of the spec's objects run again on it; the
    windows stay the held revision's (they decide). On a refusal ``subject`` is left as it was."""
    trial = dataclasses.replace(subject, body={**subject.body, "spec": dict(spec)}, hooks=[])
    for check in _OF_THE_SPEC:
        refusal = check.run(trial)
        if refusal is not None:
            return refusal
    subject.body, subject.encoded, subject.result = trial.body, trial.encoded, trial.result
    subject.policies, subject.hooks = trial.policies, trial.hooks
    return None


def served_by(client: ClusterClient) -> Callable[[str, str], bool]:
    """``served(apiVersion, kind)`` from the client's discovery; a failing discovery is no verdict (True)."""

    def served(api_version: str, kind: str) -> bool:
        try:
            return client.resource_for(api_version, kind) is not None
        except Exception:
            return True

    return served


def first_refusal(subject: Subject, handling: Callable[[Check], Handling]) -> Refusal | None:
    """Run the list as admission or ``diff`` does (``handling`` picks their column): the first
    refusal it refuses, or ``None`` when the Application is admitted."""
    for check in CHECKS:
        rule = handling(check)
        if rule is Handling.SKIP:
            continue
        refusal = check.run(subject)
        if refusal is None:
            continue
        if rule is Handling.ADMIT:
            return None
        return refusal
    return None
