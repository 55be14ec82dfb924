"""pytest wiring for the local control plane (docs/devcluster.md#pytest-integration).

Importing this module sets ``KUBECONFIG`` before anything imports ``kubernetes`` (which
reads it once, at import): ``tests/conftest.py`` imports it as its very first statement.
Fixtures: ``cluster``, ``full_cluster``, ``spoke_clusters`` and ``four_spokes`` (session),
``namespace``, ``full_namespace``, ``kube_api`` and ``full_kube_api`` (function).
``OAM_REQUIRE_CLUSTER=1`` turns a missing control plane into a failure; ``OAM_TEST_KUBECONFIG``
runs against an existing cluster.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from . import devcluster as dc

RUN_ID = secrets.token_hex(4)
RUN_LABEL = "oam-operator.dev/test-run"
DEFAULT_WAIT = {"minimal": 60.0, "full": 120.0, "external": 120.0}
RUN_ROOT = Path(tempfile.mkdtemp(prefix="oam-test-"))
EXTERNAL_KUBECONFIG = os.environ.get("OAM_TEST_KUBECONFIG") or None


def _configure_kubeconfig() -> str:
    path = EXTERNAL_KUBECONFIG or str(RUN_ROOT / "minimal" / "admin.kubeconfig")
    os.environ["KUBECONFIG"] = path
    loaded = sys.modules.get("kubernetes.config.kube_config")
    if loaded is not None:
        loaded.KUBE_CONFIG_DEFAULT_LOCATION = path  # type: ignore[attr-defined]
        warnings.warn(
            "kubernetes was imported before the devcluster plugin; its KUBE_CONFIG_DEFAULT_LOCATION "
            f"was overwritten with {path}",
            stacklevel=2,
        )
    return path


KUBECONFIG_PATH = _configure_kubeconfig()


def require_cluster() -> bool:
    return os.environ.get("OAM_REQUIRE_CLUSTER") == "1"


def timeout_scale() -> float:
    return float(os.environ.get("OAM_TEST_TIMEOUT_SCALE", "1"))


def default_wait(handle: dc.ClusterHandle) -> float:
    """The default bound of a test's wait: it guards against hangs, it measures nothing."""
    return DEFAULT_WAIT.get(handle.profile, 120.0) * timeout_scale()


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, step: float = 0.25) -> Any:
    """Poll ``predicate`` until it returns a truthy value; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}", pytrace=False)
        time.sleep(step)


class _Clusters:
    """The session's clusters; started on first use, stopped at session end."""

    def __init__(self) -> None:
        self.planes: dict[str, dc.ControlPlane] = {}
        self.failures = 0
        self.log_offsets: dict[str, dict[str, dict[str, int]]] = {}

    def get(self, profile: str, key: str | None = None, *, audit: bool = False) -> dc.ClusterHandle:
        """The control plane ``key`` (default: the profile's name) of ``profile``, started on first
        use; ``audit``: its API server writes an audit log (``audit_log``)."""
        key = key or profile
        if EXTERNAL_KUBECONFIG:
            if key != profile:
                pytest.skip(f"{key} needs a control plane of its own; OAM_TEST_KUBECONFIG names one cluster")
            return external_handle()
        if key not in self.planes:
            binaries = dc.find_binaries()
            missing = binaries.missing(profile)
            if missing:
                message = (
                    f"devcluster binaries missing for profile {profile}: {', '.join(missing)}; "
                    "build them with `make devcluster`"
                )
                if require_cluster():
                    pytest.fail(message, pytrace=False)
                pytest.skip(message)
            self.planes[key] = dc.start(profile, name=f"test-{key}", run_dir=RUN_ROOT / key, binaries=binaries,
                                        audit=audit)
        return self.planes[key].handle

    def plane(self, handle: dc.ClusterHandle) -> dc.ControlPlane:
        """The running control plane of ``handle`` (to stop or restart one of its components)."""
        for plane in self.planes.values():
            if plane.handle is handle:
                return plane
        raise LookupError(f"no control plane of this session is {handle.name}")

    def stop_all(self) -> None:
        keep = self.failures > 0
        for plane in self.planes.values():
            plane.stop(keep=keep)
        self.planes.clear()


