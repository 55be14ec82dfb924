"""``oam-operator status`` rendering (docs/operator.md#the-command-line) from realistic Application statuses.

The statuses are what the operator writes: the inventory in the reconciler's deletion order
(docs/reconciler.md#inventory-order), encoded apply orders per bundle (docs/operator.md#bundles-become-waves),
conditions per docs/operator.md#conditions.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import click
import pytest

from oam_operator.cli.statusview import (
    EXIT_NOT_READY,
    EXIT_READY,
    NO_STATUS_MESSAGE,
    StatusView,
    build_view,
    exit_code,
    render_json,
    render_text,
    to_json,
    wait_for,
    wait_outcome,
)

DIGEST = "5f0c" + "0" * 60

# What ``oam-operator status --tree`` prints for the shop example (docs/operator.md#the-command-line).
SPEC_EXAMPLE = """\
Application shop/shop  State: Processing  Ready: Unknown  Revision: 3  Objects: 3/6 ready
Message: Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)

shop-00   Ready     3/3
├── Secret db-credentials                 Ready      Current
├── StatefulSet db                        Ready      Current
└── Service db                            Ready      Current
shop-01   Applying  0/2   depends on shop-00
├── Deployment web                        Creating   InProgress
└── Service web                           Creating   InProgress
(pruning)
└── ConfigMap web-legacy                  ScheduledForDeletion  Terminating
"""


def item(
    kind: str,
    name: str,
    *,
    group: str = "",
    version: str = "v1",
    namespace: str | None = "shop",
    apply_order: int = 0,
    delete_order: int = 0,
    phase: str = "Ready",
    status: str = "Current",
    digest: str = DIGEST,
) -> dict[str, Any]:
    """An inventory item in the reconciler's JSON (docs/reconciler.md#inventory-items)."""
    raw: dict[str, Any] = {"group": group, "version": version, "kind": kind}
    if namespace:
        raw["namespace"] = namespace
    raw.update(
        {
            "name": name,
            "adoptionPolicy": "IfUnowned",
            "reconcilePolicy": "OnObjectChange",
            "updatePolicy": "SsaMerge",
            "deletePolicy": "Delete",
            "applyOrder": apply_order,
            "deleteOrder": delete_order,
            "digest": digest,
        }
    )
    if phase:
        raw["phase"] = phase
    if status:
        raw["status"] = status
    return raw


def condition(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "observedGeneration": 4,
        "lastTransitionTime": "2026-03-01T10:04:05Z",
        "reason": reason,
        "message": message,
    }


def shop() -> dict[str, Any]:
    """The Application behind the shop example: bundle shop-00 ready, shop-01 being applied, a
    ConfigMap of a removed component being pruned. The inventory is in deletion order: shop-01
    (delete order 0) before shop-00 (delete order 1), Services/Secrets after workloads
    (docs/reconciler.md#kind-priorities)."""
    message = "Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)"
    return {
        "apiVersion": "oam-operator.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "shop", "namespace": "shop", "generation": 4, "uid": "1234"},
        "spec": {"components": [{"name": "db", "type": "postgresql"}, {"name": "web", "type": "webservice"}]},
        "status": {
            "observedGeneration": 4,
            "state": "Processing",
            "conditions": [
                condition("Ready", "Unknown", "Processing", message),
                condition("Reconciling", "True", "Processing", message),
            ],
            "objects": 6,
            "readyObjects": 3,
            "bundles": [
                {
                    "name": "shop-00",
                    "dependsOn": [],
                    "objects": 3,
                    "ready": 3,
                    "state": "Ready",
                    "waves": {"first": 0, "last": 0},
                },
                {
                    "name": "shop-01",
                    "dependsOn": ["shop-00"],
                    "objects": 2,
                    "ready": 0,
                    "state": "Applying",
                    "waves": {"first": 1, "last": 1},
                },
            ],
            "inventory": [
                item("Deployment", "web", group="apps", apply_order=1, phase="Creating", status="InProgress"),
                item("Service", "web", apply_order=1, phase="Creating", status="InProgress"),
                item(
                    "ConfigMap",
                    "web-legacy",
                    apply_order=1,
                    phase="ScheduledForDeletion",
                    status="Terminating",
                    digest="",
                ),
                item("StatefulSet", "db", group="apps", delete_order=1),
                item("Secret", "db-credentials", delete_order=1),
                item("Service", "db", delete_order=1),
            ],
            "profile": "",
            "processingDigest": "ab" * 32,
            "lastProcessingDigest": "ab" * 32,
            "revision": 3,
            "processingSince": "2026-03-01T10:03:00Z",
        },
    }


