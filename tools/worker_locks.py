"""pytest plugin: the tests no other test may run beside (docs/devcluster.md#tests-that-must-not-overlap).

``make test`` runs the suite in several pytest-xdist workers, one test module per worker at a time
(``--dist loadfile``). Two markers keep the tests that must not overlap apart:

- ``run_alone``: while the test runs (setup to teardown) no other worker runs a test. For a test
  that measures timing or an ordering sensitive to CPU load, or that uses state every run shares.
- ``exclusive(name)``: no other test marked ``exclusive`` with the same ``name`` runs meanwhile;
  the rest of the suite goes on. For tests of several modules that use one host resource (a
  fixed port).

The workers of one run share ``flock`` files named after xdist's run id. Every test holds the
``main`` lock shared, a ``run_alone`` test holds it exclusive; taking the ``gate`` lock first, and
keeping it while a ``run_alone`` test waits and runs, stops new tests from starting meanwhile,
so the waiting test is not starved. An ``exclusive`` test then takes its name's lock exclusive.
Without xdist (one process) the plugin does nothing.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import pytest

RUN_ALONE = "run_alone"
EXCLUSIVE = "exclusive"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{RUN_ALONE}: no other test runs on any xdist worker while this one does "
        "(docs/devcluster.md#tests-that-must-not-overlap)")
    config.addinivalue_line(
        "markers", f"{EXCLUSIVE}(name): no other test marked exclusive with this name runs meanwhile "
        "(docs/devcluster.md#tests-that-must-not-overlap)")
    if _is_controller(config) and config.getoption("testrunuid", None) is None:
        # The controller names the run, so that it can remove the run's lock files at its end.
        config.option.testrunuid = uuid.uuid4().hex


def _is_controller(config: pytest.Config) -> bool:
    """Whether this is xdist's controller process (it starts the workers, runs no test)."""
    return getattr(config, "workerinput", None) is None and bool(config.getoption("numprocesses", None))


def lock_dir(run_id: str) -> Path:
    """The lock files of one xdist run (its workers share ``run_id``)."""
    return Path(tempfile.gettempdir()) / f"oam-locks-{os.getuid()}-{run_id}"


def exclusive_name(item: pytest.Item) -> str | None:
    """The resource name of ``item``'s ``exclusive`` mark, or None; ValueError if it names none."""
    mark = item.get_closest_marker(EXCLUSIVE)
    if mark is None:
        return None
    if len(mark.args) != 1 or not isinstance(mark.args[0], str) or not re.fullmatch(r"[a-z0-9-]+", mark.args[0]):
        raise ValueError(f"{item.nodeid}: exclusive takes one name of [a-z0-9-]+, got {mark.args!r}")
    return mark.args[0]


class RunLock:
    """One worker's side of the run's locks."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(mode=0o700, exist_ok=True)
        self.directory = directory
        self._gate = self._open("gate")
        self._main = self._open("main")

    def _open(self, name: str) -> IO[bytes]:
        return open(self.directory / name, "ab")

    def hold(self, alone: bool, exclusive: str | None = None) -> Iterator[None]:
        """Hold the locks around one test: ``main`` exclusive when ``alone``, shared otherwise;
        then ``exclusive``'s own lock, if named."""
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._main, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(self._gate, fcntl.LOCK_UN)
        with ExitStack() as stack:
            stack.callback(self._release, alone)
            if exclusive is not None:
                resource = stack.enter_context(self._open(f"exclusive-{exclusive}"))
                fcntl.flock(resource, fcntl.LOCK_EX)  # released when the file closes
            yield

    def _release(self, alone: bool) -> None:
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
    try:
        exclusive = exclusive_name(item)
    except ValueError:
        exclusive = None  # pytest_runtest_setup fails the test with the message
    yield from lock.hold(alone=item.get_closest_marker(RUN_ALONE) is not None, exclusive=exclusive)


def pytest_runtest_setup(item: pytest.Item) -> None:
    try:
        exclusive_name(item)
    except ValueError as error:
        pytest.fail(str(error), pytrace=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _LOCK:
        _LOCK.pop().close()
    if _is_controller(config):
        shutil.rmtree(lock_dir(str(config.getoption("testrunuid"))), ignore_errors=True)