CLUSTERS = _Clusters()


def external_handle() -> dc.ClusterHandle:
    assert EXTERNAL_KUBECONFIG is not None
    return dc.ClusterHandle(
        name="external", profile="external", kubeconfig=EXTERNAL_KUBECONFIG, server="", run_dir=None,
        has_controllers=True,
    )


def api_client(handle: dc.ClusterHandle) -> Any:
    """A ``kubernetes.client.ApiClient`` for ``handle`` (imported here, after KUBECONFIG is set)."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=handle.kubeconfig, client_configuration=configuration
    )
    configuration.proxy = None
    return client.ApiClient(configuration)


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:40].strip("-") or "test"


def _create_namespace(handle: dc.ClusterHandle, test_name: str, wait_for_default_sa: bool) -> Iterator[str]:
    from kubernetes import client

    api = api_client(handle)
    core: Any = client.CoreV1Api(api)  # the client's models are loosely typed; read them as data
    name = f"t-{_slug(test_name)}-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": name, "labels": {RUN_LABEL: RUN_ID}}})
    if wait_for_default_sa:
        def default_sa_exists() -> bool:
            return any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(name).items)

        wait_until(default_sa_exists, default_wait(handle), f"ServiceAccount default in namespace {name}")
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name, propagation_policy="Background")
        except client.ApiException as error:
            if error.status != 404:
                raise
        finally:
            api.close()


@pytest.fixture(scope="session")
def cluster() -> dc.ClusterHandle:
    """The minimal control plane (etcd + kube-apiserver), or the external cluster."""
    return CLUSTERS.get("minimal")


@pytest.fixture(scope="session")
def full_cluster() -> dc.ClusterHandle:
    """The full control plane (+ controllers, scheduler, kwok), started on first use only."""
    return CLUSTERS.get("full")


SPOKES = ("spoke-a", "spoke-b")
#: Started only by the tests that ask for four spokes (``four_spokes``).
MORE_SPOKES = ("spoke-c", "spoke-d")


def _spokes(keys: tuple[str, ...]) -> list[dc.ClusterHandle]:
    # Every spoke writes an audit log: it costs nothing measurable at start (about 3 s with or
    # without it), and a test may count the writes a spoke received (``audit_log``).
    return [CLUSTERS.get("minimal", key=spoke, audit=True) for spoke in keys]


@pytest.fixture(scope="session")
def spoke_clusters() -> list[dc.ClusterHandle]:
    """Two more minimal control planes, each its own etcd and kube-apiserver: the remote
    clusters a hub's ClusterProfiles deliver to (docs/devcluster.md#hub-and-spokes)."""
    return _spokes(SPOKES)


@pytest.fixture(scope="session")
def four_spokes(spoke_clusters: list[dc.ClusterHandle]) -> list[dc.ClusterHandle]:
    """``spoke_clusters`` and two more (``spoke-c``, ``spoke-d``), started by the first test that
    asks for four (docs/devcluster.md#hub-and-spokes)."""
    return [*spoke_clusters, *_spokes(MORE_SPOKES)]


def audit_log(handle: dc.ClusterHandle) -> Path:
    """The audit log of a session control plane started with ``audit`` (JSON lines, metadata level)."""
    if handle.run_dir is None:
        raise LookupError(f"{handle.name} has no run directory, so no audit log")
    return Path(handle.run_dir) / "logs" / "audit.log"


def control_plane(handle: dc.ClusterHandle) -> dc.ControlPlane:
    """The session's control plane behind ``handle`` (``stop_component``/``start_component``)."""
    return CLUSTERS.plane(handle)


def create_namespace_named(handle: dc.ClusterHandle, name: str) -> None:
    """Create namespace ``name`` on ``handle`` (a spoke gets the hub test namespace's name);
    labelled with the run, like the fixtures' namespaces. An existing one is kept."""
    from kubernetes import client

    api = api_client(handle)
    try:
        core: Any = client.CoreV1Api(api)
        try:
            core.create_namespace({"metadata": {"name": name, "labels": {RUN_LABEL: RUN_ID}}})
        except client.ApiException as error:
            if error.status != 409:
                raise
    finally:
        api.close()