def ready_app(**status: Any) -> dict[str, Any]:
    app = shop()
    message = "Applied revision 3: 5 objects ready"
    app["status"].update(
        {
            "state": "Ready",
            "conditions": [condition("Ready", "True", "Ready", message)],
            "objects": 5,
            "readyObjects": 5,
            "inventory": [i for i in app["status"]["inventory"] if i["digest"]],
        }
    )
    for entry in app["status"]["inventory"]:
        entry.update(phase="Ready", status="Current")
    app["status"]["bundles"][1].update(ready=2, state="Ready")
    app["status"].update(status)
    return app


# ------------------------------------------------------------------------------------------
# Text


def test_spec_example_is_reproduced_exactly() -> None:
    assert render_text(build_view(shop()), tree=True) == SPEC_EXAMPLE


def test_without_tree_only_header_and_bundle_lines() -> None:
    assert render_text(build_view(shop())) == (
        "Application shop/shop  State: Processing  Ready: Unknown  Revision: 3  Objects: 3/6 ready\n"
        "Message: Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)\n"
        "\n"
        "shop-00   Ready     3/3\n"
        "shop-01   Applying  0/2   depends on shop-00\n"
    )


def test_items_follow_apply_order_then_kind_priority_within_a_bundle() -> None:
    view = build_view(shop())
    assert [(i.kind, i.name) for i in view.bundles[0].items] == [
        ("Secret", "db-credentials"),
        ("StatefulSet", "db"),
        ("Service", "db"),
    ]
    assert [(i.kind, i.name) for i in view.bundles[1].items] == [("Deployment", "web"), ("Service", "web")]
    assert [(i.kind, i.name) for i in view.pruning] == [("ConfigMap", "web-legacy")]


def test_sub_waves_inside_a_bundle_and_an_application_bundle_with_own_objects() -> None:
    app = shop()
    status = app["status"]
    status["bundles"] = [
        {"name": "shop", "dependsOn": [], "objects": 1, "ready": 1, "state": "Ready", "waves": {"first": 0, "last": 0}},
        {
            "name": "shop-00",
            "dependsOn": ["shop"],
            "objects": 3,
            "ready": 1,
            "state": "Applying",
            "waves": {"first": 1, "last": 2},
        },
    ]
    status["inventory"] = [
        item("Job", "migrate", group="batch", apply_order=2, phase="ScheduledForApplication", status="InProgress"),
        item("Deployment", "web", group="apps", apply_order=1, phase="Updating", status="InProgress"),
        item("ConfigMap", "settings", apply_order=1),
        item("GitRepository", "shop", group="source.toolkit.fluxcd.io", version="v1", apply_order=0),
    ]
    text = render_text(build_view(app), tree=True)
    assert text.split("\n\n", 1)[1] == (
        "shop      Ready     1/1\n"
        "└── GitRepository shop                    Ready      Current\n"
        "shop-00   Applying  1/3   depends on shop\n"
        "├── ConfigMap settings                    Ready                    Current\n"
        "├── Deployment web                        Updating                 InProgress\n"
        "└── Job migrate                           ScheduledForApplication  InProgress\n"
    )


