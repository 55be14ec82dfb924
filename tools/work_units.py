"""pytest plugin: how ``make test`` splits the suite among pytest-xdist workers
(docs/devcluster.md#parallel-workers).

With ``--dist loadgroup`` xdist keeps the tests of one ``xdist_group`` on one worker and spreads
every other test one by one. This plugin gives each test without an ``xdist_group`` mark its
module as group, so a module stays on one worker (its module-scoped fixtures, an operator or a
control plane of its own, start once) and the modules that share a host resource (a fixed port)
can name one group across files: ``pytest.mark.xdist_group("chart-ports")``.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("dist", default=None) != "loadgroup":
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