@pytest.fixture
def namespace(cluster: dc.ClusterHandle, request: pytest.FixtureRequest) -> Iterator[str]:
    yield from _create_namespace(cluster, request.node.name, wait_for_default_sa=False)


@pytest.fixture
def full_namespace(full_cluster: dc.ClusterHandle, request: pytest.FixtureRequest) -> Iterator[str]:
    yield from _create_namespace(full_cluster, request.node.name, wait_for_default_sa=True)


@pytest.fixture
def kube_api(cluster: dc.ClusterHandle) -> Iterator[Any]:
    api = api_client(cluster)
    yield api
    api.close()


@pytest.fixture
def full_kube_api(full_cluster: dc.ClusterHandle) -> Iterator[Any]:
    api = api_client(full_cluster)
    yield api
    api.close()


# --------------------------------------------------------------------------------------------
# Hooks


CLUSTER_FIXTURES = {"cluster", "namespace", "kube_api", "spoke_clusters", "four_spokes"}
FULL_FIXTURES = {"full_cluster", "full_namespace", "full_kube_api"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & CLUSTER_FIXTURES:
            item.add_marker(pytest.mark.cluster)
        if names & FULL_FIXTURES:
            item.add_marker(pytest.mark.full_cluster)
        if item.get_closest_marker("requires_bare_apiserver") and (EXTERNAL_KUBECONFIG or names & FULL_FIXTURES):
            item.add_marker(pytest.mark.skip(reason="needs a bare API server (no controllers)"))


def _log_sizes() -> dict[str, dict[str, int]]:
    sizes: dict[str, dict[str, int]] = {}
    for profile, plane in CLUSTERS.planes.items():
        sizes[profile] = {}
        for component, path in plane.handle.log_paths.items():
            try:
                sizes[profile][component] = os.path.getsize(path)
            except OSError:
                sizes[profile][component] = 0
    return sizes


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    CLUSTERS.log_offsets[item.nodeid] = _log_sizes()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    if report.when == "teardown":
        CLUSTERS.log_offsets.pop(item.nodeid, None)
    if not report.failed:
        return
    CLUSTERS.failures += 1
    if not (set(getattr(item, "fixturenames", ())) & (CLUSTER_FIXTURES | FULL_FIXTURES)):
        return
    offsets = CLUSTERS.log_offsets.get(item.nodeid, {})
    for profile, plane in CLUSTERS.planes.items():
        wanted = ["kube-apiserver"] + (["kube-controller-manager", "kwok"] if profile == "full" else [])
        for component in wanted:
            path = plane.handle.log_paths.get(component)
            if not path:
                continue
            start = offsets.get(profile, {}).get(component, 0)
            try:
                with open(path, "rb") as handle:
                    handle.seek(start)
                    lines = handle.read().decode(errors="replace").splitlines()[-100:]
            except OSError:
                continue
            if lines:
                report.sections.append((f"{profile} {component} log during this test", "\n".join(lines)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if EXTERNAL_KUBECONFIG:
        _delete_labelled_namespaces()
    CLUSTERS.stop_all()
    # A process that started no control plane (xdist's controller, a worker of pure tests only)
    # has nothing to keep (docs/devcluster.md#parallel-workers).
    kept = any(RUN_ROOT.iterdir()) if RUN_ROOT.is_dir() else False
    if kept and (CLUSTERS.failures or exitstatus not in (0, 5)):
        sys.stderr.write(f"\n[devcluster] test run directory kept at {RUN_ROOT}\n")
    else:
        shutil.rmtree(RUN_ROOT, ignore_errors=True)


def _delete_labelled_namespaces() -> None:
    from kubernetes import client

    try:
        api = api_client(external_handle())
    except Exception:
        return
    core: Any = client.CoreV1Api(api)
    for ns in core.list_namespace(label_selector=f"{RUN_LABEL}={RUN_ID}").items:
        try:
            core.delete_namespace(ns.metadata.name, propagation_policy="Background")
        except client.ApiException as error:
            if error.status != 404:
                raise
    api.close()
