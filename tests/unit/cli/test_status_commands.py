"""``oam-operator status`` and ``reconcile`` as commands: options, exit codes, error texts.

The cluster is replaced by fakes of ``kubeclient``'s two calls (the real calls are exercised by
tests/integration/cli); the kubeconfig handling and the API error texts are tested for real.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import urllib3
from click.testing import CliRunner
from kubernetes.client.exceptions import ApiException
from test_statusview import SPEC_EXAMPLE, ready_app, shop

from oam_operator.cli import kubeclient, main, statusview
from oam_operator.cli import status as statuscli
from oam_operator.cli.kubeclient import ApiFailure, describe_api_error
from oam_operator.cli.status import requested_at_value


@dataclass
class FakeConnection:
    namespace: str = "shop"
    server: str = "https://127.0.0.1:6443"
    closed: bool = False

    def close(self) -> None:
        self.closed = True


@dataclass
class FakeCluster:
    """Answers ``get_application`` from ``apps`` (one per read, the last forever) and records patches."""

    apps: list[dict[str, Any] | ApiFailure] = field(default_factory=list)
    reads: list[tuple[str, str]] = field(default_factory=list)
    patches: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    connection: FakeConnection = field(default_factory=FakeConnection)
    now: float = 0.0  # the fake monotonic clock of the --wait poll
    slept: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def get(self, conn: Any, namespace: str, name: str) -> dict[str, Any]:
        self.reads.append((namespace, name))
        current = self.apps.pop(0) if len(self.apps) > 1 else self.apps[0]
        if isinstance(current, ApiFailure):
            raise current
        return current

    def annotate(self, conn: Any, namespace: str, name: str, annotations: dict[str, str]) -> dict[str, Any]:
        self.patches.append((namespace, name, dict(annotations)))
        current = self.apps[0]
        if isinstance(current, ApiFailure):
            raise current
        return current

    def patch(self, conn: Any, namespace: str, name: str, body: dict[str, Any], action: str) -> dict[str, Any]:
        self.patches.append((namespace, name, {"action": action, "body": body}))
        current = self.apps[0]
        if isinstance(current, ApiFailure):
            raise current
        return current


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCluster]:
    cluster = FakeCluster()
    # The poll waits on a fake clock: a --wait between two reads takes no wall time.
    monkeypatch.setattr(statuscli, "wait_for", functools.partial(statusview.wait_for, clock=cluster.clock,
                                                                 sleep=cluster.sleep))
    monkeypatch.setattr(statuscli, "_connect", lambda kubeconfig, context: cluster.connection)
    monkeypatch.setattr(statuscli, "_connect_reading", lambda kubeconfig, context: cluster.connection)
    monkeypatch.setattr(kubeclient, "get_application", cluster.get)
    monkeypatch.setattr(kubeclient, "annotate_application", cluster.annotate)
    monkeypatch.setattr(kubeclient, "patch_application", cluster.patch)
    yield cluster
    assert cluster.connection.closed or not (cluster.reads or cluster.patches)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


NOT_FOUND = ApiFailure('application "nope" not found in namespace "shop"')


def test_status_prints_the_tree_and_exits_3_when_not_ready(fake: FakeCluster) -> None:
    fake.apps = [shop()]
    result = invoke("status", "shop", "--tree")
    assert (result.exit_code, result.stdout, result.stderr) == (3, SPEC_EXAMPLE, "")
    assert fake.reads == [("shop", "shop")]


def test_status_exits_0_when_ready_and_honours_the_namespace_flag(fake: FakeCluster) -> None:
    fake.apps = [ready_app()]
    result = invoke("status", "shop", "-n", "elsewhere")
    assert result.exit_code == 0
    assert result.stdout.startswith("Application shop/shop  State: Ready  Ready: True")
    assert fake.reads == [("elsewhere", "shop")]


def test_status_json(fake: FakeCluster) -> None:
    fake.apps = [shop()]
    result = invoke("status", "shop", "-o", "json")
    assert result.exit_code == 3
    document = json.loads(result.stdout)
    assert document["state"] == "Processing"
    assert [b["name"] for b in document["bundles"]] == ["shop-00", "shop-01"]


def test_status_failure_is_one_error_line_and_exit_1(fake: FakeCluster) -> None:
    fake.apps = [NOT_FOUND]
    result = invoke("status", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        'Error: application "nope" not found in namespace "shop"\n',
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["status"], "Missing argument 'NAME'"),
        (["status", "shop", "--timeout", "soon"], "'soon' is not a duration such as 90s, 5m or 1h30m"),
        (["status", "shop", "--timeout", "-1m"], "'-1m' must not be negative"),
        (["status", "shop", "-o", "yaml"], "'yaml' is not one of 'text', 'json'"),
        (["reconcile"], "Missing argument 'NAME'"),
    ],
)
def test_usage_errors_exit_2(fake: FakeCluster, args: list[str], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert fake.reads == []


def test_wait_returns_0_once_ready(fake: FakeCluster) -> None:
    fake.apps = [shop(), ready_app()]
    result = invoke("status", "shop", "--wait", "--timeout", "30s")
    assert result.exit_code == 0
    assert "State: Ready" in result.stdout
    assert len(fake.reads) == 2


def test_wait_times_out_with_exit_3_and_a_note_on_stderr(fake: FakeCluster) -> None:
    fake.apps = [shop()]
    result = invoke("status", "shop", "--wait", "--timeout", "0s", "-o", "json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["state"] == "Processing"
    assert result.stderr == (
        "Processing  3/6 ready  Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), "
        "Service web (Creating)\n"
        "Timed out after 0s waiting for Application shop/shop to become Ready\n"
    )


def test_wait_ends_on_error_with_exit_3(fake: FakeCluster) -> None:
    error = shop()
    error["status"]["state"] = "Error"
    fake.apps = [error]
    result = invoke("status", "shop", "--wait")
    assert (result.exit_code, result.stderr) == (
        3, "Error  3/6 ready  Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)\n"
    )


def test_wait_polls_through_transient_failures(fake: FakeCluster) -> None:
    fake.apps = [ApiFailure("cannot reach the API server", transient=True), ready_app()]
    result = invoke("status", "shop", "--wait", "--timeout", "30s")
    assert result.exit_code == 0


def test_wait_stops_at_once_when_the_application_is_missing(fake: FakeCluster) -> None:
    fake.apps = [NOT_FOUND]
    result = invoke("status", "nope", "--wait")
    assert (result.exit_code, result.stderr) == (1, 'Error: application "nope" not found in namespace "shop"\n')
    assert len(fake.reads) == 1


def test_reconcile_sets_the_annotation(fake: FakeCluster) -> None:
    fake.apps = [ready_app()]
    result = invoke("reconcile", "shop")
    assert result.exit_code == 0
    ((namespace, name, annotations),) = fake.patches
    assert (namespace, name, list(annotations)) == ("shop", "shop", ["oam-operator.dev/requested-at"])
    value = annotations["oam-operator.dev/requested-at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", value)
    assert result.stdout == f"Requested a reconcile of Application shop/shop (oam-operator.dev/requested-at: {value})\n"
    assert result.stderr == ""


def test_reconcile_with_another_domain_and_a_suspended_application(
    fake: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = ready_app()
    app["spec"]["suspend"] = True
    fake.apps = [app]
    monkeypatch.setenv("OAM_OPERATOR_DOMAIN", "apps.example.org")
    result = invoke("reconcile", "shop", "-n", "team-a")
    assert result.exit_code == 0
    assert list(fake.patches[0][2]) == ["apps.example.org/requested-at"]
    assert result.stdout.startswith("Requested a reconcile of Application team-a/shop (apps.example.org/requested-at: ")
    assert result.stderr == (
        "Warning: Application team-a/shop is suspended (spec.suspend: true); the request is handled once it is resumed\n"
    )
    result = invoke("reconcile", "shop", "--domain", "flag.example.org")
    assert list(fake.patches[1][2]) == ["flag.example.org/requested-at"]


def test_reconcile_wait_refuses_a_suspended_application_at_once(fake: FakeCluster) -> None:
    """Waiting could only run out the timeout (Flux refuses too): exit 2, nothing written, no sleep."""
    app = ready_app()
    app["spec"]["suspend"] = True
    fake.apps = [app]
    result = invoke("reconcile", "shop", "-n", "team-a", "--wait")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2,
        "",
        "Error: Application team-a/shop is suspended; --wait would wait until it is resumed: resume it first "
        "(oam-operator resume shop -n team-a), or reconcile without --wait to have it handled on resume\n",
    )
    assert fake.patches == [] and fake.slept == []


def test_reconcile_failure(fake: FakeCluster) -> None:
    fake.apps = [NOT_FOUND]
    result = invoke("reconcile", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1,
        "",
        'Error: application "nope" not found in namespace "shop"\n',
    )


def test_requested_at_value() -> None:
    from datetime import datetime, timedelta, timezone

    moment = datetime(2026, 3, 1, 11, 4, 5, 120, tzinfo=timezone(timedelta(hours=1)))
    assert requested_at_value(moment) == "2026-03-01T10:04:05.000120Z"


# ------------------------------------------------------------------------------------------
# Kubeconfig handling (real loader, no server needed)


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: u
  user: {token: abc}
contexts:
- name: with-ns
  context: {cluster: c, user: u, namespace: team-a}
- name: without-ns
  context: {cluster: c, user: u}
current-context: with-ns
"""


