"""The webhook's own serving certificate, when cert-manager does not issue it (docs/admission.md).

The operator keeps a self-signed CA and a serving certificate signed by it in one Secret of its
namespace (``kubernetes.io/tls``: ``tls.crt``, ``tls.key``, and ``ca.crt``, the CA bundle), so
every replica and shard serves the same certificate and a restart reuses it. ``CertificateKeeper``
reads the Secret, issues a new set when it is missing, unreadable, not valid for the webhook's
host names or within ``RENEW_BEFORE`` of its expiry, stores it (create, or update at the read
``resourceVersion``: of two instances racing, the loser re-reads the winner's), writes
``tls.crt``/``tls.key`` for kopf's server (which reloads changed files by itself) and puts the
CA bundle into the chart's ValidatingWebhookConfiguration (named by a setting).

Rotation issues a new CA with the new certificate; the bundle keeps the previous CA while it is
valid, so the API server keeps trusting an instance that has not reloaded yet.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import ApiError

log = logging.getLogger("oam_operator.controller")

VALIDITY = timedelta(days=365)
RENEW_BEFORE = timedelta(days=30)
CHECK_INTERVAL = 600.0  # seconds between two reads of the Secret (another instance may have rotated it)
RETRY_INTERVAL = 10.0  # seconds until the next round while the webhook configuration is missing
CERT_FILE, KEY_FILE = "tls.crt", "tls.key"


@dataclass(frozen=True)
class CertificateSet:
    """PEM texts: ``ca`` is the bundle (current CA first), ``cert`` and ``key`` the serving pair."""

    ca: bytes
    cert: bytes
    key: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(hosts: Sequence[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def issue(hosts: Sequence[str], now: datetime, previous: CertificateSet | None = None) -> CertificateSet:
    """A new CA and a serving certificate for ``hosts``, both valid from ``now`` for ``VALIDITY``.

    The bundle also carries ``previous``'s current CA while it is still valid at ``now``.
    """
    start, end = now - timedelta(minutes=5), now + VALIDITY  # a little clock skew is tolerated
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"oam-operator webhook CA {now.strftime('%Y%m%d%H%M%S')}")
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(_name(hosts[0])).issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    bundle = _pem(ca)
    if previous is not None:
        old = _valid_cas(previous.ca, now)
        if old:
            bundle += _pem(old[0])
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return CertificateSet(bundle, _pem(cert), key_pem)


def _valid_cas(bundle: bytes, now: datetime) -> list[x509.Certificate]:
    try:
        cas = x509.load_pem_x509_certificates(bundle)
    except ValueError:
        return []
    return [ca for ca in cas if ca.not_valid_before_utc <= now < ca.not_valid_after_utc]


def problem(certs: CertificateSet, hosts: Sequence[str], now: datetime) -> str | None:
    """Why ``certs`` must be reissued at ``now`` (expiring, broken, wrong hosts), ``None`` when usable."""
    try:
        cert = x509.load_pem_x509_certificate(certs.cert)
        key = serialization.load_pem_private_key(certs.key, password=None)
        cas = x509.load_pem_x509_certificates(certs.ca)
    except ValueError as error:
        return f"unreadable: {error}"
    if key.public_key() != cert.public_key():
        return "the key does not match the certificate"
    if not any(ca.subject == cert.issuer and _signed_by(cert, ca) for ca in cas):
        return "the certificate is not signed by the CA bundle"
    if now < cert.not_valid_before_utc:
        return "the certificate is not valid yet"
    if now >= cert.not_valid_after_utc - RENEW_BEFORE:
        return f"the certificate expires at {cert.not_valid_after_utc.isoformat()}"
    issuer = next(ca for ca in cas if ca.subject == cert.issuer)
    if now >= issuer.not_valid_after_utc - RENEW_BEFORE:
        return f"the CA expires at {issuer.not_valid_after_utc.isoformat()}"
    try:
        covered = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return "the certificate has no subject alternative names"
    have = {str(n) for n in covered.get_values_for_type(x509.DNSName)}
    have |= {str(n) for n in covered.get_values_for_type(x509.IPAddress)}
    missing = [host for host in hosts if str(_normal(host)) not in have]
    if missing:
        return f"the certificate is not valid for {', '.join(missing)}"
    return None


def _normal(host: str) -> object:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return host


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except Exception:  # InvalidSignature, or a key type that cannot sign
        return False
    return True


def from_secret(secret: dict[str, Any]) -> CertificateSet | None:
    data = secret.get("data") or {}
    try:
        return CertificateSet(*(base64.b64decode(data[k], validate=True) for k in ("ca.crt", "tls.crt", "tls.key")))
    except (KeyError, ValueError, TypeError):
        return None


def secret_body(namespace: str, name: str, certs: CertificateSet, resource_version: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace,
                            "labels": {"app.kubernetes.io/managed-by": "oam-operator"}}
    if resource_version:
        meta["resourceVersion"] = resource_version
    encoded = {k: base64.b64encode(v).decode() for k, v in (("ca.crt", certs.ca), ("tls.crt", certs.cert),
                                                             ("tls.key", certs.key))}
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls", "metadata": meta, "data": encoded}


def _write(path: Path, data: bytes) -> None:
    """Atomically, so kopf's server never loads half a file."""
    if path.exists() and path.read_bytes() == data:
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


