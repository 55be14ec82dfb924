"""Teardown, start failure, skip/fail and the CLI (docs/devcluster.md#teardown-and-stale-runs,
docs/devcluster.md#pytest-integration, docs/devcluster.md#the-devcluster-command)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tools import devcluster
from tools.devcluster import devcluster as dc

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[3]
CACHE = str(dc.cache_root())  # resolved before pytester points HOME at a temporary directory


@pytest.fixture(autouse=True)
def _pinned_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAM_DEVCLUSTER_CACHE", CACHE)


def _require_binaries(profile: str) -> None:
    missing = dc.find_binaries().missing(profile)
    if missing:
        message = f"devcluster binaries missing: {', '.join(missing)}; build them with `make devcluster`"
        if os.environ.get("OAM_REQUIRE_CLUSTER") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _assert_all_gone(components: list[dict[str, Any]], run_dir: str | None) -> None:
    for component in components:
        assert not dc.process_alive(component["pid"], component["start_time"]), component["name"]
        with pytest.raises(ProcessLookupError):
            os.killpg(component["pgid"], 0)
        assert dc.port_refuses(component["port"]), f"{component['name']} port {component['port']} still open"
    if run_dir is not None:
        assert not Path(run_dir).exists()


def test_stop_leaves_no_process_port_or_directory(tmp_path: Path) -> None:
    _require_binaries("minimal")
    plane = devcluster.start("minimal", run_dir=tmp_path / "run")
    components = [vars(c) for c in plane.components]
    assert [c["name"] for c in components] == ["etcd", "kube-apiserver"]
    assert all(dc.process_alive(c["pid"], c["start_time"]) for c in components)
    plane.stop()
    plane.stop()  # idempotent
    _assert_all_gone(components, str(tmp_path / "run"))


def test_a_bad_apiserver_flag_fails_start_with_its_log_and_leaves_nothing(tmp_path: Path) -> None:
    _require_binaries("minimal")
    began = time.monotonic()
    with pytest.raises(devcluster.StartupError) as failure:
        devcluster.start("minimal", run_dir=tmp_path / "run", extra_flags={"kube-apiserver": ["--no-such-flag=1"]})
    assert time.monotonic() - began < 30
    message = str(failure.value)
    assert "kube-apiserver exited with code" in message
    assert "unknown flag: --no-such-flag" in message
    state = json.loads((tmp_path / "run" / "state.json").read_text())  # kept after a failure
    _assert_all_gone(state["components"], None)


@pytest.mark.run_alone  # another worker starting a control plane would reap the dead owner's run first
def test_a_killed_owner_is_reaped(tmp_path: Path) -> None:
    _require_binaries("minimal")
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from tools import devcluster
        devcluster.start("minimal", run_dir={str(tmp_path / 'run')!r})
        print("started", flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "started"
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert all(dc.process_alive(c["pid"], c["start_time"]) for c in state["components"])
    reaped = devcluster.reap_stale()
    assert reaped == [str(tmp_path / "run")]
    _assert_all_gone(state["components"], str(tmp_path / "run"))


INNER_CONFTEST = "import tools.devcluster.pytest_plugin\npytest_plugins = ['tools.devcluster.pytest_plugin']\n"
INNER_TESTS = """
import json, os
from tools.devcluster.pytest_plugin import CLUSTERS

def test_first(cluster):
    plane = CLUSTERS.planes["minimal"]
    with open(os.environ["INNER_STATE"], "w") as f:
        json.dump({"components": [vars(c) for c in plane.components]}, f)
    assert False, "fails on purpose"

def test_second(cluster):
    raise KeyboardInterrupt
"""


def _inner_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OAM_REQUIRE_CLUSTER", "KUBECONFIG")}
    # TMPDIR inside tmp_path: an inner run that fails on purpose keeps its run root there, not in /tmp.
    env.update(INNER_STATE=str(tmp_path / "inner-state.json"), PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path), **extra)
    return env


def _run_inner(pytester: pytest.Pytester, tmp_path: Path, tests: str, **env: str) -> subprocess.CompletedProcess[str]:
    pytester.makeconftest(INNER_CONFTEST)
    path = pytester.makepyfile(test_inner=tests)
    return subprocess.run([sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", str(path)],
                          cwd=pytester.path, env=_inner_env(tmp_path, **env), capture_output=True, text=True,
                          timeout=300)


def test_an_interrupted_failing_run_leaves_no_process(pytester: pytest.Pytester, tmp_path: Path) -> None:
    _require_binaries("minimal")
    result = _run_inner(pytester, tmp_path, INNER_TESTS)
    assert "fails on purpose" in result.stdout
    assert "KeyboardInterrupt" in result.stdout + result.stderr
    state = json.loads((tmp_path / "inner-state.json").read_text())
    assert {c["name"] for c in state["components"]} == {"etcd", "kube-apiserver"}
    _assert_all_gone(state["components"], None)


SKIP_OR_FAIL_TESTS = """
def test_needs_cluster(cluster):
    pass