def test_other_namespace_and_cluster_scoped_items() -> None:
    app = shop()
    app["status"]["inventory"] = [
        item("Namespace", "shop-data", namespace=None),
        item("ClusterRole", "shop-reader", group="rbac.authorization.k8s.io", namespace=None),
        item("ConfigMap", "shared-settings", namespace="platform"),
        item("Secret", "db-credentials"),
        item("Deployment", "web", group="apps", apply_order=1, phase="Creating", status="InProgress"),
        item("Service", "web", apply_order=1, phase="Creating", status="InProgress"),
    ]
    # Namespace (-4) and ClusterRole (-2) apply first, then ConfigMap and Secret (-1) in inventory order.
    assert render_text(build_view(app), tree=True).split("\n\n", 1)[1] == (
        "shop-00   Ready     3/3\n"
        "├── Namespace shop-data                   Ready      Current\n"
        "├── ClusterRole shop-reader               Ready      Current\n"
        "├── ConfigMap platform/shared-settings    Ready      Current\n"
        "└── Secret db-credentials                 Ready      Current\n"
        "shop-01   Applying  0/2   depends on shop-00\n"
        "├── Deployment web                        Creating   InProgress\n"
        "└── Service web                           Creating   InProgress\n"
    )


def test_a_long_label_widens_the_column_of_the_whole_tree() -> None:
    app = shop()
    long_name = "a-rather-long-config-map-name-for-the-web-frontend"
    app["status"]["inventory"].append(item("ConfigMap", long_name, apply_order=1))
    lines = render_text(build_view(app), tree=True).splitlines()
    width = len("ConfigMap " + long_name) + 2
    item_lines = [line for line in lines if line.startswith(("├── ", "└── "))]
    assert len(item_lines) == 7
    for line in item_lines:
        assert line[4 + width - 2 : 4 + width] == "  "
        assert line[4 + width] != " "


def test_phase_column_is_sized_per_section() -> None:
    app = shop()
    # A desired Job whose purge is due stays in its bundle (it is not being pruned).
    app["status"]["inventory"].append(
        item("Job", "seed", group="batch", apply_order=0, delete_order=1, phase="ScheduledForCompletion", status="")
    )
    lines = render_text(build_view(app), tree=True).splitlines()
    section = lines[lines.index("shop-00   Ready     3/3") + 1 : lines.index("shop-01   Applying  0/2   depends on shop-00")]
    assert section == [
        "├── Secret db-credentials                 Ready                   Current",
        "├── StatefulSet db                        Ready                   Current",
        "├── Service db                            Ready                   Current",
        "└── Job seed                              ScheduledForCompletion",
    ]
    assert "├── Deployment web                        Creating   InProgress" in lines


@pytest.mark.parametrize(
    ("phase", "digest", "pruned"),
    [
        ("ScheduledForDeletion", "", True),
        ("ScheduledForCompletion", "", True),
        ("Deleting", "", True),
        ("Deleting", DIGEST, False),  # the Application is being deleted: the item stays in its bundle
        ("ScheduledForCompletion", DIGEST, False),  # purge of a desired object
        ("Ready", "", False),
    ],
)
def test_pruning_needs_an_undesired_item_on_its_way_out(phase: str, digest: str, pruned: bool) -> None:
    app = shop()
    app["status"]["inventory"] = [item("ConfigMap", "x", phase=phase, status="Terminating", digest=digest)]
    view = build_view(app)
    assert (len(view.pruning) == 1) is pruned
    assert (len(view.bundles[0].items) == 1) is not pruned


def test_pruning_keeps_inventory_order_and_every_connector() -> None:
    app = shop()
    app["status"]["inventory"] = [
        item("Service", "old", apply_order=1, phase="Deleting", status="Terminating", digest=""),
        item("ConfigMap", "old", namespace="other", phase="ScheduledForDeletion", status="Terminating", digest=""),
    ]
    text = render_text(build_view(app), tree=True)
    assert text.endswith(
        "shop-01   Applying  0/2   depends on shop-00\n"
        "(pruning)\n"
        "├── Service old                           Deleting              Terminating\n"
        "└── ConfigMap other/old                   ScheduledForDeletion  Terminating\n"
    )


