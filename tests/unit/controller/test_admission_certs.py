"""The webhook's self-signed certificate (controller/service/webhookcerts.py), on a fixed clock.

The issuing and renewal rules are pure and tested directly; ``CertificateKeeper`` is driven
against a small in-memory Secret store with the API server's resourceVersion rule (create
conflicts with an existing name, an update at a stale version conflicts), which is all it
relies on; tests/e2e/test_admission_e2e.py runs it against the real API server.
"""

from __future__ import annotations

import base64
import copy
import ssl
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from oam_operator.controller.service.webhookcerts import (
    RENEW_BEFORE,
    VALIDITY,
    CertificateKeeper,
    CertificateSet,
    from_secret,
    issue,
    problem,
)
from oam_operator.reconciler.errors import ApiError

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOSTS = ["oam-webhook.oam-system.svc", "127.0.0.1"]
SECRET = "/api/v1/namespaces/oam-system/secrets/oam-webhook-tls"


def _error(status: int) -> ApiError:
    return ApiError(f"HTTP {status}", status=status, reason="", verb="x")


class SecretStore:
    """Secrets by path, with resourceVersions; ``before_write`` lets a test race another writer."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0
        self.writes = 0
        self.before_write: Any = None

    def request(self, verb: str, method: str, path: str, *, body: Any = None, **_: Any) -> Any:
        if method == "GET":
            if path not in self.objects:
                raise _error(404)
            return copy.deepcopy(self.objects[path])
        if self.before_write is not None:
            hook, self.before_write = self.before_write, None
            hook()
        if method == "POST":
            path = f"{path}/{body['metadata']['name']}"
            if path in self.objects:
                raise _error(409)
        elif self.objects[path]["metadata"]["resourceVersion"] != body["metadata"].get("resourceVersion"):
            raise _error(409)  # PUT at a stale version
        self.version += 1
        self.writes += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.objects[path] = stored
        return stored


def keeper(store: SecretStore, tmp_path: Path, now: datetime, hosts: list[str] = HOSTS) -> CertificateKeeper:
    return CertificateKeeper(store, "oam-system/oam-webhook-tls", hosts, tmp_path, clock=lambda: now)  # type: ignore[arg-type]


def test_an_issued_certificate_serves_tls_for_its_hosts_and_chains_to_the_bundle(tmp_path: Path) -> None:
    certs = issue(HOSTS, NOW)
    assert problem(certs, HOSTS, NOW) is None
    cert = x509.load_pem_x509_certificate(certs.cert)
    assert cert.not_valid_after_utc == NOW + VALIDITY
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["oam-webhook.oam-system.svc"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    (tmp_path / "tls.crt").write_bytes(certs.cert)
    (tmp_path / "tls.key").write_bytes(certs.key)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")  # a pair Python's TLS accepts


@pytest.mark.parametrize(("at", "expected"), [
    (NOW + VALIDITY - RENEW_BEFORE - timedelta(seconds=1), None),
    (NOW + VALIDITY - RENEW_BEFORE, f"the certificate expires at {(NOW + VALIDITY).isoformat()}"),
    (NOW + VALIDITY + timedelta(days=1), f"the certificate expires at {(NOW + VALIDITY).isoformat()}"),
    (NOW - timedelta(hours=1), "the certificate is not valid yet"),
])
def test_renewal_starts_thirty_days_before_expiry(at: datetime, expected: str | None) -> None:
    assert problem(issue(HOSTS, NOW), HOSTS, at) == expected


def test_a_certificate_for_other_hosts_or_a_foreign_key_is_unusable() -> None:
    certs = issue(HOSTS, NOW)
    assert problem(certs, [*HOSTS, "oam-webhook.oam-system.svc.cluster.local"], NOW) == (
        "the certificate is not valid for oam-webhook.oam-system.svc.cluster.local")
    other = issue(HOSTS, NOW)
    assert problem(CertificateSet(certs.ca, certs.cert, other.key), HOSTS, NOW) == (
        "the key does not match the certificate")
    assert problem(CertificateSet(other.ca, certs.cert, certs.key), HOSTS, NOW) == (
        "the certificate is not signed by the CA bundle")
    assert problem(CertificateSet(certs.ca, b"garbage", certs.key), HOSTS, NOW) is not None


def test_a_renewed_bundle_keeps_the_previous_ca_while_it_is_valid() -> None:
    first = issue(HOSTS, NOW)
    later = NOW + VALIDITY - RENEW_BEFORE
    second = issue(HOSTS, later, first)
    cas = x509.load_pem_x509_certificates(second.ca)
    assert len(cas) == 2
    assert cas[1] == x509.load_pem_x509_certificate(first.ca)
    third = issue(HOSTS, NOW + 2 * VALIDITY, second)  # the second's CA has expired by then
    assert len(x509.load_pem_x509_certificates(third.ca)) == 1


def test_the_keeper_issues_once_then_reuses_the_secret(tmp_path: Path) -> None:
    store = SecretStore()
    first = keeper(store, tmp_path, NOW).sync()
    assert store.writes == 1
    assert from_secret(store.objects[SECRET]) == first
    assert store.objects[SECRET]["type"] == "kubernetes.io/tls"
    assert (tmp_path / "tls.crt").read_bytes() == first.cert
    assert (tmp_path / "tls.key").read_bytes() == first.key
    again = keeper(store, tmp_path / "restarted", NOW + timedelta(days=100)).sync()  # a restart, or a replica
    assert again == first and store.writes == 1
    assert (tmp_path / "restarted" / "tls.crt").read_bytes() == first.cert


def test_the_keeper_renews_inside_the_window(tmp_path: Path) -> None:
    store = SecretStore()
    first = keeper(store, tmp_path, NOW).sync()
    renewed = keeper(store, tmp_path, NOW + VALIDITY - RENEW_BEFORE + timedelta(hours=1)).sync()
    assert renewed != first and store.writes == 2
    assert (tmp_path / "tls.crt").read_bytes() == renewed.cert
    assert x509.load_pem_x509_certificates(renewed.ca)[1] == x509.load_pem_x509_certificate(first.ca)


def test_a_broken_secret_is_replaced(tmp_path: Path) -> None:
    store = SecretStore()
    keeper(store, tmp_path, NOW).sync()
    store.objects[SECRET]["data"]["tls.key"] = base64.b64encode(b"not a key").decode()
    fixed = keeper(store, tmp_path, NOW).sync()
    assert problem(fixed, HOSTS, NOW) is None
    assert from_secret(store.objects[SECRET]) == fixed
    del store.objects[SECRET]["data"]["ca.crt"]
    assert keeper(store, tmp_path, NOW).sync() != fixed and store.writes == 3


def test_of_two_instances_racing_the_loser_uses_the_winners_set(tmp_path: Path) -> None:
    store = SecretStore()
    winner: dict[str, CertificateSet] = {}
    store.before_write = lambda: winner.setdefault("set", keeper(store, tmp_path / "b", NOW).sync())
    loser = keeper(store, tmp_path / "a", NOW).sync()
    assert loser == winner["set"] == from_secret(store.objects[SECRET])
    assert (tmp_path / "a" / "tls.crt").read_bytes() == (tmp_path / "b" / "tls.crt").read_bytes()
