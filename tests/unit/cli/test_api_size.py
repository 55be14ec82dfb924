"""What the API server refuses for an Application's size (docs/operator.md#the-size-the-api-server-accepts):
``build`` and ``diff`` warn, ``rbac`` and admission refuse, naming the size and the limit, word for word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from oam_operator.cli import main
from oam_operator.common.apisize import (
    ANNOTATION_LIMIT,
    API_BODY_LIMIT,
    OBJECT_LIMIT,
    annotation_warning,
    application_bytes,
    too_large,
)


def application(padding: int) -> dict[str, Any]:
    """An Application of one ConfigMap whose data holds ``padding`` characters."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"blob": "x" * padding}}
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "big", "namespace": "team-a"},
            "spec": {"components": [{"name": "big", "type": "passthrough", "properties": {"object": config}}]}}


def write(tmp_path: Path, padding: int) -> tuple[Path, int]:
    body = application(padding)
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(body, width=10**9))
    return path, application_bytes(body)


def too_large_text(size: int) -> str:
    return (f"The Application is {size} bytes as JSON; the API server stores at most 1572864 bytes in one object "
            "(etcd's request limit, 1.5 MiB) and refuses it: split it into several Applications, or read its "
            "manifests from a URL source")


def annotation_text(size: int) -> str:
    return (f"The Application is {size} bytes as JSON; client-side `kubectl apply` refuses it (its "
            "last-applied-configuration annotation may hold at most 262144 bytes): apply it with "
            "`kubectl apply --server-side`, or read its manifests from a URL source")


def test_the_limits_and_the_size_as_stored() -> None:
    assert (OBJECT_LIMIT, API_BODY_LIMIT, ANNOTATION_LIMIT) == (1_572_864, 3_145_728, 262_144)
    body = {**application(10), "status": {"anything": "x" * 1000}}
    assert application_bytes(body) == len(json.dumps(application(10), separators=(",", ":")).encode())
    assert too_large(OBJECT_LIMIT) is None and too_large(OBJECT_LIMIT + 1) == too_large_text(OBJECT_LIMIT + 1)
    assert annotation_warning(ANNOTATION_LIMIT) is None
    assert annotation_warning(ANNOTATION_LIMIT + 1) == annotation_text(ANNOTATION_LIMIT + 1)


def test_build_warns_of_the_annotation_and_of_the_object_limit(tmp_path: Path) -> None:
    path, size = write(tmp_path, 300_000)
    result = CliRunner().invoke(main, ["build", str(path)])
    assert result.exit_code == 0 and "kind: ConfigMap" in result.stdout
    assert result.stderr == f"warning: {annotation_text(size)}\n"
    path, size = write(tmp_path, 1_600_000)
    result = CliRunner().invoke(main, ["build", str(path)])
    assert result.exit_code == 0 and result.stderr == f"warning: {too_large_text(size)}\n"
    path, size = write(tmp_path, 1000)
    result = CliRunner().invoke(main, ["build", str(path)])
    assert (result.exit_code, result.stderr) == (0, "")


def test_rbac_refuses_what_the_api_server_cannot_store_and_warns_of_the_annotation(tmp_path: Path) -> None:
    path, size = write(tmp_path, 1_600_000)
    result = CliRunner().invoke(main, ["rbac", str(path)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {path}: {too_large_text(size)}\n"
    path, size = write(tmp_path, 300_000)
    result = CliRunner().invoke(main, ["rbac", str(path)])
    assert result.exit_code == 0 and result.stderr == f"warning: {annotation_text(size)}\n"
    assert [d["kind"] for d in yaml.safe_load_all(result.stdout) if d] == ["Role", "RoleBinding"]


def test_diff_warns_when_it_reads_the_file(tmp_path: Path, capsys: Any) -> None:
    from types import SimpleNamespace

    from oam_operator.cli.diff import _load_target

    path, _ = write(tmp_path, 1_600_000)
    body, namespace = _load_target(str(path), None, SimpleNamespace(namespace="default"))
    assert namespace == "team-a"
    assert capsys.readouterr().err == f"warning: {too_large_text(application_bytes(body))}\n"
