"""What the kubeconfig reader honours beyond a server, a CA and a credential, as client-go does:
impersonation (`as`, `as-groups`), basic authentication, a cluster's `proxy-url`; and what it
refuses in one line instead of ignoring (`tls-server-name`, a socks5 proxy), with clientcmd's
message for a context that does not exist."""

from __future__ import annotations

import base64
import socket
import threading
from pathlib import Path

import pytest

from apiserver.tls_pair import ca_of, serving_pair
from kubetaint.api.errors import StatusError
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.interface import StoreError
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import load_kubeconfig
from store.test_remote import backing_store
from store.test_remote import write_kubeconfig as kubeconfig


def test_as_and_as_groups_impersonate_through_a_real_server(tmp_path: Path) -> None:
    tls = serving_pair(tmp_path / "pki")
    (tmp_path / "tokens.csv").write_text('admin-token,admin,uid-admin,"system:masters"\n')
    clock = VirtualClock()
    security = SecurityConfig(token_auth_file=str(tmp_path / "tokens.csv"), authorization_mode=("RBAC",))
    with BackgroundServer(create_app(backing_store(clock), clock, security=security), tls=tls) as server:
        cluster = {"server": server.url, "certificate-authority-data": base64.b64encode(ca_of(tls)).decode()}
        as_alice = kubeconfig(tmp_path / "alice", cluster, {"token": "admin-token", "as": "alice"})
        remote = RemoteStore(load_kubeconfig(as_alice))
        with pytest.raises(StatusError) as refused:
            remote.list("nodes")
        remote.close()
        assert refused.value.code == 403
        assert 'User "alice" cannot list resource "nodes"' in refused.value.message
        masters = kubeconfig(
            tmp_path / "masters",
            cluster,
            {"token": "admin-token", "as": "alice", "as-groups": ["system:masters", "devs"]},
        )
        remote = RemoteStore(load_kubeconfig(masters))
        assert [n["metadata"]["name"] for n in remote.list("nodes").items] == ["n1"]
        remote.close()


def test_impersonation_and_basic_authentication_headers(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "config",
        {"server": "http://127.0.0.1:1"},
        {
            "username": "bob",
            "password": "s3cret",
            "as": "alice",
            "as-uid": "42",
            "as-groups": ["a", "b"],
            "as-user-extra": {"scopes": ["x", "y"]},
        },
    )
    assert load_kubeconfig(path).headers() == [
        ("Impersonate-User", "alice"),
        ("Impersonate-Uid", "42"),
        ("Impersonate-Group", "a"),
        ("Impersonate-Group", "b"),
        ("Impersonate-Extra-scopes", "x"),
        ("Impersonate-Extra-scopes", "y"),
        ("Authorization", "Basic " + base64.b64encode(b"bob:s3cret").decode()),
    ]


def test_requests_go_through_the_clusters_proxy_url(tmp_path: Path) -> None:
    """An HTTP proxy sees the request for the server's absolute URL (and answers it here)."""
    seen: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def proxy() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            seen.append(data.split(b"\r\n", 1)[0])
            body = b'{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}'
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )

    thread = threading.Thread(target=proxy, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    path = kubeconfig(
        tmp_path / "config",
        {"server": "http://kube.example:6443", "proxy-url": f"http://127.0.0.1:{port}"},
        {"token": "t"},
    )
    remote = RemoteStore(load_kubeconfig(path))
    try:
        assert remote.list("nodes").items == []
    finally:
        remote.close()
        thread.join(5)
        listener.close()
    assert seen == [b"GET http://kube.example:6443/api/v1/nodes HTTP/1.1"]


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        pytest.param(
            {"server": "https://h", "tls-server-name": "other"},
            "cluster 'c': tls-server-name is not supported: name the server by the host its certificate names",
            id="tls-server-name",
        ),
        pytest.param(
            {"server": "https://h", "proxy-url": "socks5://127.0.0.1:1080"},
            "cluster 'c': proxy-url scheme 'socks5' is not supported (http, https)",
            id="a socks5 proxy",
        ),
    ],
)
def test_what_the_reader_cannot_honour_is_one_line(tmp_path: Path, cluster: dict, message: str) -> None:
    path = kubeconfig(tmp_path / "config", cluster, {"token": "t"})
    with pytest.raises(StoreError) as refused:
        load_kubeconfig(path)
    assert str(refused.value) == f"{path}: {message}"


def test_an_unknown_context_has_clientcmds_message(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"server": "https://h"}, {"token": "t"})
    with pytest.raises(StoreError) as refused:
        load_kubeconfig(path, context="nope")
    assert str(refused.value) == f"{path}: context was not found for specified context: nope"