def test_items_no_bundle_claims_are_listed_not_lost() -> None:
    app = shop()
    del app["status"]["bundles"]
    text = render_text(build_view(app), tree=True)
    assert text.split("\n\n", 1)[1] == (
        "(no bundle)\n"
        "├── Secret db-credentials                 Ready      Current\n"
        "├── StatefulSet db                        Ready      Current\n"
        "├── Service db                            Ready      Current\n"
        "├── Deployment web                        Creating   InProgress\n"
        "└── Service web                           Creating   InProgress\n"
        "(pruning)\n"
        "└── ConfigMap web-legacy                  ScheduledForDeletion  Terminating\n"
    )
    assert render_text(build_view(app)).count("\n") == 2  # header and message only


def test_a_bundle_without_items_and_an_empty_status() -> None:
    app = shop()
    app["status"]["inventory"] = []
    lines = render_text(build_view(app), tree=True).splitlines()
    assert lines[3:] == ["shop-00   Ready     3/3", "shop-01   Applying  0/2   depends on shop-00"]


def test_no_status_yet() -> None:
    app = shop()
    del app["status"]
    view = build_view(app)
    assert render_text(view, tree=True) == (
        "Application shop/shop  State: <none>  Ready: Unknown  Revision: 0  Objects: 0/0 ready\n"
        f"Message: {NO_STATUS_MESSAGE}\n"
    )
    assert to_json(view)["state"] is None
    assert exit_code(view) == EXIT_NOT_READY


def test_ready_header_and_multi_line_messages() -> None:
    assert render_text(build_view(ready_app())).splitlines()[:2] == [
        "Application shop/shop  State: Ready  Ready: True  Revision: 3  Objects: 5/5 ready",
        "Message: Applied revision 3: 5 objects ready",
    ]
    app = shop()
    error = 'component "web": trait "scaler" appears twice\ncomponent "db": unknown type "postgres"'
    app["status"]["state"] = "Error"
    app["status"]["conditions"] = [condition("Ready", "False", "TransformFailed", error)]
    assert render_text(build_view(app)).splitlines()[:3] == [
        "Application shop/shop  State: Error  Ready: False  Revision: 3  Objects: 3/6 ready",
        'Message: component "web": trait "scaler" appears twice',
        '         component "db": unknown type "postgres"',
    ]


def test_long_bundle_names_and_counts_widen_their_columns() -> None:
    app = shop()
    app["status"]["inventory"] = []
    app["status"]["bundles"] = [
        {"name": "shop-infra", "objects": 120, "ready": 120, "state": "Ready", "waves": {"first": 0, "last": 0}},
        {
            "name": "shop-services",
            "dependsOn": ["shop-infra"],
            "objects": 8,
            "ready": 0,
            "state": "Applying",
            "waves": {"first": 1, "last": 1},
        },
        {"name": "shop-apps", "dependsOn": ["shop-services"], "objects": 2, "state": "Pending"},
    ]
    assert render_text(build_view(app)).splitlines()[3:] == [
        "shop-infra     Ready     120/120",
        "shop-services  Applying  0/8      depends on shop-infra",
        "shop-apps      Pending   0/2      depends on shop-services",
    ]


def test_colour_only_when_asked_and_never_in_the_padding() -> None:
    view = build_view(shop())
    coloured = render_text(view, tree=True, color=True)
    assert "\x1b[" in coloured
    assert click.unstyle(coloured) == SPEC_EXAMPLE
    assert click.style("Current", fg="green") in coloured
    assert click.style("Applying", fg="yellow") + "  0/2" in coloured
    assert "\x1b[" not in render_text(view, tree=True)


