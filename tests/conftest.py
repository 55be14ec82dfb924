"""Shared test configuration.

The devcluster plugin must be imported first: it sets KUBECONFIG before anything imports
the ``kubernetes`` package (docs/devcluster.md#pytest-integration).
"""

import tools.devcluster.pytest_plugin  # noqa: F401  (first statement: sets KUBECONFIG)

pytest_plugins = ["tools.devcluster.pytest_plugin", "tools.worker_locks"]
