"""The ``cronjob`` component (docs/transform.md#workload-components): a CronJob running the main container on a
schedule.

Objects, in order: ``CronJob C``, ``ServiceAccount C``, the claims of ``pvc`` volumes. The
``app`` label is on the CronJob, its job template and the pod template, so every Job and pod
it creates can be selected. Only the standard five-field cron syntax is accepted (no
``@daily`` forms), so the schedule means the same to every reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oam_operator.oam.catalog.workloads.schemas import common_schema
from oam_operator.oam.catalog.workloads.values import as_int, opt_str
from oam_operator.oam.catalog.workloads.workload import Workload, WorkloadOptions, parse_workload, require_image
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema as P
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

RESTART_POLICIES = ("Never", "OnFailure")
DEFAULT_RESTART_POLICY = "OnFailure"
DEFAULT_SUCCESSFUL_HISTORY = 3
DEFAULT_FAILED_HISTORY = 1
INT32_MAX = 2147483647


def check_schedule(value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError("required property 'schedule' missing or not a string")
    if len(value.split()) != 5 or value.lstrip().startswith("@"):
        raise ValidationError(
            f'invalid cron schedule {go_quote(value)}: must be a 5-field cron expression (e.g. "0 2 * * *")'
        )
    return value


def history_limit(props: Object, key: str, default: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    number = as_int(value, key)
    if not 0 <= number <= INT32_MAX:
        raise ValidationError(f"{key}: must be between 0 and {INT32_MAX}, got {number}")
    return number


class CronJobConfig:
    def __init__(self, workload: Workload, schedule: str, restart_policy: str, successful: int, failed: int) -> None:
        self.workload = workload
        self.schedule = schedule
        self.restart_policy = restart_policy
        self.successful = successful
        self.failed = failed

    def generate(self, app: TreeApplication) -> list[Object]:
        w = self.workload
        pod = w.pod_spec()
        pod["restartPolicy"] = self.restart_policy
        cronjob = {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": w.metadata(),
            "spec": {
                "schedule": self.schedule,
                "successfulJobsHistoryLimit": self.successful,
                "failedJobsHistoryLimit": self.failed,
                "jobTemplate": {"metadata": {"labels": w.labels()}, "spec": {"template": w.pod_template(pod)}},
            },
        }
        return [cronjob, w.service_account(), *w.claims()]

    def service_port(self) -> int:
        return 0


@component("cronjob")
class CronJobHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            **common_schema(sidecars=False, affinity=False),
            "schedule": P(type="string", required=True, description='Five-field cron expression, e.g. "0 2 * * *".'),
            "restartPolicy": P(
                type="string",
                enum=list(RESTART_POLICIES),
                default=DEFAULT_RESTART_POLICY,
                description="Restart policy of the job's pods.",
            ),
            "successfulJobsHistoryLimit": P(
                type="integer", default=DEFAULT_SUCCESSFUL_HISTORY, description="Finished jobs to keep."
            ),
            "failedJobsHistoryLimit": P(
                type="integer", default=DEFAULT_FAILED_HISTORY, description="Failed jobs to keep."
            ),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> CronJobConfig:
        props = component.properties
        require_image(props)
        schedule = check_schedule(props.get("schedule"))
        restart_policy = opt_str(props, "restartPolicy") or DEFAULT_RESTART_POLICY
        if restart_policy not in RESTART_POLICIES:
            raise ValidationError(f"invalid restartPolicy {go_quote(restart_policy)}, must be 'Never' or 'OnFailure'")
        successful = history_limit(props, "successfulJobsHistoryLimit", DEFAULT_SUCCESSFUL_HISTORY)
        failed = history_limit(props, "failedJobsHistoryLimit", DEFAULT_FAILED_HISTORY)
        workload = parse_workload(component, namespace, WorkloadOptions())
        return CronJobConfig(workload, schedule, restart_policy, successful, failed)
