"""The ``rollout`` policy (docs/multicluster.md#rollout): its groups and its refusals word for word."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.oam.errors import TransformError
from oam_operator.operatorpolicies import read_operator_policies
from oam_operator.operatorpolicies.rollout import Rollout
from tests.unit.operatorpolicies.test_operator_policy_handlers import document, operator, policy, refusal, run

WHERE = policy("where", "topology", clusters=["a", "b"])


def test_a_rollout_is_read_back_with_its_topology() -> None:
    result = run(operator(), document(WHERE, policy("slowly", "rollout", maxConcurrent="25%", orderBy="ring")))
    read = read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert read.rollout == Rollout("slowly", percent=25, order_by="ring", on_failure="revert")
    assert [read.rollout.group_size(n) for n in (1, 4, 5, 8)] == [1, 1, 2, 2]
    assert Rollout("r", count=3).group_size(2) == 3


def test_a_rollout_without_a_topology_is_refused() -> None:
    result = run(operator(), document(policy("slowly", "rollout", maxConcurrent=1)))
    with pytest.raises(TransformError) as refused:
        read_operator_policies(result, "shop", {}, allow_cross_namespace=False)
    assert str(refused.value) == ('policy "slowly": a rollout policy needs a topology policy, which chooses the '
                                  "clusters it rolls out to")


@pytest.mark.parametrize(("properties", "message"), [
    ({"maxConcurrent": 0}, ': maxConcurrent must be at least 1, not 0'),
    ({"maxConcurrent": "150%"}, ': maxConcurrent "150%" must be a percentage from 1% to 100%'),
    ({"maxConcurrent": "0%"}, ': maxConcurrent "0%" must be a percentage from 1% to 100%'),
    ({"maxConcurrent": "half"}, ': maxConcurrent "half" is not a count such as 2 or a percentage such as 25%'),
    ({"maxConcurrent": True}, ": maxConcurrent must be a count such as 2 or a percentage such as 25%"),
    ({}, ": maxConcurrent must be a count such as 2 or a percentage such as 25%"),
    ({"maxConcurrent": 1, "onFailure": "retry"},
     ' (type "rollout"): properties.onFailure: unknown onFailure "retry" (valid: revert, halt)'),
])
def test_bad_rollouts_are_refused_with_the_exact_message(properties: dict[str, Any], message: str) -> None:
    assert refusal(WHERE, policy("slowly", "rollout", **properties)) == f'policy "slowly"{message}'


def test_two_rollout_policies_are_refused() -> None:
    assert refusal(WHERE, policy("slowly", "rollout", maxConcurrent=1), policy("again", "rollout", maxConcurrent=2)) == (
        'policy "again": only one rollout policy is allowed; policy "slowly" already sets it')
