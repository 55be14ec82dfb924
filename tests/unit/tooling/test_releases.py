"""releases.json, the list the upgrade test starts from (docs/chart.md#upgrades): versions in
ascending order, each with a full commit id of this repository's history, none newer than this
tree's version."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from oam_operator import __version__

ROOT = Path(__file__).resolve().parents[3]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def releases() -> list[dict[str, str]]:
    found: list[dict[str, str]] = json.loads((ROOT / "releases.json").read_text())["releases"]
    return found


def test_releases_are_ascending_with_full_commit_ids() -> None:
    listed = releases()
    assert listed, "releases.json lists no release"
    for release in listed:
        assert set(release) == {"version", "commit"}
        assert re.fullmatch(r"\d+\.\d+\.\d+", release["version"]), release
        assert re.fullmatch(r"[0-9a-f]{40}", release["commit"]), release
    keys = [version_key(r["version"]) for r in listed]
    assert keys == sorted(set(keys))
    assert keys[-1] <= version_key(__version__)


def test_every_release_commit_is_in_this_repositorys_history() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for release in releases():
        found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-t", release["commit"]],
                               capture_output=True, text=True, check=False)
        assert found.stdout.strip() == "commit", (release, found.stderr)
