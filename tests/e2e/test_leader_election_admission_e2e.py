"""A standby serves the admission webhook (docs/operator.md#leader-election, docs/admission.md).

Two instances in the test's namespace share one Lease: the first leads without the webhook, the
second stands by with it. The API server calls the standby, which refuses an invalid
Application with the transform's message — admission holds no state and needs no Lease — while
the leader alone reconciles a valid one.
"""

from __future__ import annotations

from typing import Any

from e2ekit import Kube
from kubernetes import client
from test_admission_e2e import TYPO, TYPO_MESSAGE, Chart, _app, _config_map, _refused_by_webhook, chart

from tools.devcluster.pytest_plugin import default_wait, wait_until

__all__ = ["chart"]  # the fixture, from the admission tests


def _holder(kube: Kube) -> str:
    lease = client.CoordinationV1Api(kube.api).read_namespaced_lease("oam-operator", kube.namespace)
    return str(lease.spec.holder_identity or "")


def test_the_standby_serves_the_webhook(start_operator: Any, kube: Kube, chart: Chart) -> None:
    leader = start_operator(kube.namespace)
    wait_until(lambda: _holder(kube) != "", default_wait(kube.cluster), "the first instance to lead")
    first = _holder(kube)
    standby = start_operator(kube.namespace, "--admission-address=127.0.0.1", *chart.flags)
    client.AdmissionregistrationV1Api(kube.api).create_validating_webhook_configuration(chart.configuration)
    message = wait_until(lambda: _refused_by_webhook(kube, _app("probe", kube.namespace, TYPO)),
                         default_wait(kube.cluster), "the standby's webhook to answer")
    assert message.endswith(TYPO_MESSAGE)
    assert _holder(kube) == first  # still the first instance's Lease: the webhook needs none
    assert any(line.get("msg") == "admission refused" for line in standby.logs())
    kube.apply_app("good", {"components": [_config_map("settings")]})
    kube.wait_ready("good")
    passes = {name: [line for line in op.logs() if line.get("msg") == "pass finished"]
              for name, op in (("leader", leader), ("standby", standby))}
    assert passes["leader"] and passes["standby"] == []
    assert standby.metrics()[("oam_operator_leader", frozenset({("shard", "")}))] == 0.0
