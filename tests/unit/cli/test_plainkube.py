"""The kubeconfigs ``status`` serves on the standard library, and the ones it leaves to the client.

``read_plain_kubeconfig`` is pure file reading; a ``None`` means the caller falls back to the
Kubernetes client path unchanged (docs/operator.md#the-command-line).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from oam_operator.api.conditions import ConditionType
from oam_operator.cli import plainkube, statusview
from oam_operator.cli.plainkube import PlainKubeconfig, connect_plain, read_plain_kubeconfig
from oam_operator.controller.service.webhookcerts import issue

CERTS = issue(["127.0.0.1"], datetime.now(UTC))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def config(cluster: dict[str, Any] | None = None, user: dict[str, Any] | None = None, *,
           namespace: str | None = "team-a", name: str = "c") -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": cluster or {"server": "https://127.0.0.1:6443",
                                                           "certificate-authority-data": b64(CERTS.ca)}}],
        "users": [{"name": name, "user": {"token": "abc"} if user is None else user}],
        "contexts": [{"name": name, "context": context}],
    }


def write(path: Path, content: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(content))
    return str(path)


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "KUBECONFIG"):
        monkeypatch.delenv(key, raising=False)


def test_a_token_kubeconfig_with_ca_data(tmp_path: Path) -> None:
    assert read_plain_kubeconfig(write(tmp_path / "c", config())) == PlainKubeconfig(
        server="https://127.0.0.1:6443", namespace="team-a", ca_data=CERTS.ca.decode(), token="abc")


def test_the_namespace_defaults_to_default(tmp_path: Path) -> None:
    found = read_plain_kubeconfig(write(tmp_path / "c", config(namespace=None)))
    assert found is not None and found.namespace == "default"


def test_files_are_relative_to_their_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ca.pem").write_bytes(CERTS.ca)
    (tmp_path / "cert.pem").write_bytes(CERTS.cert)
    (tmp_path / "key.pem").write_bytes(CERTS.key)
    (tmp_path / "token").write_text("from-file\n")
    path = write(tmp_path / "c", config({"server": "https://127.0.0.1:6443", "certificate-authority": "ca.pem"},
                                        {"client-certificate": "cert.pem", "client-key": "key.pem",
                                         "tokenFile": "token"}))
    monkeypatch.chdir("/")
    found = read_plain_kubeconfig(path)
    assert found == PlainKubeconfig(server="https://127.0.0.1:6443", namespace="team-a", ca_data=CERTS.ca.decode(),
                                    cert_pem=CERTS.cert, key_pem=CERTS.key, token="from-file")
    conn = connect_plain(path)
    assert conn is not None and conn.tls is not None and (conn.namespace, conn.server) == ("team-a", found.server)


def test_client_certificate_data_and_insecure(tmp_path: Path) -> None:
    path = write(tmp_path / "c", config({"server": "https://127.0.0.1:6443/", "insecure-skip-tls-verify": True},
                                        {"client-certificate-data": b64(CERTS.cert),
                                         "client-key-data": b64(CERTS.key)}))
    found = read_plain_kubeconfig(path)
    assert found == PlainKubeconfig(server="https://127.0.0.1:6443", namespace="team-a", insecure=True,
                                    cert_pem=CERTS.cert, key_pem=CERTS.key)
    conn = connect_plain(path)
    assert conn is not None and conn.tls is not None and conn.tls.check_hostname is False


def test_context_flag_and_kubeconfig_list_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = config({"server": "http://127.0.0.1:1"}, namespace="one")
    first["contexts"].append({"name": "other", "context": {"cluster": "o", "user": "c", "namespace": "two"}})
    second = config({"server": "http://127.0.0.1:2"}, namespace="ignored")
    second["current-context"] = "other"
    second["clusters"].append({"name": "o", "cluster": {"server": "http://127.0.0.1:3"}})
    paths = [write(tmp_path / "a", first), str(tmp_path / "missing"), write(tmp_path / "b", second)]
    monkeypatch.setenv("KUBECONFIG", ":".join(paths))
    assert read_plain_kubeconfig() == PlainKubeconfig(server="http://127.0.0.1:1", namespace="one", token="abc")
    assert read_plain_kubeconfig(None, "other") == PlainKubeconfig(server="http://127.0.0.1:3", namespace="two",
                                                                   token="abc")


@pytest.mark.parametrize("cluster_entry, user", [
    ({"server": "https://127.0.0.1:6443"}, {}),  # no CA: the client uses certifi's bundle
    ({"server": "https://h", "insecure-skip-tls-verify": True, "proxy-url": "http://p:3128"}, {}),
    ({"server": "https://h", "insecure-skip-tls-verify": True, "tls-server-name": "k"}, {}),
    ({"server": "unix:///run/k.sock"}, {}),
    (None, {"exec": {"command": "aws", "apiVersion": "client.authentication.k8s.io/v1"}}),
    (None, {"auth-provider": {"name": "oidc"}}),
    (None, {"username": "u", "password": "p"}),
])
def test_anything_else_falls_back(tmp_path: Path, cluster_entry: dict[str, Any] | None, user: dict[str, Any]) -> None:
    assert read_plain_kubeconfig(write(tmp_path / "c", config(cluster_entry, user))) is None


def test_unreadable_or_incomplete_kubeconfigs_fall_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad").write_text("clusters: [")
    assert read_plain_kubeconfig(str(tmp_path / "bad")) is None
    assert read_plain_kubeconfig(str(tmp_path / "missing")) is None
    assert read_plain_kubeconfig(write(tmp_path / "c", config()), "nope") is None
    no_current = config()
    del no_current["current-context"]
    assert read_plain_kubeconfig(write(tmp_path / "n", no_current)) is None
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert read_plain_kubeconfig() is None  # no kubeconfig at all: in-cluster, the client's job


def test_a_broken_ca_falls_back_to_the_client_and_its_message(tmp_path: Path) -> None:
    path = write(tmp_path / "c", config({"server": "https://h", "certificate-authority-data": b64(b"not a pem")}))
    assert read_plain_kubeconfig(path) is not None
    assert connect_plain(path) is None


def test_a_proxy_from_the_environment_falls_back_unless_bypassed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "c", config())
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert read_plain_kubeconfig(path) is None
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert read_plain_kubeconfig(path) is not None


def test_the_ready_condition_type_matches_the_api() -> None:
    assert ConditionType.READY.value == statusview.READY_CONDITION
    assert plainkube.REQUEST_TIMEOUT == 30.0
