"""Where the helm binary built by ``build.sh --only helm`` is (like ``find_binaries`` for the
control plane): ``OAM_DEVCLUSTER_BIN_DIR/helm``, else ``<cache>/helm/v<HELM_VERSION>/bin/helm``
(``HELM_VERSION`` from ``versions.env``, overridden by ``OAM_DEVCLUSTER_HELM_VERSION``).

The chart tests run helm with its own cache/config/data directories (``helm_env``), so they
never read or write the user's ``~/.config/helm`` or ``~/.cache/helm``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .devcluster import BinariesMissing, cache_root, read_versions_file

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "oam-operator"
BUILD_COMMAND = "tools/devcluster/build.sh --only helm (or `make devcluster`)"


def helm_version() -> str:
    """The helm version in force: ``versions.env`` with the ``OAM_DEVCLUSTER_HELM_VERSION`` override."""
    pinned = read_versions_file().get("HELM_VERSION", "")
    return os.environ.get("OAM_DEVCLUSTER_HELM_VERSION", pinned).lstrip("v")


def find_helm() -> Path | None:
    """The helm binary, or ``None`` when it is not built."""
    bin_dir = os.environ.get("OAM_DEVCLUSTER_BIN_DIR")
    if bin_dir:
        candidate = Path(bin_dir) / "helm"
    else:
        version_dir = cache_root() / "helm" / f"v{helm_version()}"
        if not (version_dir / "BUILDINFO.json").is_file():
            return None
        candidate = version_dir / "bin" / "helm"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def require_helm() -> Path:
    """The helm binary; raises ``BinariesMissing`` naming the command that builds it."""
    found = find_helm()
    if found is None:
        where = os.environ.get("OAM_DEVCLUSTER_BIN_DIR") or str(cache_root() / "helm")
        raise BinariesMissing(f"helm v{helm_version()} is not built (looked in {where}); build it with {BUILD_COMMAND}")
    return found


def helm_env(home: Path, kubeconfig: str | None = None) -> dict[str, str]:
    """An environment for helm with its state under ``home`` (and ``KUBECONFIG`` when given)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HELM_")}
    env.pop("KUBECONFIG", None)
    for kind in ("CACHE", "CONFIG", "DATA"):
        path = home / kind.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[f"HELM_{kind}_HOME"] = str(path)
    if kubeconfig:
        env["KUBECONFIG"] = kubeconfig
    return env


def run_helm(helm: Path, args: Sequence[str], home: Path, *, kubeconfig: str | None = None,
             check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run helm with its state under ``home``; ``check`` raises ``HelmError`` with its output."""
    result = subprocess.run([str(helm), *args], env=helm_env(home, kubeconfig), capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    if check and result.returncode != 0:
        raise HelmError(f"helm {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


class HelmError(RuntimeError):
    """A helm command failed; the message carries its output."""


def template(helm: Path, home: Path, *, release: str = "oam", namespace: str = "oam-system",
             values: Mapping[str, Any] | None = None, extra: Sequence[str] = (), chart: Path = CHART) -> str:
    """``helm template`` of the chart with ``values`` (written to a file, so types survive)."""
    args = ["template", release, str(chart), "--namespace", namespace]
    if values:
        values_file = home / f"values-{release}-{len(list(home.glob('values-*.json')))}.json"
        home.mkdir(parents=True, exist_ok=True)
        values_file.write_text(json.dumps(values))
        args += ["--values", str(values_file)]
    return run_helm(helm, [*args, *extra], home).stdout


def render(helm: Path, home: Path, **kwargs: Any) -> list[dict[str, Any]]:
    """The objects ``template`` renders (empty documents dropped)."""
    import yaml

    return [doc for doc in yaml.safe_load_all(template(helm, home, **kwargs)) if doc]
