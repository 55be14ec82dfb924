"""Lifecycle hooks as declared: which generated objects are hooks, of which phases, with which
delete policy and timeout (docs/operator.md#lifecycle-hooks).

A hook is any object carrying ``<domain>/hook``; the annotations are read once, here, so the
admission webhook, ``diff`` and the pass refuse a bad value with the same words. Hooks are taken
out of the waved objects: the reconciler never applies, prunes or corrects them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from oam_operator.common.durations import parse_go_duration

from .encode import EncodedTree, identity_of


class HookPhase(StrEnum):
    PRE_APPLY = "PreApply"
    POST_READY = "PostReady"
    ON_FAILURE = "OnFailure"
    PRE_DELETE = "PreDelete"
    POST_DELETE = "PostDelete"


class HookDeletePolicy(StrEnum):
    BEFORE_NEXT_RUN = "BeforeNextRun"  # the default: the earlier run's object is deleted before the next one
    ON_SUCCESS = "OnSuccess"
    NEVER = "Never"


@dataclass(frozen=True)
class Hook:
    """One hook object and how it runs; ``timeout`` is a Go duration (``None``: the Application's)."""

    phases: tuple[HookPhase, ...]
    manifest: Mapping[str, Any]
    delete_policy: HookDeletePolicy
    timeout: str | None

    @property
    def api_version(self) -> str:
        return str(self.manifest.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind") or "")

    @property
    def name(self) -> str:
        return str((self.manifest.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str:
        return str((self.manifest.get("metadata") or {}).get("namespace") or "")


class HookRefused(ValueError):
    """A hook annotation with a value that is not allowed; the message names the allowed values."""


def _allowed(values: type[StrEnum]) -> str:
    return ", ".join(v.value for v in values)


def hook_of(obj: Mapping[str, Any], domain: str) -> Hook | None:
    """The hook ``obj`` declares, ``None`` when it is none; raises ``HookRefused``."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    where = f"{obj.get('kind', '')} {(obj.get('metadata') or {}).get('name', '')}"
    phase_text = annotations.get(f"{domain}/hook")
    policy_text = annotations.get(f"{domain}/hook-delete-policy")
    timeout = annotations.get(f"{domain}/hook-timeout")
    if phase_text is None:
        for key, text in ((f"{domain}/hook-delete-policy", policy_text), (f"{domain}/hook-timeout", timeout)):
            if text is not None:
                raise HookRefused(f"{where}: annotation {key} is set, but {domain}/hook is not")
        return None
    phases: list[HookPhase] = []
    for part in str(phase_text).split(","):
        try:
            phase = HookPhase(part.strip())
        except ValueError:
            raise HookRefused(f'{where}: annotation {domain}/hook: "{part.strip()}" is not a hook phase '
                              f"(allowed: {_allowed(HookPhase)})") from None
        if phase not in phases:
            phases.append(phase)
    try:
        policy = HookDeletePolicy(policy_text) if policy_text is not None else HookDeletePolicy.BEFORE_NEXT_RUN
    except ValueError:
        raise HookRefused(f'{where}: annotation {domain}/hook-delete-policy: "{policy_text}" is not a delete '
                          f"policy (allowed: {_allowed(HookDeletePolicy)})") from None
    if timeout is not None:
        try:
            if parse_go_duration(str(timeout)).total_seconds() <= 0:
                raise ValueError(timeout)
        except ValueError:
            raise HookRefused(f'{where}: annotation {domain}/hook-timeout: "{timeout}" is not a duration '
                              "(a positive Go duration such as 90s, 5m or 1h)") from None
    return Hook(tuple(phases), obj, policy, None if timeout is None else str(timeout))


def split_hooks(encoded: EncodedTree, domain: str) -> tuple[EncodedTree, list[Hook]]:
    """The waved objects without the hooks, and the hooks in their generated order; raises
    ``HookRefused`` on the first bad annotation."""
    hooks: list[Hook] = []
    kept: list[dict[str, Any]] = []
    for obj in encoded.objects:
        hook = hook_of(obj, domain)
        if hook is None:
            kept.append(obj)
        else:
            hooks.append(hook)
    if not hooks:
        return encoded, []
    taken = {identity_of(h.manifest) for h in hooks}
    bundles = [dataclasses.replace(plan, object_keys=plan.object_keys - taken) for plan in encoded.bundles]
    return EncodedTree(kept, bundles), hooks


def of_phase(hooks: Sequence[Hook], phase: HookPhase) -> list[Hook]:
    return [hook for hook in hooks if phase in hook.phases]
