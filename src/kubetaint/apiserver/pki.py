"""The cluster's PKI in `DATA_DIR/pki`, laid out as kubeadm lays out /etc/kubernetes/pki:

- `ca.crt`/`ca.key`: the cluster CA (CN `kubernetes`, ten years), made once and kept;
- `apiserver.crt`/`apiserver.key`: the serving certificate signed by the CA (CN `kube-apiserver`,
  one year) for 127.0.0.1, ::1, localhost, the `kubernetes.default.svc` names and the listening
  address; made again when it no longer verifies against the CA, has expired (or expires within a
  day) or does not name the listening address;
- `admin.crt`/`admin.key`: a client certificate for `kubernetes-admin` in `system:masters`
  (kubeadm's super-admin.conf identity), made again on the same conditions;
- `tokens.csv`: a kube-apiserver `--token-auth-file` with one admin token for `kubernetes-admin`
  in `system:masters`, made once and kept.

Keys are ECDSA P-256. The folder is 0700, keys and the token file 0600, certificates 0644 (as
kubeadm). Certificate validity uses the machine's wall clock on purpose (`clock.wall`): TLS
peers check it against their own clocks, never against the cluster's (possibly virtual) clock.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubetaint.apiserver.authn import MASTERS_GROUP, TokenFileError, load_token_file
from kubetaint.clock.wall import wall_now

CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"
ADMIN_CERT, ADMIN_KEY = "admin.crt", "admin.key"
TOKEN_FILE = "tokens.csv"
ADMIN_USER = "kubernetes-admin"
CA_NAME = "kubernetes"
SERVING_NAME = "kube-apiserver"
#: kubeadm's validity periods: CAs ten years, leaf certificates one year.
CA_DAYS = 3650
LEAF_DAYS = 365
#: A leaf certificate this close to its end is made again at start.
RENEW_BEFORE = datetime.timedelta(days=1)
#: The names kubeadm puts in the serving certificate, besides the addresses.
SERVING_DNS_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
LOOPBACK_ADDRESSES = ("127.0.0.1", "::1")
PRIVATE_FILE = 0o600
PUBLIC_FILE = 0o644
PRIVATE_DIR = 0o700


class PkiError(Exception):
    """A PKI file that cannot be read, parsed or written; the message is one line for users."""


def private_dir(path: Path) -> None:
    """Create `path` (and its parents) and make it 0700 (also when it already existed)."""
    try:
        path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
        os.chmod(path, PRIVATE_DIR)
    except OSError as exc:
        raise PkiError(f"cannot create the directory {path}: {exc.strerror or exc}") from None


def write_file(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Write `data` to `path` with `mode`, atomically (a temporary file renamed over it), so
    that the file is never readable by others, not even while it is written."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            os.fchmod(descriptor, mode)
            os.write(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except OSError as exc:
        raise PkiError(f"cannot write {path}: {exc.strerror or exc}") from None


def restrict(path: Path, mode: int = PRIVATE_FILE) -> None:
    """Make an existing file `mode` (a no-op for a missing file)."""
    try:
        if path.exists() and (path.stat().st_mode & 0o777) != mode:
            os.chmod(path, mode)
    except OSError as exc:
        raise PkiError(f"cannot restrict the permissions of {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class KeyPair:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


@dataclass(frozen=True, slots=True)
class Pki:
    """The files of one PKI folder and the admin credentials the kubeconfig carries."""

    folder: Path
    admin_token: str | None

    @property
    def ca_cert(self) -> Path:
        return self.folder / CA_CERT

    @property
    def serving_cert(self) -> Path:
        return self.folder / SERVING_CERT

    @property
    def serving_key(self) -> Path:
        return self.folder / SERVING_KEY

    @property
    def admin_cert(self) -> Path:
        return self.folder / ADMIN_CERT

    @property
    def admin_key(self) -> Path:
        return self.folder / ADMIN_KEY

    @property
    def token_file(self) -> Path:
        return self.folder / TOKEN_FILE


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def _subject(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    return x509.Name([*attributes, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: x509.Name, issuer: x509.Name, public: ec.EllipticCurvePublicKey, days: int
) -> x509.CertificateBuilder:
    now = wall_now()  # wall clock on purpose, see the module docstring
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def new_ca() -> KeyPair:
    """A self-signed CA (kubeadm's `ca`: CN kubernetes, CA:TRUE, certSign)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = _subject(CA_NAME)
    cert = (
        _builder(subject, subject, key.public_key(), CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert, key)


def _san(hosts: tuple[str, ...]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host.strip("[]"))))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def new_leaf(
    ca: KeyPair,
    common_name: str,
    *,
    organizations: tuple[str, ...] = (),
    usage: x509.ObjectIdentifier,
    hosts: tuple[str, ...] = (),
) -> KeyPair:
    """A certificate signed by `ca` for server (`hosts` as SANs) or client authentication."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(_subject(common_name, organizations), ca.cert.subject, key.public_key(), LEAF_DAYS)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
    )
    if hosts:
        builder = builder.add_extension(_san(hosts), critical=False)
    return KeyPair(builder.sign(ca.key, hashes.SHA256()), key)


def serving_hosts(host: str) -> tuple[str, ...]:
    """The names a serving certificate for a server listening on `host` must carry: the
    loopback addresses, kubeadm's names, and `host` itself (the machine's host name for the
    wildcard addresses 0.0.0.0 and ::)."""
    hosts = [*LOOPBACK_ADDRESSES, *SERVING_DNS_NAMES]
    bare = host.strip("[]")
    if bare in ("", "0.0.0.0", "::"):
        bare = socket.gethostname()
    if bare and _normal(bare) not in hosts:
        hosts.append(_normal(bare))
    return tuple(hosts)


def _load(folder: Path, cert_name: str, key_name: str) -> KeyPair | None:
    """The pair in `folder`, None when either file is missing; PkiError when unreadable."""
    cert_path, key_path = folder / cert_name, folder / key_name
    if not (cert_path.exists() and key_path.exists()):
        return None
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise PkiError(f"{cert_path} is not a readable PEM certificate: {_first_line(exc)}") from None
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise PkiError(f"{key_path} is not a readable PEM private key: {_first_line(exc)}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise PkiError(f"{key_path} is not an ECDSA private key")
    return KeyPair(cert, key)


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "strerror", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _issued_by(cert: x509.Certificate, ca: KeyPair) -> bool:
    try:
        cert.verify_directly_issued_by(ca.cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _covers(cert: x509.Certificate, hosts: tuple[str, ...]) -> bool:
    if not hosts:
        return True
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    present = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    present |= set(names.get_values_for_type(x509.DNSName))
    return all(str(_normal(host)) in present for host in hosts)


def _normal(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return host


def _current(cert: x509.Certificate) -> bool:
    now = wall_now()
    return cert.not_valid_before_utc <= now and now + RENEW_BEFORE < cert.not_valid_after_utc


def _save(folder: Path, cert_name: str, key_name: str, pair: KeyPair) -> None:
    write_file(folder / key_name, _key_pem(pair.key), PRIVATE_FILE)
    write_file(folder / cert_name, _pem(pair.cert), PUBLIC_FILE)


def _ensure_ca(folder: Path) -> KeyPair:
    ca = _load(folder, CA_CERT, CA_KEY)
    if ca is None:
        ca = new_ca()
        _save(folder, CA_CERT, CA_KEY, ca)
        return ca
    if ca.cert.public_key() != ca.key.public_key():
        raise PkiError(f"{folder / CA_KEY} is not the key of {folder / CA_CERT}")
    if not (ca.cert.not_valid_before_utc <= wall_now() < ca.cert.not_valid_after_utc):
        raise PkiError(
            f"the cluster CA {folder / CA_CERT} is not valid now "
            f"(valid {ca.cert.not_valid_before_utc:%Y-%m-%d} to {ca.cert.not_valid_after_utc:%Y-%m-%d}); "
            f"remove {folder} to make a new PKI"
        )
    return ca


def _ensure_leaf(
    folder: Path,
    names: tuple[str, str],
    ca: KeyPair,
    common_name: str,
    *,
    organizations: tuple[str, ...] = (),
    usage: x509.ObjectIdentifier,
    hosts: tuple[str, ...] = (),
) -> None:
    try:
        pair = _load(folder, *names)
    except PkiError:
        pair = None  # a damaged leaf is made again from the CA
    if (
        pair is not None
        and pair.cert.public_key() == pair.key.public_key()
        and _issued_by(pair.cert, ca)
        and _current(pair.cert)
        and _covers(pair.cert, hosts)
    ):
        return
    leaf = new_leaf(ca, common_name, organizations=organizations, usage=usage, hosts=hosts)
    _save(folder, *names, leaf)


def _admin_token(path: Path) -> str | None:
    """The token of the first `kubernetes-admin` record in `system:masters` (None when the file
    has none); a new token file with one such record when it is missing."""
    if not path.exists():
        token = secrets.token_urlsafe(32)
        write_file(path, f'{token},{ADMIN_USER},{ADMIN_USER},"{MASTERS_GROUP}"\n'.encode(), PRIVATE_FILE)
        return token
    restrict(path)
    try:
        tokens = load_token_file(path)
    except TokenFileError as exc:
        raise PkiError(str(exc)) from None
    for token, user in tokens.items():
        if user.name == ADMIN_USER and MASTERS_GROUP in user.groups:
            return token
    return None


def ensure_pki(folder: Path, host: str) -> Pki:
    """The PKI in `folder` for a server listening on `host`: made or completed, and every key
    and the token file restricted to 0600. Raises PkiError (one line)."""
    private_dir(folder)
    ca = _ensure_ca(folder)
    _ensure_leaf(
        folder,
        (SERVING_CERT, SERVING_KEY),
        ca,
        SERVING_NAME,
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
        hosts=serving_hosts(host),
    )
    _ensure_leaf(
        folder,
        (ADMIN_CERT, ADMIN_KEY),
        ca,
        ADMIN_USER,
        organizations=(MASTERS_GROUP,),
        usage=ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    for key in (CA_KEY, SERVING_KEY, ADMIN_KEY):
        restrict(folder / key)
    return Pki(folder, _admin_token(folder / TOKEN_FILE))
