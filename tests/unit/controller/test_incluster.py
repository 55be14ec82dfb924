"""In a Pod the operator connects to KUBERNETES_SERVICE_HOST/PORT with the mounted ServiceAccount."""

from __future__ import annotations

from pathlib import Path

import pytest

from oam_operator.controller.service.incluster import api_server_url, connection_info, in_cluster


def token_dir(tmp_path: Path) -> Path:
    (tmp_path / "token").write_text("tok-1\n")
    (tmp_path / "ca.crt").write_text("PEM")
    (tmp_path / "namespace").write_text("oam-system")
    return tmp_path


def test_outside_a_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert not in_cluster(token_dir(tmp_path))  # a token alone is not a Pod
    assert connection_info(None, tmp_path) is None
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    assert not in_cluster(tmp_path / "missing")  # nor is the environment alone


def test_in_a_pod_the_service_address_and_the_mounted_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    info = connection_info(None, token_dir(tmp_path))
    assert info is not None
    assert (info.server, info.token, info.ca_path, info.default_namespace) == (
        "https://10.96.0.1:6443", "tok-1", str(tmp_path / "ca.crt"), "oam-system")
    (tmp_path / "token").write_text("tok-2")  # rotated by the kubelet: read again at the next login
    assert connection_info(None, tmp_path).token == "tok-2"  # type: ignore[union-attr]


def test_ipv6_service_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    assert api_server_url() == "https://[fd00::1]:443"
