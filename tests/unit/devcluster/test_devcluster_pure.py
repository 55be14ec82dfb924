"""Pure parts of tools/devcluster (unit tier): no control plane needed
(docs/devcluster.md#the-kubernetes-module-and-its-staging-replaces, docs/devcluster.md#the-control-plane-library)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tools.devcluster import devcluster as dc
from tools.devcluster import gomod, pki

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(("version", "count", "godebug"), [("1.35.4", 31, "go1.25"), ("1.37.2", 33, "go1.26")])
def test_gomod_derives_one_version_replace_per_staging_module(version: str, count: int, godebug: str) -> None:
    upstream = json.loads((DATA / f"kubernetes-v{version}.go.mod.json").read_text())
    edits = gomod.derive_replaces(upstream, version)
    assert len(edits) == count
    minor, patch = version.split(".")[1:]
    assert f"k8s.io/api=k8s.io/api@v0.{minor}.{patch}" in edits
    assert all(edit.startswith("k8s.io/") and edit.endswith(f"@v0.{minor}.{patch}") for edit in edits)
    if version == "1.37.2":
        assert "k8s.io/cri-streaming=k8s.io/cri-streaming@v0.37.2" in edits
        assert "k8s.io/streaming=k8s.io/streaming@v0.37.2" in edits
    assert gomod.godebug_lines(upstream) == [f"default={godebug}"]


def test_gomod_copies_version_pins_and_refuses_other_directories() -> None:
    pinned = {"Replace": [{"Old": {"Path": "example.com/x"}, "New": {"Path": "example.com/y", "Version": "v1.2.3"}}]}
    assert gomod.derive_replaces(pinned, "1.37.2") == ["example.com/x=example.com/y@v1.2.3"]
    local = {"Replace": [{"Old": {"Path": "k8s.io/foo"}, "New": {"Path": "../foo"}}]}
    with pytest.raises(gomod.GoModError, match=r"replace 1: k8s.io/foo => \.\./foo is a local directory"):
        gomod.derive_replaces(local, "1.37.2")
    with pytest.raises(gomod.GoModError, match="has no replace directives"):
        gomod.derive_replaces({"Replace": None}, "1.37.2")
    with pytest.raises(gomod.GoModError, match="not a Kubernetes release version"):
        gomod.staging_version("2.0")


def test_gomod_cli_prints_replace_and_godebug_arguments(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "tools/devcluster/gomod.py", "replaces",
                             str(DATA / "kubernetes-v1.37.2.go.mod.json"), "1.37.2"],
                            capture_output=True, text=True, check=True, cwd=Path(__file__).parents[3])
    lines = result.stdout.splitlines()
    assert lines[0] == "-replace=k8s.io/api=k8s.io/api@v0.37.2"
    assert lines[-1] == "-godebug=default=go1.26"
    assert len(lines) == 34


def _ports(profile: str) -> dict[str, int]:
    return {name: 20000 + i for i, name in enumerate(dc.port_names(profile))}


def test_minimal_flags_are_envtest_like_and_loopback_only(tmp_path: Path) -> None:
    flags = dc.component_flags("minimal", tmp_path, _ports("minimal"), "0", audit=False)
    assert set(flags) == {"etcd", "kube-apiserver"}
    api = flags["kube-apiserver"]
    assert "--disable-admission-plugins=ServiceAccount" in api
    assert "--advertise-address=127.0.0.1" in api and "--bind-address=127.0.0.1" in api
    assert "--endpoint-reconciler-type=none" in api
    assert "--service-cluster-ip-range=10.96.0.0/16" in api
    assert "--etcd-servers=http://127.0.0.1:20000" in api
    assert not any(flag.startswith("--audit") for flag in api)
    assert "--initial-cluster=devcluster=http://127.0.0.1:20001" in flags["etcd"]
    assert "--unsafe-no-fsync=true" in flags["etcd"]
    for flag in [*flags["etcd"], *api]:
        assert "0.0.0.0" not in flag


def test_full_flags_add_controllers_scheduler_and_kwok(tmp_path: Path) -> None:
    flags = dc.component_flags("full", tmp_path, _ports("full"), "2", audit=True)
    assert set(flags) == {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}
    assert "--disable-admission-plugins=TaintNodesByCondition" in flags["kube-apiserver"]
    assert f"--audit-log-path={tmp_path / 'logs' / 'audit.log'}" in flags["kube-apiserver"]
    controllers = next(f for f in flags["kube-controller-manager"] if f.startswith("--controllers="))
    assert "*" not in controllers
    assert "garbage-collector-controller" in controllers.split("=")[1].split(",")
    assert "--leader-elect=false" in flags["kube-scheduler"]
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in flags["kwok"]
    assert "--v=2" in flags["kube-controller-manager"]


def test_certificates_have_the_specified_sans_and_identities(tmp_path: Path) -> None:
    generated = pki.generate(tmp_path / "pki")
    serving = x509.load_pem_x509_certificate(generated.serving.cert_pem)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "10.96.0.1"}
    assert set(sans.get_values_for_type(x509.DNSName)) == set(pki.SERVING_DNS_NAMES)
    assert serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == x509.ExtendedKeyUsage(
        [ExtendedKeyUsageOID.SERVER_AUTH])
    for stem, common_name in pki.CLIENT_IDENTITIES.items():
        cert = x509.load_pem_x509_certificate(generated.clients[stem].cert_pem)
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == common_name
        assert cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
        ca = x509.load_pem_x509_certificate(generated.ca.cert_pem)
        cert.verify_directly_issued_by(ca)
    assert (tmp_path / "pki" / "sa.key").read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert (tmp_path / "pki" / "sa.pub").read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    assert oct((tmp_path / "pki" / "client-admin.key").stat().st_mode & 0o777) == "0o600"


def test_kubeconfig_is_self_contained() -> None:
    document = dc.kubeconfig_document("demo", "https://127.0.0.1:6443", b"CA", b"CERT", b"KEY", "devcluster-admin")
    assert document["current-context"] == "oam-devcluster-demo"
    cluster = document["clusters"][0]["cluster"]
    ca_data = base64.b64encode(b"CA").decode()
    assert cluster == {"server": "https://127.0.0.1:6443", "certificate-authority-data": ca_data}
    user = document["users"][0]["user"]
    assert base64.b64decode(user["client-key-data"]) == b"KEY"


def test_process_identity_detects_pid_reuse() -> None:
    me = os.getpid()
    start = dc.process_start_time(me)
    assert start is not None
    assert dc.same_process(me, start) and dc.process_alive(me, start)
    assert not dc.same_process(me, start + 1)
    assert not dc.same_process(me, None)
    child = subprocess.Popen(["true"])
    child.wait()
    assert dc.process_start_time(child.pid) is None


def test_versions_env_is_readable_by_python_and_overridable(monkeypatch: pytest.MonkeyPatch) -> None:
    pins = dc.read_versions_file()
    assert pins["K8S_FALLBACKS"] == "1.36.3 1.35.4 1.34.4"
    monkeypatch.setenv("OAM_DEVCLUSTER_K8S_VERSION", "v1.36.3")
    assert dc.pinned_versions()["kubernetes"] == "1.36.3"


def test_missing_binaries_name_what_and_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OAM_DEVCLUSTER_BIN_DIR", str(tmp_path))
    with pytest.raises(dc.BinariesMissing) as missing:
        dc.require_binaries("full")
    assert str(missing.value).startswith(
        "devcluster binaries missing for profile full: etcd, kube-apiserver, kube-controller-manager, "
        "kube-scheduler, kwok")
    assert "make devcluster" in str(missing.value)


def test_build_script_without_go_exits_2_with_the_message(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(["/bin/bash", "tools/devcluster/build.sh"], env=env, capture_output=True, text=True,
                            cwd=Path(__file__).parents[3])
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "devcluster: Go not found on PATH. Install Go 1.26 or newer (the project uses 1.26.8) and make sure "
        "the Go module proxy is reachable (go env GOPROXY).")


@pytest.mark.parametrize(("args", "message"), [
    (["--only", "prometheus"], "devcluster: --only takes kubernetes, etcd, kwok, helm or promtool"),
    (["--only", "promtool", "--promtool-version", "3.16.0"],
     "devcluster: --promtool-version is the Go module version of github.com/prometheus/prometheus (0.316.0 for "
     "Prometheus 3.16.0), not 3.16.0"),
])
def test_build_script_refuses_a_bad_promtool_request(tmp_path: Path, args: list[str], message: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run(["/bin/bash", "tools/devcluster/build.sh", *args], env=env, capture_output=True,
                            text=True, cwd=Path(__file__).parents[3])
    assert (result.returncode, result.stderr.strip()) == (2, message)


def test_promtool_is_found_by_version_and_named_when_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.devcluster import promtool

    monkeypatch.delenv("OAM_DEVCLUSTER_BIN_DIR", raising=False)
    monkeypatch.setenv("OAM_DEVCLUSTER_CACHE", str(tmp_path))
    monkeypatch.setenv("OAM_DEVCLUSTER_PROMTOOL_VERSION", "v0.54.1")
    assert promtool.promtool_version() == "0.54.1"
    with pytest.raises(dc.BinariesMissing) as missing:
        promtool.require_promtool()
    assert str(missing.value) == (
        f"promtool v0.54.1 is not built (looked in {tmp_path / 'promtool'}); build it with "
        "tools/devcluster/build.sh --only promtool (or `make devcluster`)")
    built = tmp_path / "promtool" / "v0.54.1"
    (built / "bin").mkdir(parents=True)
    (built / "bin" / "promtool").write_text("#!/bin/sh\n")
    (built / "bin" / "promtool").chmod(0o755)
    assert promtool.find_promtool() is None  # no BUILDINFO.json: an unfinished build
    (built / "BUILDINFO.json").write_text("{}")
    assert promtool.find_promtool() == built / "bin" / "promtool"