def test_lenient_reading_of_unknown_values_and_odd_types() -> None:
    app = shop()
    status = app["status"]
    status["state"] = "Hibernating"  # a newer operator's state
    status["revision"] = "3"
    status["objects"] = None
    status["bundles"].append("garbage")
    status["bundles"][0]["waves"] = {"first": 0}
    status["inventory"].append({"kind": "Widget", "name": "w", "phase": "Frobnicating", "applyOrder": 1})
    status["inventory"].append(17)
    view = build_view(app)
    assert view.state == "Hibernating"
    assert (view.revision, view.objects) == (0, 0)
    assert len(view.bundles) == 2
    assert [(i.kind, i.name) for i in view.unassigned] == [  # shop-00 lost its waves
        ("Secret", "db-credentials"),
        ("StatefulSet", "db"),
        ("Service", "db"),
    ]
    assert ("Widget", "w", "Frobnicating") in [(i.kind, i.name, i.phase) for i in view.bundles[1].items]
    assert "Widget w" in render_text(view, tree=True)


# ------------------------------------------------------------------------------------------
# JSON


def test_json_document() -> None:
    document = json.loads(render_json(build_view(shop())))
    assert list(document) == [
        "name",
        "namespace",
        "state",
        "conditions",
        "revision",
        "bundles",
        "pruning",
        "unassigned",
    ]
    assert (document["name"], document["namespace"], document["state"], document["revision"]) == (
        "shop",
        "shop",
        "Processing",
        3,
    )
    assert document["conditions"] == shop()["status"]["conditions"]
    assert document["bundles"][1] == {
        "name": "shop-01",
        "dependsOn": ["shop-00"],
        "objects": 2,
        "ready": 0,
        "state": "Applying",
        "waves": {"first": 1, "last": 1},
        "items": [
            {
                "group": "apps",
                "version": "v1",
                "kind": "Deployment",
                "namespace": "shop",
                "name": "web",
                "phase": "Creating",
                "status": "InProgress",
            },
            {
                "group": "",
                "version": "v1",
                "kind": "Service",
                "namespace": "shop",
                "name": "web",
                "phase": "Creating",
                "status": "InProgress",
            },
        ],
    }
    assert [i["name"] for i in document["bundles"][0]["items"]] == ["db-credentials", "db", "db"]
    assert document["pruning"] == [
        {
            "group": "",
            "version": "v1",
            "kind": "ConfigMap",
            "namespace": "shop",
            "name": "web-legacy",
            "phase": "ScheduledForDeletion",
            "status": "Terminating",
        }
    ]
    assert document["unassigned"] == []


def test_json_of_cluster_scoped_and_phaseless_items_uses_empty_strings() -> None:
    app = shop()
    app["status"]["inventory"] = [item("Namespace", "shop-data", namespace=None, phase="Completed", status="")]
    (entry,) = to_json(build_view(app))["bundles"][0]["items"]
    assert entry == {
        "group": "",
        "version": "v1",
        "kind": "Namespace",
        "namespace": "",
        "name": "shop-data",
        "phase": "Completed",
        "status": "",
    }


# ------------------------------------------------------------------------------------------
# Exit codes and --wait


@pytest.mark.parametrize(
    ("state", "code"),
    [("Ready", 0), ("Processing", 3), ("Pending", 3), ("Error", 3), ("Deleting", 3), ("DeletionPending", 3)],
)
def test_exit_code(state: str, code: int) -> None:
    app = shop()
    app["status"]["state"] = state
    assert exit_code(build_view(app)) == code


def test_wait_outcome_needs_a_status_of_the_current_spec() -> None:
    assert wait_outcome(build_view(ready_app())) == EXIT_READY
    assert wait_outcome(build_view(ready_app(observedGeneration=3))) is None  # spec changed since
    assert wait_outcome(build_view(ready_app(observedGeneration=None))) is None
    error = shop()
    error["status"]["state"] = "Error"
    assert wait_outcome(build_view(error)) == EXIT_NOT_READY
    error["metadata"]["generation"] = 5  # the user fixed the spec: the old Error does not count
    assert wait_outcome(build_view(error)) is None
    assert wait_outcome(build_view(shop())) is None  # Processing


