"""Where the promtool binary built by ``build.sh --only promtool`` is (like ``helm.py``):
``OAM_DEVCLUSTER_BIN_DIR/promtool``, else ``<cache>/promtool/v<PROMTOOL_VERSION>/bin/promtool``
(``PROMTOOL_VERSION`` from ``versions.env``, overridden by ``OAM_DEVCLUSTER_PROMTOOL_VERSION``).

The chart tests run ``promtool check rules`` on the rendered alert rules and the e2e test of the
alerts ``promtool test rules`` on series scraped from the operator (docs/chart.md#alerts-and-dashboard).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .devcluster import BinariesMissing, cache_root, read_versions_file

BUILD_COMMAND = "tools/devcluster/build.sh --only promtool (or `make devcluster`)"


def promtool_version() -> str:
    """The promtool module version in force: ``versions.env`` with ``OAM_DEVCLUSTER_PROMTOOL_VERSION``."""
    pinned = read_versions_file().get("PROMTOOL_VERSION", "")
    return os.environ.get("OAM_DEVCLUSTER_PROMTOOL_VERSION", pinned).lstrip("v")


def find_promtool() -> Path | None:
    """The promtool binary, or ``None`` when it is not built."""
    bin_dir = os.environ.get("OAM_DEVCLUSTER_BIN_DIR")
    if bin_dir:
        candidate = Path(bin_dir) / "promtool"
    else:
        version_dir = cache_root() / "promtool" / f"v{promtool_version()}"
        if not (version_dir / "BUILDINFO.json").is_file():
            return None
        candidate = version_dir / "bin" / "promtool"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def require_promtool() -> Path:
    """The promtool binary; raises ``BinariesMissing`` naming the command that builds it."""
    found = find_promtool()
    if found is None:
        where = os.environ.get("OAM_DEVCLUSTER_BIN_DIR") or str(cache_root() / "promtool")
        raise BinariesMissing(
            f"promtool v{promtool_version()} is not built (looked in {where}); build it with {BUILD_COMMAND}")
    return found


def run_promtool(promtool: Path, args: Sequence[str], *, cwd: Path | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run promtool; the caller reads ``returncode``, ``stdout`` and ``stderr`` (its findings)."""
    return subprocess.run([str(promtool), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          stdin=subprocess.DEVNULL, check=False)