@pytest.fixture
def kubeconfig_file(tmp_path: Path) -> str:
    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    return str(path)


def test_connect_reads_the_context_namespace(kubeconfig_file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = kubeclient.connect(kubeconfig_file)
    assert (conn.namespace, conn.server) == ("team-a", "https://127.0.0.1:9")
    conn.close()
    conn = kubeclient.connect(kubeconfig_file, "without-ns")
    assert conn.namespace == "default"
    conn.close()
    monkeypatch.setenv("KUBECONFIG", f"/nonexistent/a:{kubeconfig_file}")
    conn = kubeclient.connect()
    assert conn.namespace == "team-a"
    conn.close()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--kubeconfig", "/nonexistent/config"], {}, 'kubeconfig "/nonexistent/config" does not exist'),
        (["--context", "nope"], None, 'context "nope" not found in the kubeconfig'),
        (
            [],
            {"KUBECONFIG": "/nonexistent/a"},
            "no kubeconfig found (looked for /nonexistent/a); pass --kubeconfig FILE",
        ),
    ],
)
def test_kubeconfig_errors(
    kubeconfig_file: str,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    env: dict[str, str] | None,
    message: str,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    if env is None:
        args = [*args, "--kubeconfig", kubeconfig_file]
    else:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
    for command in ("status", "reconcile"):
        result = invoke(command, "shop", *args)
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {message}\n")


def test_unparsable_kubeconfig(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("clusters: [")
    result = invoke("status", "shop", "--kubeconfig", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot load the kubeconfig: ")


def test_unreachable_server_is_one_line(kubeconfig_file: str) -> None:
    result = invoke("status", "shop", "--kubeconfig", kubeconfig_file)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot reach the API server at https://127.0.0.1:9: ")
    assert result.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------
# API error texts


def api_exception(status: int, reason: str, body: Any) -> ApiException:
    return ApiException(status=status, reason=reason, body=json.dumps(body) if not isinstance(body, str) else body)


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                            "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return body


def test_not_found_names_the_application_and_namespace() -> None:
    exc = api_exception(
        404,
        "Not Found",
        status_body(404, "NotFound", 'applications.oam-operator.dev "web" not found',
                    {"name": "web", "group": "oam-operator.dev", "kind": "applications"}),
    )
    failure = describe_api_error(exc, "reading", "shop", "web")
    assert (failure.message, failure.transient) == ('application "web" not found in namespace "shop"', False)


def test_a_missing_crd_is_explained() -> None:
    exc = api_exception(404, "Not Found", status_body(404, "NotFound", "the server could not find the requested resource", {}))
    assert describe_api_error(exc, "reading", "shop", "web").message == (
        "the server does not serve applications.oam-operator.dev/v1alpha1 (are the oam-operator CRDs installed? "
        "oam-operator crd | kubectl apply --server-side -f -)"
    )
    assert "does not serve" in describe_api_error(api_exception(404, "Not Found", "404 page not found"), "reading",
                                                  "shop", "web").message


def test_other_api_errors_quote_the_server() -> None:
    forbidden = 'applications.oam-operator.dev "web" is forbidden: User "jane" cannot get resource "applications"'
    failure = describe_api_error(api_exception(403, "Forbidden", status_body(403, "Forbidden", forbidden)), "reading",
                                 "shop", "web")
    assert (failure.message, failure.transient) == (
        f'reading application "web" in namespace "shop": 403 Forbidden: {forbidden}',
        False,
    )
    failure = describe_api_error(api_exception(503, "Service Unavailable", ""), "annotating", "shop", "web")
    assert (failure.message, failure.transient) == (
        'annotating application "web" in namespace "shop": 503 Service Unavailable',
        True,
    )
    assert describe_api_error(api_exception(429, "Too Many Requests", "slow down"), "reading", "shop", "web").transient


def test_connection_errors_are_transient() -> None:
    message = "Failed to establish a new connection: [Errno 111] refused"
    cause = urllib3.exceptions.NewConnectionError(None, message)  # type: ignore[arg-type]
    exc = urllib3.exceptions.MaxRetryError(None, "/apis/oam-operator.dev", cause)  # type: ignore[arg-type]
    failure = describe_api_error(exc, "reading", "shop", "web", "https://127.0.0.1:6443")
    assert failure.transient
    assert failure.message == (
        "cannot reach the API server at https://127.0.0.1:6443: Failed to establish a new connection: [Errno 111] refused"
    )


def test_unexpected_exceptions_are_not_disguised() -> None:
    with pytest.raises(KeyError):
        describe_api_error(KeyError("x"), "reading", "shop", "web")


def test_reconcile_wait_prints_progress_and_the_outcome(fake: FakeCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    handled = ready_app()
    fake.apps = [shop()]

    def handle(conn: Any, namespace: str, name: str, annotations: dict[str, str]) -> dict[str, Any]:
        # The operator handles the request: it records the value and reports Ready.
        value = annotations["oam-operator.dev/requested-at"]
        for app in (pending, handled):
            app["metadata"].setdefault("annotations", {}).update(annotations)
        handled["status"]["lastHandledReconcileAt"] = value
        fake.apps = [pending, handled]
        return pending

    pending = shop()
    monkeypatch.setattr(kubeclient, "annotate_application", handle)
    result = invoke("reconcile", "shop", "--wait", "--timeout", "30s")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == ["Application shop/shop reconciled: Applied revision 3: 5 objects ready"]
    assert result.stderr.splitlines() == [
        "Processing  3/6 ready  Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), Service web (Creating)",
        "Ready  5/5 ready  Applied revision 3: 5 objects ready",
    ]


def test_reconcile_wait_times_out_until_the_request_is_handled(
    fake: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.apps = [ready_app()]

    def annotate(conn: Any, namespace: str, name: str, annotations: dict[str, str]) -> dict[str, Any]:
        fake.apps[0]["metadata"].setdefault("annotations", {}).update(annotations)
        return fake.apps[0]

    monkeypatch.setattr(kubeclient, "annotate_application", annotate)
    result = invoke("reconcile", "shop", "--wait", "--timeout", "0s")
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-1] == "Timed out after 0s waiting for Application shop/shop to be reconciled"


def test_reconcile_wait_ends_with_3_and_the_error(fake: FakeCluster) -> None:
    error = shop()
    error["status"]["state"] = "Error"
    fake.apps = [error]
    result = invoke("reconcile", "shop", "--wait")
    assert result.exit_code == 3
    assert result.stdout.splitlines()[-1] == (
        "Application shop/shop failed: Waiting for bundle shop-01 (0/2 ready): Deployment web (Creating), "
        "Service web (Creating)"
    )


def test_suspend_and_resume_patch_spec_suspend(fake: FakeCluster) -> None:
    fake.apps = [ready_app()]
    result = invoke("suspend", "shop", "-n", "team-a")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "Application team-a/shop suspended\n", "")
    result = invoke("resume", "shop")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "Application shop/shop resumed\n", "")
    assert fake.patches == [
        ("team-a", "shop", {"action": "suspending", "body": {"spec": {"suspend": True}}}),
        ("shop", "shop", {"action": "resuming", "body": {"spec": {"suspend": False}}}),
    ]


def test_suspend_failure(fake: FakeCluster) -> None:
    fake.apps = [NOT_FOUND]
    result = invoke("suspend", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", 'Error: application "nope" not found in namespace "shop"\n')