"""


def test_missing_binaries_skip_by_default_and_fail_when_required(pytester: pytest.Pytester, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    skipped = _run_inner(pytester, tmp_path, SKIP_OR_FAIL_TESTS, OAM_DEVCLUSTER_BIN_DIR=str(empty))
    assert "1 skipped" in skipped.stdout
    assert "devcluster binaries missing for profile minimal: etcd, kube-apiserver" in skipped.stdout + skipped.stderr
    required = _run_inner(pytester, tmp_path, SKIP_OR_FAIL_TESTS, OAM_DEVCLUSTER_BIN_DIR=str(empty),
                          OAM_REQUIRE_CLUSTER="1")
    assert required.returncode == 1
    assert "1 error" in required.stdout
    assert "devcluster binaries missing for profile minimal: etcd, kube-apiserver" in required.stdout


EXTERNAL_TESTS = """
import os
from kubernetes import client, config
from tools.devcluster.pytest_plugin import CLUSTERS

def test_external(cluster, namespace, kube_api):
    assert cluster.profile == "external"
    assert config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION == os.environ["OAM_TEST_KUBECONFIG"]
    client.CoreV1Api(kube_api).create_namespaced_config_map(namespace, {"metadata": {"name": "x"}})
    assert CLUSTERS.planes == {}  # started no control plane of its own
"""


def test_cli_round_trip_and_external_mode(tmp_path: Path) -> None:
    _require_binaries("full")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}
    cli = [sys.executable, "-m", "tools.devcluster"]

    def run(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, **kwargs)

    state_dir = tmp_path / "xdg" / f"oam-devcluster-{os.getuid()}" / "clusters" / "ci-cli"
    up = run("up", "--profile", "full", "--name", "ci-cli")
    assert up.returncode == 0, up.stderr
    assert 'eval "$(python -m tools.devcluster env --name ci-cli)"' in up.stderr
    try:
        assert run("up", "--profile", "full", "--name", "ci-cli").returncode == 1  # refuses a running name
        status = run("status", "--name", "ci-cli", "--json")
        assert status.returncode == 0, status.stdout + status.stderr
        report = json.loads(status.stdout)
        assert report["profile"] == "full" and report["readyz"] is True
        assert report["nodes_ready"] == {"devcluster-node-0": True}
        exports = run("env", "--name", "ci-cli").stdout
        kubeconfig = run("kubeconfig", "--name", "ci-cli").stdout.strip()
        assert f"export KUBECONFIG={kubeconfig}" in exports
        nodes = subprocess.run(["bash", "-c", f"{exports}\nkubectl get nodes --no-headers"], env=env,
                               capture_output=True, text=True, timeout=60)
        assert nodes.returncode == 0, nodes.stderr
        assert nodes.stdout.split()[:2] == ["devcluster-node-0", "Ready"]
        state = json.loads((state_dir / "state.json").read_text())
        inner = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(_write_external_tests(tmp_path))],
            cwd=ROOT, env={**_inner_env(tmp_path), "OAM_TEST_KUBECONFIG": kubeconfig}, capture_output=True,
            text=True, timeout=300)
        assert "1 passed" in inner.stdout, inner.stdout + inner.stderr
    finally:
        down = run("down", "--name", "ci-cli")
    assert down.returncode == 0, down.stderr
    _assert_all_gone(state["components"], str(state_dir))


def _write_external_tests(tmp_path: Path) -> Path:
    directory = tmp_path / "external"
    directory.mkdir()
    (directory / "conftest.py").write_text(INNER_CONFTEST)
    (directory / "test_external.py").write_text(EXTERNAL_TESTS)
    return directory

