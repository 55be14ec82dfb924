"""tools/worker_locks.py: the locks that keep run_alone and exclusive tests apart
(docs/devcluster.md#tests-that-must-not-overlap). Probes take the lock files non-blocking, so
no assertion waits on a clock."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.worker_locks import RunLock, lock_dir

ROOT = Path(__file__).resolve().parents[3]


def can_lock(path: Path, mode: int) -> bool:
    """Whether another holder could take ``path`` in ``mode`` right now."""
    with open(path, "ab") as handle:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def entered(hold: Iterator[None]) -> Iterator[None]:
    next(hold)
    return hold


def leave(hold: Iterator[None]) -> None:
    with pytest.raises(StopIteration):
        next(hold)


def test_tests_hold_the_main_lock_shared_and_a_run_alone_test_holds_it_exclusive(tmp_path: Path) -> None:
    first, second = RunLock(tmp_path), RunLock(tmp_path)
    one = entered(first.hold(alone=False))
    two = entered(second.hold(alone=False))
    assert can_lock(tmp_path / "main", fcntl.LOCK_SH)
    assert not can_lock(tmp_path / "main", fcntl.LOCK_EX)
    assert can_lock(tmp_path / "gate", fcntl.LOCK_EX)  # released once the shared lock is held
    leave(one)
    leave(two)

    alone = entered(first.hold(alone=True))
    assert not can_lock(tmp_path / "main", fcntl.LOCK_SH)
    assert not can_lock(tmp_path / "gate", fcntl.LOCK_EX)
    leave(alone)
    assert can_lock(tmp_path / "main", fcntl.LOCK_EX) and can_lock(tmp_path / "gate", fcntl.LOCK_EX)


def test_a_waiting_run_alone_test_keeps_new_tests_from_starting(tmp_path: Path) -> None:
    running, waiting = RunLock(tmp_path), RunLock(tmp_path)
    shared = entered(running.hold(alone=False))
    got_in = threading.Event()
    alone: list[Iterator[None]] = []

    def run_alone() -> None:
        alone.append(entered(waiting.hold(alone=True)))
        got_in.set()

    thread = threading.Thread(target=run_alone)
    thread.start()
    while can_lock(tmp_path / "gate", fcntl.LOCK_EX):  # until the waiting test holds the gate
        pass
    assert not got_in.is_set()  # the running test still holds the main lock
    assert not can_lock(tmp_path / "main", fcntl.LOCK_EX)
    leave(shared)
    thread.join()
    assert got_in.is_set()
    leave(alone[0])


def test_an_exclusive_name_is_held_by_one_test_and_other_names_stay_free(tmp_path: Path) -> None:
    held = entered(RunLock(tmp_path).hold(alone=False, exclusive="chart-ports"))
    assert not can_lock(tmp_path / "exclusive-chart-ports", fcntl.LOCK_EX)
    assert can_lock(tmp_path / "exclusive-other", fcntl.LOCK_EX)
    assert can_lock(tmp_path / "main", fcntl.LOCK_SH)  # the rest of the suite goes on
    leave(held)
    assert can_lock(tmp_path / "exclusive-chart-ports", fcntl.LOCK_EX)
    assert can_lock(tmp_path / "main", fcntl.LOCK_EX)


INNER_TESTS = textwrap.dedent("""
    import fcntl
    import pytest
    from tools.worker_locks import lock_dir

    def free(request, name, mode):
        path = lock_dir(request.config.workerinput["testrunuid"]) / name
        with open(path, "ab") as handle:
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

    def test_plain(request):
        print("RUN", request.config.workerinput["testrunuid"])
        assert free(request, "main", fcntl.LOCK_SH) and not free(request, "main", fcntl.LOCK_EX)

    @pytest.mark.run_alone
    def test_alone(request):
        assert not free(request, "main", fcntl.LOCK_SH)

    @pytest.mark.exclusive("ports")
    def test_exclusive(request):
        assert not free(request, "exclusive-ports", fcntl.LOCK_EX)

    @pytest.mark.exclusive("Not A Name")
    def test_bad_name():
        pass
""")


def test_the_plugin_holds_the_locks_around_each_test_of_an_xdist_worker(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "tools.worker_locks", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-q", "-rEP", "-o", "addopts=", "test_inner.py"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}, capture_output=True, text=True, timeout=120)
    assert "3 passed, 1 error" in result.stdout, result.stdout + result.stderr
    assert ("ERROR test_inner.py::test_bad_name - Failed: test_inner.py::test_bad_name: exclusive takes one name of [a-z0-9-]+, got ('Not A Name',)"
            in result.stdout)
    assert result.returncode == 1
    run_ids = {line.split()[-1] for line in result.stdout.splitlines() if line.startswith("RUN ")}
    assert len(run_ids) == 1 and not lock_dir(run_ids.pop()).exists()  # the controller removed them
