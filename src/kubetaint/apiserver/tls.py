"""Serving certificates: `--tls-cert-file/--tls-private-key-file`, or a generated self-signed
pair valid for 127.0.0.1, ::1 and localhost (mirrors client-go/util/cert
GenerateSelfSignedCertKey, without the separate CA), and the kubeconfig that trusts it.

Certificate validity uses the wall-clock time of the machine on purpose: TLS clients check it
against their own clock, never against kubetaint's (possibly virtual) cluster clock.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubetaint.clock.wall import wall_now

SELF_SIGNED_DAYS = 365
CERT_FILE = "apiserver.crt"
KEY_FILE = "apiserver.key"


class TLSError(Exception):
    """Certificate files that cannot be read or generated; the message is meant for users."""


@dataclass(frozen=True, slots=True)
class TLSFiles:
    cert_file: str
    key_file: str

    def ca_data(self) -> bytes:
        """The PEM the kubeconfig's certificate-authority-data carries (the cert itself)."""
        try:
            return Path(self.cert_file).read_bytes()
        except OSError as exc:
            raise TLSError(f"cannot read --tls-cert-file '{self.cert_file}': {exc}") from None


def generate_self_signed(
    hosts: tuple[str, ...] = ("127.0.0.1", "::1", "localhost"),
) -> tuple[bytes, bytes]:
    """(certificate PEM, private key PEM): an ECDSA P-256 self-signed serving certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{hosts[0]}@kubetaint")])
    now = wall_now()  # wall clock on purpose, see the module docstring
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert_pem, key_pem


def ensure_self_signed(directory: str | Path) -> TLSFiles:
    """The pair in `directory` (apiserver.crt/.key), generated on first use, as kube-apiserver
    does in its --cert-dir when no --tls-cert-file is given."""
    folder = Path(directory)
    cert, key = folder / CERT_FILE, folder / KEY_FILE
    if not (cert.exists() and key.exists()):
        try:
            cert_pem, key_pem = generate_self_signed()
        except ImportError:
            raise TLSError(
                "generating a self-signed certificate needs the 'cryptography' package; "
                "install it or pass --tls-cert-file and --tls-private-key-file"
            ) from None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            key.touch(mode=0o600)
            key.write_bytes(key_pem)
            cert.write_bytes(cert_pem)
        except OSError as exc:
            raise TLSError(f"cannot write a self-signed certificate in '{folder}': {exc}") from None
    return TLSFiles(str(cert), str(key))


def kubeconfig(
    server: str,
    *,
    ca_pem: bytes | None = None,
    token: str | None = None,
    client_cert_pem: bytes | None = None,
    client_key_pem: bytes | None = None,
) -> dict[str, Any]:
    """A one-context kubeconfig for `server`, trusting `ca_pem` and sending `token` and the
    client certificate `client_cert_pem`/`client_key_pem`."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, Any] = {}
    if client_cert_pem is not None and client_key_pem is not None:
        user["client-certificate-data"] = base64.b64encode(client_cert_pem).decode()
        user["client-key-data"] = base64.b64encode(client_key_pem).decode()
    if token:
        user["token"] = token
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubetaint", "cluster": cluster}],
        "contexts": [{"name": "kubetaint", "context": {"cluster": "kubetaint", "user": "kubetaint"}}],
        "users": [{"name": "kubetaint", "user": user}],
        "current-context": "kubetaint",
    }


def kubeconfig_yaml(server: str, *, ca_pem: bytes | None = None, token: str | None = None) -> str:
    return yaml.safe_dump(kubeconfig(server, ca_pem=ca_pem, token=token), sort_keys=False)
