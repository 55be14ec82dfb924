"""The operator's own policy types: ``app-dependency``, ``reconciliation``, ``health-checks``,
``topology``, ``rollout``, ``override`` and ``change-window``.

The transform refuses these types ("no handler for policy type …",
docs/transform.md#policy-types-the-transform-refuses): a
single-application build has nothing to order against and delivers nothing. The operator
orchestrates many Applications and delivers them itself, so it registers these handlers
through the transform's public ``Transformer.register_policy``; ``oam-operator build`` does so
only with ``--operator-policies`` (offline validation). Pure like the transform: this package
imports ``oam`` (and the stdlib-only ``durations``), never kopf or a cluster client.

The handlers validate and record; the operator acts (``controller/reconcile/orchestration.py``):
``read_operator_policies`` reads a transform result back, ``graph`` answers the questions of
the dependency gate; ``change_window_clock`` answers whether a change window is open.
"""

from __future__ import annotations

from oam_operator.oam.engine.transformer import Transformer

from .app_dependency import AppDependencyPolicy, AppRef
from .change_window import ChangeWindowPolicy, Window, Windows
from .change_window_clock import ChangeWindows, Closed, closed, combine, is_open, next_opening
from .graph import AppGraph, AppNode, DependencyState, cycle_message, node_from_object, waiting_message
from .health_checks import HealthChecksPolicy
from .override import Override, OverridePolicy
from .reconciliation import ReconciliationPolicy, ReconciliationSettings
from .resolve import CROSS_NAMESPACE_SETTING, OperatorPolicies, ResolvedCheck, read_operator_policies
from .rollback import Rollback, RollbackPolicy
from .rollout import Rollout, RolloutPolicy
from .topology import Topology, TopologyPolicy

__all__ = [
    "CROSS_NAMESPACE_SETTING",
    "OPERATOR_POLICY_TYPES",
    "AppDependencyPolicy",
    "AppGraph",
    "AppNode",
    "AppRef",
    "ChangeWindowPolicy",
    "ChangeWindows",
    "Closed",
    "DependencyState",
    "HealthChecksPolicy",
    "OperatorPolicies",
    "Override",
    "OverridePolicy",
    "ReconciliationPolicy",
    "ReconciliationSettings",
    "ResolvedCheck",
    "Rollback",
    "RollbackPolicy",
    "Rollout",
    "RolloutPolicy",
    "Topology",
    "TopologyPolicy",
    "Window",
    "Windows",
    "closed",
    "combine",
    "cycle_message",
    "is_open",
    "next_opening",
    "node_from_object",
    "read_operator_policies",
    "register_operator_policies",
    "waiting_message",
]

OPERATOR_POLICY_TYPES = (
    "app-dependency", "change-window", "health-checks", "override", "reconciliation", "rollback", "rollout",
    "topology",
)


def register_operator_policies(transformer: Transformer) -> Transformer:
    """Register the operator's handlers on ``transformer`` (returned, for chaining)."""
    transformer.register_policy("app-dependency", AppDependencyPolicy())
    transformer.register_policy("health-checks", HealthChecksPolicy())
    transformer.register_policy("reconciliation", ReconciliationPolicy())
    transformer.register_policy("override", OverridePolicy())
    transformer.register_policy("rollback", RollbackPolicy())
    transformer.register_policy("rollout", RolloutPolicy())
    transformer.register_policy("topology", TopologyPolicy())
    transformer.register_policy("change-window", ChangeWindowPolicy())
    return transformer
