"""A throw-away PKI for one control plane run (docs/devcluster.md#pki-and-identities).

One ECDSA P-256 CA per run signs the API server's serving certificate and every client
certificate, so clients verify TLS and the same CA authenticates them. The service-account
signing pair is a separate RSA key (kube-apiserver and the token controller both read it).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVING_DNS_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
SERVING_IPS = ("127.0.0.1", "10.96.0.1")
CLIENT_IDENTITIES = {
    "admin": "devcluster-admin",
    "kube-controller-manager": "system:kube-controller-manager",
    "kube-scheduler": "system:kube-scheduler",
    "kwok": "kwok",
}
MASTERS_GROUP = "system:masters"


@dataclass(frozen=True)
class KeyPair:
    """PEM-encoded certificate and private key, with the files they were written to."""

    cert_pem: bytes
    key_pem: bytes
    cert_path: Path
    key_path: Path


@dataclass(frozen=True)
class Pki:
    ca: KeyPair
    serving: KeyPair
    clients: dict[str, KeyPair]
    sa_key_path: Path
    sa_pub_path: Path


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _validity() -> tuple[datetime.datetime, datetime.datetime]:
    now = datetime.datetime.now(datetime.UTC)
    return now - datetime.timedelta(hours=1), now + datetime.timedelta(days=30)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = []
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _save(directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> KeyPair:
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = _key_pem(key)
    cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
    _write_private(cert_path, cert_pem)
    _write_private(key_path, key_pem)
    return KeyPair(cert_pem, key_pem, cert_path, key_path)


def _issue(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    sans: list[x509.GeneralName] | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    not_before, not_after = _validity()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_encipherment=False, content_commitment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def serving_sans() -> list[x509.GeneralName]:
    """The API server's SANs: loopback, the first Service IP and the in-cluster names."""
    names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in SERVING_IPS]
    names += [x509.DNSName(dns) for dns in SERVING_DNS_NAMES]
    return names


def generate(directory: Path) -> Pki:
    """Write a fresh CA, serving and client certificates and the SA key pair into ``directory``."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    not_before, not_after = _validity()
    ca_name = _name("oam-devcluster-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_encipherment=False, content_commitment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca = _save(directory, "ca", ca_cert, ca_key)
    cert, key = _issue(ca_cert, ca_key, _name("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, serving_sans())
    serving = _save(directory, "apiserver", cert, key)
    clients = {}
    for stem, common_name in CLIENT_IDENTITIES.items():
        cert, key = _issue(ca_cert, ca_key, _name(common_name, MASTERS_GROUP), ExtendedKeyUsageOID.CLIENT_AUTH)
        clients[stem] = _save(directory, f"client-{stem}", cert, key)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa_key_path, sa_pub_path = directory / "sa.key", directory / "sa.pub"
    _write_private(sa_key_path, _key_pem(sa_key))
    _write_private(
        sa_pub_path,
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
    )
    return Pki(ca=ca, serving=serving, clients=clients, sa_key_path=sa_key_path, sa_pub_path=sa_pub_path)
