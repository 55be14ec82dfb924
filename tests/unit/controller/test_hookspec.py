"""Hooks as declared (docs/operator.md#lifecycle-hooks): which objects are hooks, and the exact
refusals of a bad annotation, which name the allowed values."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile.encode import BundlePlan, EncodedTree
from oam_operator.controller.reconcile.hookspec import (
    HookDeletePolicy,
    HookPhase,
    HookRefused,
    hook_of,
    split_hooks,
)
from tests.unit.unitkit import DOMAIN


def job(**annotations: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "annotations": {f"{DOMAIN}/{k.replace('_', '-')}": v
                                                            for k, v in annotations.items()}}}


def test_an_object_without_the_hook_annotation_is_no_hook() -> None:
    assert hook_of(job(), DOMAIN) is None


def test_phases_policy_and_timeout_are_read() -> None:
    hook = hook_of(job(hook="PreDelete, PostDelete", hook_delete_policy="OnSuccess", hook_timeout="90s"), DOMAIN)
    assert hook is not None
    assert hook.phases == (HookPhase.PRE_DELETE, HookPhase.POST_DELETE)
    assert (hook.delete_policy, hook.timeout) == (HookDeletePolicy.ON_SUCCESS, "90s")


def test_the_defaults_are_before_next_run_and_the_applications_timeout() -> None:
    hook = hook_of(job(hook="PreApply"), DOMAIN)
    assert hook is not None and (hook.delete_policy, hook.timeout) == (HookDeletePolicy.BEFORE_NEXT_RUN, None)


@pytest.mark.parametrize(("annotations", "message"), [
    ({"hook": "PreInstall"}, 'Job migrate: annotation oam-operator.dev/hook: "PreInstall" is not a hook phase '
                             "(allowed: PreApply, PostReady, OnFailure, PreDelete, PostDelete)"),
    ({"hook": "PreApply", "hook_timeout": "5 minutes"},
     'Job migrate: annotation oam-operator.dev/hook-timeout: "5 minutes" is not a duration (a positive Go '
     "duration such as 90s, 5m or 1h)"),
    ({"hook": "PreApply", "hook_timeout": "0s"},
     'Job migrate: annotation oam-operator.dev/hook-timeout: "0s" is not a duration (a positive Go '
     "duration such as 90s, 5m or 1h)"),
    ({"hook": "PreApply", "hook_delete_policy": "Always"},
     'Job migrate: annotation oam-operator.dev/hook-delete-policy: "Always" is not a delete policy '
     "(allowed: BeforeNextRun, OnSuccess, Never)"),
    ({"hook_timeout": "1m"}, "Job migrate: annotation oam-operator.dev/hook-timeout is set, but "
                             "oam-operator.dev/hook is not"),
])
def test_a_bad_annotation_is_refused_naming_the_allowed_values(annotations: dict[str, str], message: str) -> None:
    with pytest.raises(HookRefused) as refused:
        hook_of(job(**annotations), DOMAIN)
    assert str(refused.value) == message


def test_hooks_leave_the_waved_objects_and_their_bundle() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    hook = job(hook="PreApply")
    plan = BundlePlan("web", (), 0, 0, frozenset({("", "ConfigMap", "", "c"), ("batch", "Job", "", "migrate")}))
    kept, hooks = split_hooks(EncodedTree([config, hook], [plan]), DOMAIN)
    assert kept.objects == [config]
    assert [b.objects for b in kept.bundles] == [1]
    assert [h.name for h in hooks] == ["migrate"]
