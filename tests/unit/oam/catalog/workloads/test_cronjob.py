"""The ``cronjob`` component (docs/transform.md#workload-components)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import IMAGE, LABEL, NS, RESOURCES, config, error, handler_error, objects, with_image

from oam_operator.oam import dump_objects
from oam_operator.oam.engine.handlers import service_port


def test_defaults() -> None:
    assert objects("cronjob", {"image": IMAGE, "schedule": "0 2 * * *"}, name="cleanup") == [
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"labels": {"app": "cleanup"}, "name": "cleanup", "namespace": NS},
            "spec": {
                "schedule": "0 2 * * *",
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {
                    "metadata": {"labels": {"app": "cleanup"}},
                    "spec": {
                        "template": {
                            "metadata": {"labels": {"app": "cleanup"}},
                            "spec": {
                                "containers": [
                                    {
                                        "name": "cleanup",
                                        "image": IMAGE,
                                        "imagePullPolicy": "IfNotPresent",
                                        "resources": RESOURCES,
                                    }
                                ],
                                "restartPolicy": "OnFailure",
                                "serviceAccountName": "cleanup",
                            },
                        }
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"labels": {"app": "cleanup"}, "name": "cleanup", "namespace": NS},
            "automountServiceAccountToken": False,
        },
    ]
    assert service_port(config("cronjob", with_image(schedule="0 2 * * *"))) == 0


def test_options() -> None:
    props = with_image(
        schedule="*/15  9-17 * * 1-5",
        restartPolicy="Never",
        successfulJobsHistoryLimit=0,
        failedJobsHistoryLimit=10,
    )
    spec = objects("cronjob", props)[0]["spec"]
    assert spec["schedule"] == "*/15  9-17 * * 1-5"
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (0, 10)
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_component_label_on_job_and_pod_templates() -> None:
    cronjob = objects("cronjob", with_image(schedule="0 2 * * *"), name="nightly", label=True)[0]
    assert cronjob["metadata"]["labels"] == {"app": "nightly", LABEL: "nightly"}
    assert cronjob["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"] == {
        "app": "nightly",
        LABEL: "nightly",
    }


def test_schedule_is_printed_plain() -> None:
    text = dump_objects(objects("cronjob", with_image(schedule="30 4 * * 0")))
    assert "\n  schedule: 30 4 * * 0\n" in text


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "required property 'schedule' missing or not a string"),
        ({"schedule": 5}, "required property 'schedule' missing or not a string"),
        (
            {"schedule": "@daily"},
            'invalid cron schedule "@daily": must be a 5-field cron expression (e.g. "0 2 * * *")',
        ),
        (
            {"schedule": "0 2 * *"},
            'invalid cron schedule "0 2 * *": must be a 5-field cron expression (e.g. "0 2 * * *")',
        ),
        (
            {"schedule": "0 0 2 * * *"},
            'invalid cron schedule "0 0 2 * * *": must be a 5-field cron expression (e.g. "0 2 * * *")',
        ),
        (
            {"schedule": "0 2 * * *", "restartPolicy": "Always"},
            "invalid restartPolicy \"Always\", must be 'Never' or 'OnFailure'",
        ),
        (
            {"schedule": "0 2 * * *", "successfulJobsHistoryLimit": -1},
            "successfulJobsHistoryLimit: must be between 0 and 2147483647, got -1",
        ),
        (
            {"schedule": "0 2 * * *", "failedJobsHistoryLimit": 2147483648},
            "failedJobsHistoryLimit: must be between 0 and 2147483647, got 2147483648",
        ),
        (
            {"schedule": "0 2 * * *", "failedJobsHistoryLimit": "1"},
            "failedJobsHistoryLimit: must be an integer, got string",
        ),
        (
            {"schedule": "0 2 * * *", "successfulJobsHistoryLimit": 1.5},
            "successfulJobsHistoryLimit: must be an integer, got float64",
        ),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert handler_error("cronjob", with_image(**props)) == message


def test_schema_checks() -> None:
    assert error("cronjob", with_image(schedule="0 2 * * *", restartPolicy="Always")) == (
        'component "c" (type "cronjob"): properties.restartPolicy: unknown restartPolicy "Always" (valid: Never, OnFailure)'
    )
    # a missing schedule is the handler's to report (no required check at the top level:
    # docs/transform.md#validating-authored-properties)
    assert error("cronjob", with_image()) == "component \"c\": required property 'schedule' missing or not a string"
    # the image is checked before the schedule
    assert handler_error("cronjob", {"image": "busybox"}).startswith('image "busybox" rejected')
