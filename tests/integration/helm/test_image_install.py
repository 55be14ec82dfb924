"""The Dockerfile's builder steps, run here (operator.md §13). No container engine exists on the
project's machines, so this test interprets the builder stage of the Dockerfile itself — its
ENV, ARG, WORKDIR, COPY and RUN instructions, in order — against a fresh directory: a virtual
environment from the hash-pinned requirements.lock (`pip install --require-hashes --no-deps`,
packages from PyPI), then the project wheel with `--no-deps`. The result must run
`oam-operator --version`, have no broken or missing requirement, hold exactly the locked
distributions, and write nothing into the environment when it runs (read-only root filesystem).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The Dockerfile reader of the unit tests, loaded by path (this directory is not on sys.path there).
_SPEC = importlib.util.spec_from_file_location("image_dockerfilekit",
                                               ROOT / "tests" / "unit" / "helm" / "dockerfilekit.py")
assert _SPEC is not None and _SPEC.loader is not None
dockerfilekit = sys.modules.setdefault("image_dockerfilekit", importlib.util.module_from_spec(_SPEC))
_SPEC.loader.exec_module(dockerfilekit)


def commit_time() -> str:
    result = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True,
                            check=False)
    return result.stdout.strip() or "0"


def run_builder_stage(tmp: Path) -> tuple[Path, dict[str, str]]:
    """Interpret the builder stage with / mapped to ``tmp``; returns the venv and the environment."""
    stage = dockerfilekit.parse(ROOT / "Dockerfile").stage("builder")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(getattr(sys, "_base_executable", sys.executable))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_FIND_LINKS", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    workdir = tmp
    for keyword, rest in stage.instructions:
        if keyword == "ENV":
            for assignment in shlex.split(rest):
                name, _, value = assignment.partition("=")
                env[name] = str(tmp) + value if value.startswith("/") else value
        elif keyword == "ARG":
            name, _, default = rest.partition("=")
            env[name] = commit_time() if name == "SOURCE_DATE_EPOCH" else default
        elif keyword == "WORKDIR":
            workdir = tmp / rest.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif keyword == "COPY":
            *sources, destination = rest.split()
            target = workdir / destination
            target.mkdir(parents=True, exist_ok=True)
            for source in sources:
                path = ROOT / source.rstrip("/")
                if path.is_dir():
                    shutil.copytree(path, target, dirs_exist_ok=True,
                                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".*.tmp"))
                else:
                    shutil.copy2(path, target / path.name)
        elif keyword == "RUN":
            result = subprocess.run(["sh", "-c", rest], cwd=workdir, env=env, capture_output=True, text=True,
                                    timeout=900, check=False)
            assert result.returncode == 0, f"RUN {rest}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        else:
            raise AssertionError(f"the test does not know how to run {keyword} {rest}")
    return Path(env["VENV"]), env


def locked_names() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and line[0].isalnum() and "==" in line:
            names.add(line.split("==")[0].lower().replace("_", "-"))
    return names


def snapshot(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")}


def test_the_dockerfile_builder_steps_produce_a_working_environment(tmp_path: Path) -> None:
    venv, env = run_builder_stage(tmp_path)
    runtime_env = {**env, "PATH": f"{venv / 'bin'}:{env['PATH']}", "PYTHONDONTWRITEBYTECODE": "1",
                   "PYTHONUNBUFFERED": "1"}

    def run(*command: str) -> str:
        result = subprocess.run(list(command), env=runtime_env, capture_output=True, text=True, cwd=tmp_path,
                                check=False, timeout=300)
        assert result.returncode == 0, f"{command}: {result.stdout}{result.stderr}"
        return result.stdout

    before = snapshot(venv)
    assert run(str(venv / "bin" / "oam-operator"), "--version").strip() == "oam-operator, version 0.1.0"
    run(str(venv / "bin" / "python"), "-c", "import kopf, kubernetes, networkx, pydantic, prometheus_client, yaml; "
        "import oam_operator.controller.main, oam_operator.reconciler.reconciler")
    built = run(str(venv / "bin" / "oam-operator"), "build", str(ROOT / "examples" / "shop.yaml"))
    assert "kind: Deployment" in built
    assert snapshot(venv) == before, "running the operator wrote into its environment"

    # The environment has no pip of its own any more: inspect it with this interpreter's pip.
    assert not (venv / "bin" / "pip").exists()
    inspect = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    assert "No broken requirements found." in run(*inspect, "check")
    installed = {d["name"].lower().replace("_", "-") for d in json.loads(run(*inspect, "list", "--format", "json"))}
    assert installed == (locked_names() - {"setuptools", "wheel"}) | {"oam-operator"}

    site = next((venv / "lib").glob("python3*/site-packages"))
    assert list((site / "oam_operator" / "__pycache__").glob("cli.*.pyc")), "the project was not compiled"
    assert list((site / "kubernetes" / "client" / "__pycache__").glob("__init__.*.pyc"))
    assert not list((site / "kubernetes" / "aio").rglob("*.pyc")), "never-imported code was compiled"
