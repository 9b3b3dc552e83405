"""Certificates for the secured-broker tests, made with ``cryptography``: a CA, the broker's
certificate (for 127.0.0.1) and a client certificate, each private key encrypted (PKCS#8).

The broker's key is encrypted with PBES1 (PBE-SHA1-3DES, by ``openssl pkcs8 -v1``): Kafka 3.9.1's PEM
key store looks up a ``SecretKeyFactory`` by the key's algorithm name, and Java 17 has none for
PBES2 (``NoSuchAlgorithmException: PBES2 SecretKeyFactory not available``).
"""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    """Where the PEM files are and the key passwords (test secrets, scanned for in logs)."""

    ca: Path
    broker_keystore: Path
    broker_key_password: str
    client_cert: Path
    client_key: Path
    client_key_password: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                 issuer_key: ec.EllipticCurvePrivateKey, ca: bool, usage: ExtendedKeyUsageOID | None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if usage == ExtendedKeyUsageOID.SERVER_AUTH:
        names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _encrypted(key: ec.EllipticCurvePrivateKey, password: str) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.BestAvailableEncryption(password.encode()))


def _broker_key(key: ec.EllipticCurvePrivateKey, password: str) -> bytes:
    plain = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    result = subprocess.run(["openssl", "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-passout", "stdin"],
                            input=password.encode() + b"\n" + plain, capture_output=True, check=True)
    return result.stdout


def make_pki(directory: Path, broker_key_password: str, client_key_password: str) -> Pki:
    """Write ca.pem, broker.pem (encrypted key, certificate, CA) and client.pem / client-key.pem."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("logsig-test-ca", ca_key, _name("logsig-test-ca"), ca_key, True, None)
    broker_key, client_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    broker = _certificate("127.0.0.1", broker_key, ca.subject, ca_key, False, ExtendedKeyUsageOID.SERVER_AUTH)
    client = _certificate("logsig", client_key, ca.subject, ca_key, False, ExtendedKeyUsageOID.CLIENT_AUTH)
    pki = Pki(directory / "ca.pem", directory / "broker.pem", broker_key_password, directory / "client.pem",
              directory / "client-key.pem", client_key_password)
    pki.ca.write_bytes(_pem(ca))
    pki.broker_keystore.write_bytes(_broker_key(broker_key, broker_key_password) + _pem(broker) + _pem(ca))
    pki.client_cert.write_bytes(_pem(client))
    pki.client_key.write_bytes(_encrypted(client_key, client_key_password))
    return pki
