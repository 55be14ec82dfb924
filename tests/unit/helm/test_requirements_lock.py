"""requirements.lock pins every dependency of pyproject.toml (and the build backend) with hashes."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def locked() -> dict[str, tuple[Version, list[str]]]:
    text = (ROOT / "requirements.lock").read_text()
    entries: dict[str, tuple[Version, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        lines = [line.strip().rstrip("\\").strip() for line in block.splitlines()
                 if line.strip() and not line.strip().startswith("#")]
        if not lines:
            continue
        head = lines[0]
        assert not head.startswith("-"), f"option line in the lock: {head} (machine-specific?)"
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", head)
        assert match, f"not an exact pin: {head}"
        hashes = [line.removeprefix("--hash=") for line in lines[1:]]
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), head
        entries[canonicalize_name(match.group(1))] = (Version(match.group(2)), hashes)
    return entries


def test_every_runtime_dependency_is_locked_within_its_range() -> None:
    entries = locked()
    for spec in PYPROJECT["project"]["dependencies"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{requirement.name} is not in requirements.lock"
        assert entries[name][0] in requirement.specifier, (
            f"requirements.lock pins {name}=={entries[name][0]}, outside {requirement.specifier}; regenerate it")


def test_the_build_backend_is_locked_too() -> None:
    entries = locked()
    for spec in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(spec)
        assert canonicalize_name(requirement.name) in entries
        assert entries[canonicalize_name(requirement.name)][0] in requirement.specifier


def test_no_development_dependency_is_locked() -> None:
    entries = locked()
    for spec in PYPROJECT["project"]["optional-dependencies"]["dev"]:
        name = canonicalize_name(Requirement(spec).name)
        if name not in {canonicalize_name(Requirement(s).name) for s in PYPROJECT["project"]["dependencies"]}:
            assert name not in entries, f"development dependency {name} in requirements.lock"