class CertificateKeeper:
    """Keeps the Secret, the files and the webhook configuration's CA bundle current (module docstring)."""

    def __init__(self, client: ClusterClient, secret: str, hosts: Sequence[str], directory: Path,
                 webhook_configuration: str = "", clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.client = client
        self.namespace, _, self.name = secret.partition("/")
        self.hosts = list(hosts)
        self.directory = directory
        self.webhook_configuration = webhook_configuration
        self.clock = clock

    @property
    def certfile(self) -> Path:
        return self.directory / CERT_FILE

    @property
    def keyfile(self) -> Path:
        return self.directory / KEY_FILE

    def _path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/secrets/{self.name}"

    def _read(self) -> dict[str, Any] | None:
        try:
            return dict(self.client.request("get", "GET", self._path()))
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def ensure_secret(self) -> CertificateSet:
        """The usable set from the Secret, issuing and storing a new one first when needed."""
        for _ in range(5):
            secret = self._read()
            current = from_secret(secret) if secret is not None else None
            now = self.clock()
            why = "missing" if current is None else problem(current, self.hosts, now)
            if why is None and current is not None:
                return current
            log.info("issuing the webhook certificate", extra={"fields": {"secret": f"{self.namespace}/{self.name}",
                                                                         "reason": why}})
            fresh = issue(self.hosts, now, current)
            version = ((secret or {}).get("metadata") or {}).get("resourceVersion")
            body = secret_body(self.namespace, self.name, fresh, version)
            try:
                if secret is None:
                    self.client.request("create", "POST", f"/api/v1/namespaces/{self.namespace}/secrets", body=body)
                else:
                    self.client.request("update", "PUT", self._path(), body=body)
            except ApiError as error:
                if error.status == 409:
                    continue  # another instance stored its set first: use that one
                raise
            return fresh
        raise RuntimeError(f"the Secret {self.namespace}/{self.name} kept changing while it was stored")

    def sync(self) -> CertificateSet:
        """One round: the Secret, then the files, then the CA bundle of the webhook configuration."""
        certs = self.ensure_secret()
        self.directory.mkdir(parents=True, exist_ok=True)
        _write(self.keyfile, certs.key)  # key first: kopf reloads when either file changes
        _write(self.certfile, certs.cert)
        self.configured = not self.webhook_configuration or self.patch_ca_bundle(certs.ca)
        return certs

    configured = False
    """Whether the last ``sync`` found the webhook configuration (else the next round comes sooner)."""

    def patch_ca_bundle(self, bundle: bytes) -> bool:
        """Set ``caBundle`` of every webhook of the configuration (one JSON patch, only when it differs).

        ``False`` when the configuration does not exist (yet: the Deployment may start first).
        """
        path = f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{self.webhook_configuration}"
        try:
            current = self.client.request("get", "GET", path)
        except ApiError as error:
            if error.status != 404:
                raise
            log.warning("webhook configuration not found", extra={"fields": {
                "configuration": self.webhook_configuration}})
            return False
        wanted = base64.b64encode(bundle).decode()
        operations = [
            {"op": "add", "path": f"/webhooks/{index}/clientConfig/caBundle", "value": wanted}
            for index, webhook in enumerate(current.get("webhooks") or [])
            if (webhook.get("clientConfig") or {}).get("caBundle") != wanted
        ]
        if not operations:
            return True
        version = (current.get("metadata") or {}).get("resourceVersion", "")
        operations.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": version})
        self.client.request("patch", "PATCH", path, body=operations, content_type="application/json-patch+json")
        log.info("webhook configuration CA bundle updated",
                 extra={"fields": {"configuration": self.webhook_configuration}})
        return True