def test_wait_outcome_waits_for_a_pending_reconcile_request() -> None:
    app = ready_app(lastHandledReconcileAt="2026-03-01T10:00:00.000000Z")
    app["metadata"]["annotations"] = {"oam-operator.dev/requested-at": "2026-03-01T10:05:00.000000Z"}
    assert wait_outcome(build_view(app)) is None
    assert wait_outcome(build_view(app, domain="example.org")) == EXIT_READY  # another domain's request
    app["status"]["lastHandledReconcileAt"] = "2026-03-01T10:05:00.000000Z"
    assert wait_outcome(build_view(app)) == EXIT_READY


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def reader(*apps: dict[str, Any] | Exception) -> Any:
    """A read function returning ``apps`` in turn (the last one forever); exceptions are raised."""
    queue = list(apps)

    def read() -> StatusView:
        current = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(current, Exception):
            raise current
        return build_view(current)

    return read


def test_wait_returns_once_ready() -> None:
    clock = FakeClock()
    result = wait_for(reader(shop(), shop(), ready_app()), 300, clock=clock, sleep=clock.sleep)
    assert (result.code, result.timed_out, result.view.state) == (EXIT_READY, False, "Ready")
    assert clock.sleeps == [0.1, 0.2]  # the polls start 0.1 s apart and double up to 1 s


def test_wait_stops_on_error_and_times_out_otherwise() -> None:
    error = shop()
    error["status"]["state"] = "Error"
    clock = FakeClock()
    result = wait_for(reader(shop(), error), 300, clock=clock, sleep=clock.sleep)
    assert (result.code, result.timed_out) == (EXIT_NOT_READY, False)

    clock = FakeClock()
    result = wait_for(reader(shop()), 2.5, clock=clock, sleep=clock.sleep)
    assert (result.code, result.timed_out, result.view.state) == (EXIT_NOT_READY, True, "Processing")
    assert clock.sleeps == [0.1, 0.2, 0.4, 0.8, 1.0]

    clock = FakeClock()
    result = wait_for(reader(shop()), 0, clock=clock, sleep=clock.sleep)
    assert (result.code, result.timed_out, clock.sleeps) == (EXIT_NOT_READY, True, [])


class Transient(Exception):
    pass


def test_wait_polls_through_transient_failures_only() -> None:
    clock = FakeClock()
    read = reader(shop(), Transient("503"), Transient("503"), ready_app())
    result = wait_for(read, 300, retry=lambda e: isinstance(e, Transient), clock=clock, sleep=clock.sleep)
    assert result.code == EXIT_READY

    clock = FakeClock()
    with pytest.raises(KeyError):
        wait_for(reader(shop(), KeyError("gone")), 300, retry=lambda e: isinstance(e, Transient), clock=clock,
                 sleep=clock.sleep)

    clock = FakeClock()
    result = wait_for(reader(shop(), Transient("down")), 3, retry=lambda e: isinstance(e, Transient), clock=clock,
                      sleep=clock.sleep)
    assert (result.code, result.timed_out, result.view.state) == (EXIT_NOT_READY, True, "Processing")

    clock = FakeClock()
    with pytest.raises(Transient):
        wait_for(reader(Transient("down")), 3, retry=lambda e: isinstance(e, Transient), clock=clock,
                 sleep=clock.sleep)


def test_build_view_does_not_modify_its_input() -> None:
    app = shop()
    before = copy.deepcopy(app)
    render_text(build_view(app), tree=True)
    assert app == before


def test_wait_reports_every_view_and_progress_lines_follow_the_state() -> None:
    from oam_operator.cli.statusview import progress_line

    clock = FakeClock()
    seen: list[str] = []
    result = wait_for(reader(shop(), shop(), ready_app()), 300, clock=clock, sleep=clock.sleep,
                      on_view=lambda view: seen.append(progress_line(view)))
    assert result.code == EXIT_READY
    processing = progress_line(build_view(shop()))
    assert seen == [processing, processing, progress_line(build_view(ready_app()))]
    assert processing == (
        "Processing  3/6 ready  Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), "
        "Service web (Creating)"
    )
    assert progress_line(build_view(ready_app())) == "Ready  5/5 ready  Applied revision 3: 5 objects ready"
