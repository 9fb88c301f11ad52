"""The PKI in DATA_DIR/pki (made once, completed, refused when the CA is damaged), the files'
modes, and client-certificate authentication over real TLS (uvicorn in a thread): the verified
certificate's CommonName and Organizations are the user and groups, before any bearer token."""

from __future__ import annotations

import base64
import datetime
import ssl
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.authn import certificate_user
from kubetaint.apiserver.pki import (
    ADMIN_USER,
    KeyPair,
    PkiError,
    _save,
    ensure_pki,
    new_ca,
    new_leaf,
    serving_hosts,
)
from kubetaint.apiserver.security import SecurityConfig, ServingConfigError
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.apiserver.tls import TLSFiles
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import load_kubeconfig

FILES = ("ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key", "tokens.csv")


def _san(path: Path) -> set[str]:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} | set(
        names.get_values_for_type(x509.DNSName)
    )


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_new_pki_has_every_file_with_private_keys_and_folder(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki", "127.0.0.1")
    assert sorted(p.name for p in pki.folder.iterdir()) == sorted(FILES)
    assert _mode(pki.folder) == 0o700
    assert {name: _mode(pki.folder / name) for name in FILES} == {
        "ca.crt": 0o644,
        "ca.key": 0o600,
        "apiserver.crt": 0o644,
        "apiserver.key": 0o600,
        "admin.crt": 0o644,
        "admin.key": 0o600,
        "tokens.csv": 0o600,
    }
    assert pki.admin_token and f"{pki.admin_token},{ADMIN_USER}," in pki.token_file.read_text()


def test_a_second_call_keeps_every_file_and_restricts_loosened_modes(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    first = ensure_pki(folder, "127.0.0.1")
    before = {name: (folder / name).read_bytes() for name in FILES}
    folder.chmod(0o755)
    (folder / "ca.key").chmod(0o644)
    (folder / "tokens.csv").chmod(0o644)
    second = ensure_pki(folder, "::1")
    assert second == first
    assert {name: (folder / name).read_bytes() for name in FILES} == before
    assert [_mode(folder), _mode(folder / "ca.key"), _mode(folder / "tokens.csv")] == [0o700, 0o600, 0o600]


@pytest.mark.parametrize(
    ("host", "named"),
    [
        pytest.param("127.0.0.1", "127.0.0.1", id="loopback"),
        pytest.param("[::1]", "::1", id="bracketed IPv6 loopback"),
        pytest.param("192.0.2.7", "192.0.2.7", id="a concrete address"),
        pytest.param("api.example.test", "api.example.test", id="a host name"),
    ],
)
def test_serving_hosts_name_the_loopback_addresses_and_the_host(host: str, named: str) -> None:
    hosts = serving_hosts(host)
    assert {"127.0.0.1", "::1", "localhost", "kubernetes.default.svc.cluster.local", named} <= set(hosts)


def test_a_new_address_gets_a_new_serving_certificate_from_the_same_ca(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    ensure_pki(folder, "127.0.0.1")
    ca, serving = (folder / "ca.crt").read_bytes(), (folder / "apiserver.crt").read_bytes()
    ensure_pki(folder, "192.0.2.7")
    assert (folder / "ca.crt").read_bytes() == ca
    assert (folder / "apiserver.crt").read_bytes() != serving
    assert "192.0.2.7" in _san(folder / "apiserver.crt")


def test_a_damaged_or_foreign_leaf_is_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    ensure_pki(folder, "127.0.0.1")
    (folder / "apiserver.crt").write_text("garbage")
    other = new_ca()
    foreign = new_leaf(other, ADMIN_USER, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    _save(folder, "admin.crt", "admin.key", foreign)
    ensure_pki(folder, "127.0.0.1")
    ca = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
    for name in ("apiserver.crt", "admin.crt"):
        x509.load_pem_x509_certificate((folder / name).read_bytes()).verify_directly_issued_by(ca)


def test_an_expired_serving_certificate_is_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    ensure_pki(folder, "127.0.0.1")
    from cryptography.hazmat.primitives import serialization

    ca_cert = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((folder / "ca.key").read_bytes(), password=None)
    old = x509.load_pem_x509_certificate((folder / "apiserver.crt").read_bytes())
    now = datetime.datetime.now(datetime.UTC)
    builder = x509.CertificateBuilder(
        issuer_name=ca_cert.subject,
        subject_name=old.subject,
        public_key=old.public_key(),
        serial_number=x509.random_serial_number(),
        not_valid_before=now - datetime.timedelta(days=30),
        not_valid_after=now - datetime.timedelta(days=1),
        extensions=list(old.extensions),
    )
    expired = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    (folder / "apiserver.crt").write_bytes(expired.public_bytes(serialization.Encoding.PEM))
    ensure_pki(folder, "127.0.0.1")
    renewed = x509.load_pem_x509_certificate((folder / "apiserver.crt").read_bytes())
    assert renewed.not_valid_after_utc > now


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param("ca.crt", "ca.crt is not a readable PEM certificate", id="a damaged CA certificate"),
        pytest.param("ca.key", "ca.key is not a readable PEM private key", id="a damaged CA key"),
    ],
)
def test_a_damaged_ca_is_refused_with_one_line(tmp_path: Path, damage: str, message: str) -> None:
    folder = tmp_path / "pki"
    ensure_pki(folder, "127.0.0.1")
    (folder / damage).write_text("-----BEGIN nothing-----\n")
    with pytest.raises(PkiError, match=message) as info:
        ensure_pki(folder, "127.0.0.1")
    assert "\n" not in str(info.value)


def test_a_ca_key_of_another_ca_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    ensure_pki(folder, "127.0.0.1")
    other: KeyPair = new_ca()
    from cryptography.hazmat.primitives import serialization

    (folder / "ca.key").write_bytes(
        other.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    with pytest.raises(PkiError, match=r"ca\.key is not the key of .*ca\.crt"):
        ensure_pki(folder, "127.0.0.1")


def test_a_token_file_without_an_admin_record_gives_no_admin_token(tmp_path: Path) -> None:
    folder = tmp_path / "pki"
    folder.mkdir()
    (folder / "tokens.csv").write_text("t1,alice,1\n")
    assert ensure_pki(folder, "127.0.0.1").admin_token is None


# client certificates -----------------------------------------------------------------------


def test_certificate_user_is_the_common_name_in_the_organizations(tmp_path: Path) -> None:
    ca = new_ca()
    pair = new_leaf(ca, "jane", organizations=("dev", "ops"), usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    from cryptography.hazmat.primitives import serialization

    user = certificate_user(pair.cert.public_bytes(serialization.Encoding.DER))
    assert user is not None and (user.name, user.groups) == ("jane", ("dev", "ops"))
    organization_only = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters")])
    nameless = (
        x509.CertificateBuilder()
        .subject_name(organization_only)
        .issuer_name(ca.cert.subject)
        .public_key(pair.key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(pair.cert.not_valid_before_utc)
        .not_valid_after(pair.cert.not_valid_after_utc)
        .sign(ca.key, hashes.SHA256())
    )
    assert certificate_user(nameless.public_bytes(serialization.Encoding.DER)) is None
    assert certificate_user(b"not DER") is None


def _server(tmp_path: Path, **config: object) -> tuple[BackgroundServer, Path]:
    pki = ensure_pki(tmp_path / "pki", "127.0.0.1")
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}})
    security = SecurityConfig(
        token_auth_file=str(pki.token_file),
        client_ca_file=str(pki.ca_cert),
        anonymous_auth=True,
        authorization_mode=("Node", "RBAC"),
        **config,  # type: ignore[arg-type]
    )
    app = create_app(store, clock, security=security)
    return BackgroundServer(app, tls=TLSFiles(str(pki.serving_cert), str(pki.serving_key))), pki.folder


def _context(folder: Path, cert: tuple[Path, Path] | None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(folder / "ca.crt"))
    if cert is not None:
        context.load_cert_chain(*cert)
    return context


def test_the_admin_client_certificate_authenticates_without_a_token(tmp_path: Path) -> None:
    server, folder = _server(tmp_path)
    with server:
        admin = (folder / "admin.crt", folder / "admin.key")
        with httpx.Client(base_url=server.url, verify=_context(folder, admin)) as client:
            nodes = client.get("/api/v1/nodes")
            with_bad_token = client.get("/api/v1/nodes", headers={"Authorization": "Bearer nope"})
        with httpx.Client(base_url=server.url, verify=_context(folder, None)) as client:
            anonymous = client.get("/api/v1/nodes")
    assert nodes.status_code == 200
    assert with_bad_token.status_code == 200  # the certificate authenticates first, as upstream
    assert anonymous.status_code == 403


def test_a_client_certificate_of_another_ca_fails_the_handshake(tmp_path: Path) -> None:
    server, folder = _server(tmp_path)
    other = new_ca()
    stranger = new_leaf(
        other, ADMIN_USER, organizations=("system:masters",), usage=ExtendedKeyUsageOID.CLIENT_AUTH
    )
    _save(tmp_path, "stranger.crt", "stranger.key", stranger)
    with server:
        context = _context(folder, (tmp_path / "stranger.crt", tmp_path / "stranger.key"))
        with httpx.Client(base_url=server.url, verify=context) as client, pytest.raises(httpx.HTTPError):
            client.get("/api/v1/nodes")


def test_a_kubeconfig_with_inline_client_certificate_data_reaches_the_server(tmp_path: Path) -> None:
    server, folder = _server(tmp_path)
    with server:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "c",
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "clusters": [
                {
                    "name": "c",
                    "cluster": {
                        "server": server.url,
                        "certificate-authority-data": base64.b64encode(
                            (folder / "ca.crt").read_bytes()
                        ).decode(),
                    },
                }
            ],
            "users": [
                {
                    "name": "u",
                    "user": {
                        "client-certificate-data": base64.b64encode(
                            (folder / "admin.crt").read_bytes()
                        ).decode(),
                        "client-key-data": base64.b64encode((folder / "admin.key").read_bytes()).decode(),
                    },
                }
            ],
        }
        path = tmp_path / "kubeconfig"
        path.write_text(yaml.safe_dump(config))
        remote = RemoteStore(load_kubeconfig(path))
        try:
            assert [n["metadata"]["name"] for n in remote.list("nodes").items] == ["n1"]
        finally:
            remote.close()


def test_an_unreadable_client_ca_file_is_a_one_line_serving_error(tmp_path: Path) -> None:
    clock = VirtualClock()
    pki = ensure_pki(tmp_path / "pki", "127.0.0.1")
    app = create_app(
        MemoryStore(clock), clock, security=SecurityConfig(client_ca_file=str(tmp_path / "none"))
    )
    with pytest.raises(ServingConfigError, match=r"cannot load --client-ca-file '.*none': No such file"):
        BackgroundServer(app, tls=TLSFiles(str(pki.serving_cert), str(pki.serving_key)))
