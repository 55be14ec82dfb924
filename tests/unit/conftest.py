"""The unit tier is pure: a test under tests/unit that asks for a control plane is a mistake
(it belongs in tests/integration), reported at collection instead of being run or skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parent


@pytest.hookimpl(trylast=True)  # after the devcluster plugin has marked the cluster tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    misplaced = [item.nodeid for item in items
                 if UNIT in Path(str(item.path)).resolve().parents
                 and (item.get_closest_marker("cluster") or item.get_closest_marker("full_cluster"))]
    if misplaced:
        raise pytest.UsageError("tests under tests/unit must not use a cluster: " + ", ".join(misplaced))
