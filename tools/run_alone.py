"""pytest plugin: the ``run_alone`` marker, for the tests no other test may run beside
(docs/devcluster.md#a-test-that-must-run-alone).

``make test`` runs the suite in several pytest-xdist workers. A test that measures timing or an
audit-log ordering sensitive to CPU load, or that uses a host-wide resource (a fixed port, the
registry of every devcluster run), is marked ``run_alone``: while it runs (setup to teardown),
no other worker runs a test. The workers of one run share a readers-writer lock, two ``flock``
files named after xdist's run id: every test holds the main lock shared, a ``run_alone`` test holds
it exclusive. Taking the gate lock first, and keeping it while a ``run_alone`` test waits and runs,
stops new tests from starting meanwhile, so the waiting test is not starved. Without xdist (one
process) the plugin does nothing.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

MARKER = "run_alone"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: no other test runs on any xdist worker while this one does "
        "(docs/devcluster.md#a-test-that-must-run-alone)",
    )


def lock_dir(run_id: str) -> Path:
    """The lock files of one xdist run (its workers share ``run_id``)."""
    return Path(tempfile.gettempdir()) / f"oam-locks-{os.getuid()}-{run_id}"


class RunLock:
    """One worker's side of the run's readers-writer lock."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(mode=0o700, exist_ok=True)
        self._gate: IO[bytes] = open(directory / "gate", "ab")  # noqa: SIM115 - held for the session
        self._main: IO[bytes] = open(directory / "main", "ab")  # noqa: SIM115 - held for the session

    def hold(self, alone: bool) -> Iterator[None]:
        """Hold the lock around one test: exclusive when ``alone``, shared otherwise."""
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._main, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self._main, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)

    def close(self) -> None:
        self._gate.close()
        self._main.close()


_LOCK: list[RunLock] = []


def _run_lock(config: pytest.Config) -> RunLock | None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    if not _LOCK:
        _LOCK.append(RunLock(lock_dir(str(workerinput["testrunuid"]))))
    return _LOCK[0]


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    lock = _run_lock(item.config)
    if lock is None:
        yield
        return
    yield from lock.hold(alone=item.get_closest_marker(MARKER) is not None)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _LOCK:
        _LOCK.pop().close()
