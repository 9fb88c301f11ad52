"""`kubetaint up` secure by default, against the real process: HTTPS with the PKI in
DATA_DIR/pki, the kubeconfig trusted by every bundled kubectl (1.27-1.33), the official Python
client and @kubernetes/client-node; client certificates and tokens; anonymous requests forbidden
by Node,RBAC (401 with --anonymous-auth=false); --insecure-serving only on loopback; the
kube-apiserver flags and their one-line errors."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from cryptography import x509

from .harness import KUBECTL, UpServer, client_node_package

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

KUBECTL_MINORS = ["27", "28", "29", "30", "31", "32", "33"]
NODES = ["control-plane", "node-1"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-secure"), "--nodes", "1").start()
    yield up
    up.kill()


def _names(output: str) -> list[str]:
    return sorted(line.split()[0] for line in output.splitlines()[1:])


def _kubeconfig(server: UpServer) -> dict[str, Any]:
    document = yaml.safe_load(server.kubeconfig.read_text())
    assert isinstance(document, dict)
    return document


def _user(server: UpServer) -> dict[str, Any]:
    user = _kubeconfig(server)["users"][0]["user"]
    assert isinstance(user, dict)
    return user


def _write_kubeconfig(server: UpServer, name: str, user: dict[str, Any]) -> Path:
    """A copy of the server's kubeconfig with another user entry."""
    document = _kubeconfig(server)
    document["users"][0]["user"] = user
    path = server.workdir / name
    path.write_text(yaml.safe_dump(document))
    return path


def _run_up(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(tmp_path / "data"), "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _certificate(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _san(cert: x509.Certificate) -> set[str]:
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} | set(
        names.get_values_for_type(x509.DNSName)
    )


# HTTPS and the kubeconfig ------------------------------------------------------------------


def test_the_server_speaks_https_with_a_certificate_only_the_kubeconfigs_ca_makes_trusted(
    server: UpServer,
) -> None:
    assert server.url.startswith("https://127.0.0.1:")
    cluster = _kubeconfig(server)["clusters"][0]["cluster"]
    assert cluster["server"] == server.url
    ca = base64.b64decode(cluster["certificate-authority-data"])
    assert ca == (server.data_dir / "pki" / "ca.crt").read_bytes()
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(server.url + "/healthz", timeout=10)  # the system's trust store does not know it
    trusted = httpx.get(server.url + "/healthz", verify=ssl.create_default_context(cadata=ca.decode()))
    assert (trusted.status_code, trusted.text) == (200, "ok")
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(server.url.replace("https://", "http://") + "/healthz", timeout=10)


def test_the_banner_says_what_protects_the_server(server: UpServer) -> None:
    assert (
        "  security: HTTPS; authentication: client certificates, tokens, --anonymous-auth=true; "
        "--authorization-mode=Node,RBAC"
    ) in server.banner


def test_the_serving_certificate_is_signed_by_the_ca_for_the_loopback_names(server: UpServer) -> None:
    pki = server.data_dir / "pki"
    serving, ca = _certificate(pki / "apiserver.crt"), _certificate(pki / "ca.crt")
    serving.verify_directly_issued_by(ca)
    assert {"127.0.0.1", "::1", "localhost", "kubernetes.default.svc"} <= _san(serving)


def test_the_kubeconfig_carries_the_admin_client_certificate_and_token(server: UpServer) -> None:
    user = _user(server)
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    assert cert.subject.rfc4514_string() == "CN=kubernetes-admin,O=system:masters"
    tokens = (server.data_dir / "pki" / "tokens.csv").read_text()
    assert tokens == f'{user["token"]},kubernetes-admin,kubernetes-admin,"system:masters"\n'


def _bundled_kubectl(minor: str) -> str | None:
    assert KUBECTL is not None
    candidate = Path(os.path.realpath(KUBECTL)).parent / f"kubectl.1.{minor}"
    return str(candidate) if candidate.exists() else None


