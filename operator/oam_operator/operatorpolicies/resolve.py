"""Reading the operator's policies back from a transform result, with the operator-side refusals.

Two rules need what a policy handler never sees, so they are checked here, after the
transform, and refused as ``TransformError`` (the operator reports ``Error``/``TransformFailed``
with the verbatim message, like every other refusal of the document):

- a reference into another namespace (``app-dependency`` entry or ``health-checks`` object)
  without the operator setting ``--allow-cross-namespace-dependencies``:
  ``policy "<p>": application "<ns>/<name>" is in another namespace; cross-namespace references
  need the operator setting --allow-cross-namespace-dependencies`` (one line)
  (``health check <Kind> "<ns>/<name>"`` for a health check);
- a ``reconciliation`` value that the spec sets too:
  ``policy "<p>": interval is also set by spec.interval; set it in one place only``
  (likewise ``timeout``/``spec.timeout``). ``spec.suspend: true`` suspends before the transform
  runs, so ``suspend`` never conflicts: the policy's value applies while ``spec.suspend`` is false.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oam_operator.oam.errors import TransformError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.health.rules import HealthRule
from oam_operator.oam.policies.result import PolicyResult

from . import app_dependency, change_window, health_checks, override, reconciliation, rollback, rollout, topology
from .app_dependency import AppRef
from .change_window import Windows
from .health_checks import HealthCheck
from .reconciliation import ReconciliationSettings
from .rollback import Rollback
from .rollout import Rollout
from .topology import Topology

CROSS_NAMESPACE_SETTING = "--allow-cross-namespace-dependencies"


@dataclass(frozen=True)
class ResolvedCheck:
    """A health check with its namespace resolved (``namespace`` may still be ignored for a
    cluster-scoped kind)."""

    api_version: str
    kind: str
    namespace: str
    name: str

    def display(self, relative_to: str) -> str:
        where = self.name if self.namespace == relative_to else f"{self.namespace}/{self.name}"
        return f"{self.kind} {where}"


@dataclass(frozen=True)
class OperatorPolicies:
    """What the operator acts on, read from one transform result."""

    depends_on: tuple[AppRef, ...] = ()
    reconciliation: ReconciliationSettings | None = None
    health_checks: tuple[ResolvedCheck, ...] = field(default=())
    topology: Topology | None = None  # the clusters it goes to (topology.py); ``None``: its profile's
    rollout: Rollout | None = None  # how those clusters take a new revision (rollout.py)
    change_window: Windows | None = None  # when a new revision may land (change_window.py)
    rollback: Rollback | None = None  # whether a failed revision returns to the last Ready one (rollback.py)
    health_rules: tuple[HealthRule, ...] = ()  # health by expression of its own objects (docs/health.md)

    @property
    def suspend(self) -> bool:
        return bool(self.reconciliation and self.reconciliation.suspend)


def _cross_namespace(policy: str, what: str) -> TransformError:
    return TransformError(
        f"policy {go_quote(policy)}: {what} is in another namespace; cross-namespace references need the operator "
        f"setting {CROSS_NAMESPACE_SETTING}"
    )


def _check_spec_conflicts(settings: ReconciliationSettings, spec: Mapping[str, Any]) -> None:
    for key, value in (("interval", settings.interval), ("timeout", settings.timeout)):
        if value is not None and spec.get(key) is not None:
            raise TransformError(
                f"policy {go_quote(settings.policy)}: {key} is also set by spec.{key}; set it in one place only"
            )


def read_operator_policies(
    result: PolicyResult, namespace: str, spec: Mapping[str, Any], *, allow_cross_namespace: bool
) -> OperatorPolicies:
    """The resolved policies of an Application in ``namespace``; raises ``TransformError``."""
    refs: list[AppRef] = []
    for entry in app_dependency.recorded(result):
        ref = entry.resolve(namespace)
        if ref.namespace != namespace and not allow_cross_namespace:
            raise _cross_namespace(entry.policy, f"application {go_quote(str(ref))}")
        if ref not in refs:
            refs.append(ref)
    checks: list[ResolvedCheck] = []
    for check in health_checks.recorded(result):
        resolved = _resolve_check(check, namespace)
        if resolved.namespace != namespace and not allow_cross_namespace:
            where = f"{resolved.namespace}/{resolved.name}"
            raise _cross_namespace(check.policy, f"health check {check.kind} {go_quote(where)}")
        if resolved not in checks:
            checks.append(resolved)
    settings = reconciliation.recorded(result)
    if settings is not None:
        _check_spec_conflicts(settings, spec)
    clusters = topology.recorded(result)
    if clusters is not None and spec.get("profile"):
        raise TransformError(f"policy {go_quote(clusters.policy)}: a topology policy chooses the clusters, and "
                             "spec.profile is set too; set one of them")
    overrides = result.extensions.get(override.EXTENSION_KEY) or []
    if clusters is None and overrides:
        raise TransformError(f"policy {go_quote(overrides[0])}: an override policy needs a topology policy, which "
                             "chooses the clusters it overrides on")
    groups = rollout.recorded(result)
    if groups is not None and clusters is None:
        raise TransformError(f"policy {go_quote(groups.policy)}: a rollout policy needs a topology policy, which "
                             "chooses the clusters it rolls out to")
    restores = rollback.recorded(result)
    refused = rollback.history_refusal(restores, spec) if restores is not None else None
    if refused is not None:
        raise TransformError(refused)
    if restores is not None and clusters is not None:
        raise TransformError(f"policy {go_quote(restores.policy)}: a rollback policy does not apply with a topology "
                             "policy; a rollout policy's onFailure: revert returns the clusters to their last Ready "
                             "revision")
    return OperatorPolicies(tuple(refs), settings, tuple(checks), clusters, groups, change_window.recorded(result),
                            restores, tuple(health_checks.recorded_expressions(result)))


def _resolve_check(check: HealthCheck, namespace: str) -> ResolvedCheck:
    return ResolvedCheck(check.api_version, check.kind, check.namespace or namespace, check.name)