@pytest.mark.parametrize("minor", KUBECTL_MINORS, ids=[f"kubectl 1.{m}" for m in KUBECTL_MINORS])
def test_every_bundled_kubectl_lists_the_nodes_through_the_kubeconfig(server: UpServer, minor: str) -> None:
    binary = _bundled_kubectl(minor)
    if binary is None:
        pytest.skip(f"kubectl 1.{minor} is not bundled on this machine")
    result = subprocess.run(
        [binary, "get", "nodes"], env=server.env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert _names(result.stdout) == NODES


@pytest.mark.parametrize(
    "credential",
    [
        pytest.param(("client-certificate-data", "client-key-data"), id="the client certificate alone"),
        pytest.param(("token",), id="the bearer token alone"),
    ],
)
def test_each_admin_credential_alone_is_enough(server: UpServer, credential: tuple[str, ...]) -> None:
    user = {key: value for key, value in _user(server).items() if key in credential}
    path = _write_kubeconfig(server, f"only-{credential[0]}", user)
    assert _names(server.kubectl("--kubeconfig", str(path), "get", "nodes").stdout) == NODES


def test_the_official_python_client_lists_the_nodes_through_the_kubeconfig(server: UpServer) -> None:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        names = sorted(n.metadata.name for n in client.CoreV1Api(api_client).list_node().items)
    finally:
        api_client.close()
    assert names == NODES


@pytest.fixture(scope="session")
def client_node() -> Path:
    """tests/e2e/js with its locked packages installed."""
    return client_node_package()


def test_client_node_lists_the_nodes_through_the_kubeconfig(server: UpServer, client_node: Path) -> None:
    node = shutil.which("node")
    assert node is not None
    result = subprocess.run(
        [node, "list-nodes.mjs"],
        cwd=client_node,
        env={**server.env, "KUBECONFIG": str(server.kubeconfig)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(json.loads(result.stdout)) == NODES


def test_the_clock_cli_reads_the_server_through_the_kubeconfig(server: UpServer) -> None:
    result = server.kubetaint("clock", "now")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("(real clock)\n")


# anonymous requests and bad credentials ----------------------------------------------------


def test_anonymous_requests_are_forbidden_except_the_public_info(server: UpServer) -> None:
    with server.client(credentials=False) as anonymous:
        pods = anonymous.get("/api/v1/pods")
        advance = anonymous.post("/kubetaint/v1/clock/advance", json={"seconds": 60})
        assert anonymous.get("/healthz").text == "ok"
        assert anonymous.get("/version").status_code == 200
    assert pods.status_code == 403
    assert pods.json()["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" '
        "at the cluster scope"
    )
    assert advance.status_code == 403


def test_a_wrong_token_is_unauthorized_even_with_anonymous_auth(server: UpServer) -> None:
    with server.client(credentials=False) as client:
        response = client.get("/api/v1/nodes", headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 401
    assert response.json()["message"] == "Unauthorized"


def test_without_anonymous_auth_no_credentials_is_unauthorized(tmp_path: Path) -> None:
    up = UpServer(tmp_path, "--nodes", "0", "--anonymous-auth=false").start()
    try:
        with up.client(credentials=False) as client:
            missing = client.get("/api/v1/namespaces")
            wrong = client.get("/api/v1/namespaces", headers={"Authorization": "Bearer nope"})
            probe = client.get("/readyz")
        assert [missing.status_code, wrong.status_code, probe.status_code] == [401, 401, 200]
        assert up.get("/api/v1/namespaces").status_code == 200
    finally:
        up.kill()


def test_on_all_addresses_anonymous_requests_from_another_address_are_forbidden(tmp_path: Path) -> None:
    up = UpServer(tmp_path, "--nodes", "0", "--host", "0.0.0.0").start()
    try:
        assert up.url.startswith("https://127.0.0.1:")
        trust = ssl.create_default_context(cadata=up.connection.ca_pem)
        # From 127.0.0.2: another source address (the only other kind reachable in a test).
        transport = httpx.HTTPTransport(verify=trust, local_address="127.0.0.2")
        with httpx.Client(base_url=up.url, transport=transport, timeout=10) as anonymous:
            assert anonymous.get("/api/v1/namespaces").status_code == 403
            assert anonymous.delete("/api/v1/namespaces/default").status_code == 403
            assert anonymous.post("/kubetaint/v1/clock/advance", json={"seconds": 1}).status_code == 403
            assert anonymous.get("/healthz").text == "ok"
        assert up.get("/api/v1/namespaces").status_code == 200
    finally:
        up.kill()


# plain HTTP ----------------------------------------------------------------------------------


def test_insecure_serving_on_loopback_serves_plain_http_to_everyone(tmp_path: Path) -> None:
    up = UpServer(tmp_path, "--nodes", "1", "--insecure-serving").start()
    try:
        assert up.url.startswith("http://127.0.0.1:")
        assert _kubeconfig(up)["clusters"][0]["cluster"] == {"server": up.url}
        assert _user(up) == {}
        assert "  security: plain HTTP, no authentication or authorization (--insecure-serving)" in up.banner
        assert _names(up.kubectl("get", "nodes").stdout) == NODES
        assert httpx.get(up.url + "/api/v1/nodes", timeout=10).status_code == 200
        assert not (up.data_dir / "pki").exists()
    finally:
        up.kill()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3"])
def test_insecure_serving_is_refused_on_a_non_loopback_address(tmp_path: Path, host: str) -> None:
    result = _run_up(tmp_path, "--insecure-serving", "--host", host)
    assert result.returncode == 1
    assert result.stderr == (
        f"error: refusing to serve on non-loopback address {host} without TLS: "
        "plain HTTP (--insecure-serving) is for loopback addresses only\n"
    )
    assert result.stdout == ""


# the PKI across restarts and given files -----------------------------------------------------


def test_a_restart_keeps_the_ca_and_a_new_address_gets_a_new_serving_certificate(tmp_path: Path) -> None:
    pki = tmp_path / "data" / "pki"
    first = UpServer(tmp_path, "--nodes", "0").start()
    first.stop()
    kept = ("ca.crt", "apiserver.crt", "admin.crt", "tokens.csv")
    before = [(pki / name).read_bytes() for name in kept]
    ca = before[0]
    again = UpServer(tmp_path, "--nodes", "0").start()
    again.stop()
    assert [(pki / name).read_bytes() for name in kept] == before
    moved = UpServer(tmp_path, "--nodes", "0", "--host", "127.0.0.2").start()
    try:
        assert moved.url.startswith("https://127.0.0.2:")
        assert (pki / "ca.crt").read_bytes() == ca
        assert "127.0.0.2" in _san(_certificate(pki / "apiserver.crt"))
        assert moved.kubectl("get", "namespaces").stdout.count("Active") == 4
    finally:
        moved.kill()


def test_given_serving_files_and_token_file_are_used(tmp_path: Path) -> None:
    from kubetaint.apiserver.pki import ensure_pki

    own = ensure_pki(tmp_path / "own-pki", "127.0.0.1")
    chain = tmp_path / "chain.pem"  # the serving certificate, then its CA: the kubeconfig trusts the CA
    chain.write_bytes(own.serving_cert.read_bytes() + own.ca_cert.read_bytes())
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('secret-token,alice,1,"system:masters"\n')
    up = UpServer(
        tmp_path,
        "--nodes",
        "0",
        "--tls-cert-file",
        str(chain),
        "--tls-private-key-file",
        str(own.serving_key),
        "--token-auth-file",
        str(tokens),
    ).start()
    try:
        user = _user(up)
        assert "token" not in user  # the kubeconfig cannot know a token of the given file
        ca = _kubeconfig(up)["clusters"][0]["cluster"]["certificate-authority-data"]
        assert base64.b64decode(ca) == chain.read_bytes()
        assert up.kubectl("get", "namespaces").returncode == 0  # the admin client certificate
        with up.client(credentials=False) as client:
            alice = client.get("/api/v1/namespaces", headers={"Authorization": "Bearer secret-token"})
        assert alice.status_code == 200
        presented = ssl.get_server_certificate(("127.0.0.1", int(up.url.rsplit(":", 1)[1])))
        assert presented.strip() == own.serving_cert.read_text().strip()
    finally:
        up.kill()


# flags -----------------------------------------------------------------------------------------


def test_with_a_client_ca_and_a_token_file_of_ones_own_the_banner_says_the_kubeconfig_has_no_credential(
    tmp_path: Path,
) -> None:
    from kubetaint.apiserver.pki import ensure_pki

    own = ensure_pki(tmp_path / "own-pki", "127.0.0.1")
    up = UpServer(
        tmp_path,
        "--nodes",
        "0",
        "--client-ca-file",
        str(own.ca_cert),
        "--token-auth-file",
        str(own.token_file),
    ).start()
    try:
        assert _user(up) == {}
        assert any(
            line.endswith(
                "(no admin credential: --client-ca-file and --token-auth-file are yours; add a user of them)"
            )
            for line in up.banner
        )
        with up.client(credentials=False) as client:
            headers = {"Authorization": f"Bearer {own.admin_token}"}
            assert client.get("/api/v1/namespaces", headers=headers).status_code == 200
    finally:
        up.kill()


def test_help_documents_the_flags_and_the_default_authorization_mode() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kubetaint", "up", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    text = " ".join(result.stdout.split())
    for flag in (
        "--tls-cert-file",
        "--tls-private-key-file",
        "--client-ca-file",
        "--token-auth-file",
        "--anonymous-auth",
        "--authorization-mode",
        "--insecure-serving",
    ):
        assert flag in text
    assert "[default: Node,RBAC]" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ("--tls-cert-file", "cert.pem"),
            "error: --tls-cert-file and --tls-private-key-file must be given together",
            id="a certificate without its key",
        ),
        pytest.param(
            ("--tls-cert-file", "missing.pem", "--tls-private-key-file", "missing.key"),
            "error: cannot load --tls-cert-file 'missing.pem' with --tls-private-key-file 'missing.key': "
            "No such file or directory",
            id="missing serving files",
        ),
        pytest.param(
            ("--client-ca-file", "missing-ca.pem"),
            "error: cannot load --client-ca-file 'missing-ca.pem': No such file or directory",
            id="a missing client CA file",
        ),
        pytest.param(
            ("--token-auth-file", "/nonexistent/tokens.csv"),
            "error: cannot read token file '/nonexistent/tokens.csv'",
            id="a missing token file",
        ),
        pytest.param(
            ("--authorization-mode", "RBAC,Foo"),
            'error: authorization-mode "Foo" is not a valid mode',
            id="an unknown authorization mode",
        ),
        pytest.param(
            ("--authorization-mode", "ABAC"),
            'error: authorization-mode "ABAC" is not supported by kubetaint (supported: AlwaysAllow, Node, RBAC)',
            id="an upstream mode kubetaint does not run",
        ),
        pytest.param(
            ("--authorization-mode", "RBAC,RBAC"),
            'error: authorization-mode ["RBAC" "RBAC"] has mode specified more than once',
            id="a repeated authorization mode",
        ),
        pytest.param(
            ("--authorization-mode", ""),
            "error: at least one authorization-mode must be passed",
            id="no authorization mode",
        ),
        pytest.param(
            ("--insecure-serving", "--tls-cert-file", "c", "--tls-private-key-file", "k"),
            "error: --insecure-serving serves plain HTTP without authentication or authorization: "
            "it cannot be used with --tls-cert-file",
            id="plain HTTP with a certificate",
        ),
        pytest.param(
            ("--insecure-serving", "--authorization-mode", "RBAC"),
            "error: --insecure-serving serves plain HTTP without authentication or authorization: "
            "it cannot be used with --authorization-mode",
            id="plain HTTP with an authorization mode",
        ),
    ],
)
def test_bad_serving_flags_are_one_line_and_exit_1(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    result = _run_up(tmp_path, *args)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "SIGTERM"])
def test_a_signal_right_after_the_banner_stops_the_server_cleanly(tmp_path: Path, sig: int) -> None:
    """The banner comes once the server serves and handles signals (no probe first here)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubetaint", "up", "--data-dir", str(tmp_path / "data"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("kubetaint is serving a cluster at https://"), first
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert (proc.returncode, err) == (0, "")
    assert out.strip().endswith("kubetaint stopped.")
