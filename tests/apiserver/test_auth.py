"""Authentication: token-file parsing, bearer headers, anonymous access, the 401 Status, the
serving-configuration check and TLS with a generated self-signed pair (issue 10, item 1)."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from starlette.applications import Starlette
from starlette.testclient import TestClient

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.authn import (
    ANONYMOUS,
    Authenticator,
    TokenFileError,
    UserInfo,
    bearer_token,
    load_token_file,
    parse_token_file,
)
from kubetaint.apiserver.security import SecurityConfig, ServingConfigError, check_serving, is_loopback
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.apiserver.tls import TLSFiles, kubeconfig
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_store, namespace, node
from .tls_pair import ca_of, serving_pair

TOKENS = (
    "admin-token,admin,uid-admin,system:masters\n"
    "n1-token,system:node:n1,uid-n1,system:nodes\n"
    "n2-token,system:node:n2,uid-n2,system:nodes\n"
    "viewer-token,viewer,uid-viewer\n"
    'alice-token,alice,uid-alice,"dev,qa"\n'
)
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def cluster_store(clock: VirtualClock) -> MemoryStore:
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    store.create("namespaces", namespace("kube-node-lease"))
    store.create("nodes", node("n1", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    store.create("nodes", node("n2"))
    return store


def secure_app(tmp_path: Path, store: MemoryStore, clock: VirtualClock, **config: Any) -> Starlette:
    """The app with TOKENS as --token-auth-file (so Node,RBAC authorization by default)."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    return create_app(store, clock, security=SecurityConfig(token_auth_file=str(tokens), **config))


# token file ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "t1,bob,42\n", {"t1": UserInfo("bob", "42")}, id="three columns give a user without groups"
        ),
        pytest.param(
            't1,bob,42,"g1,g2"\n',
            {"t1": UserInfo("bob", "42", ("g1", "g2"))},
            id="a quoted fourth column holds comma-separated groups",
        ),
        pytest.param("t1,bob,42,g1\n", {"t1": UserInfo("bob", "42", ("g1",))}, id="a single unquoted group"),
        pytest.param(
            "t1,bob,42,g1,extra,more\n",
            {"t1": UserInfo("bob", "42", ("g1",))},
            id="columns after the groups are ignored",
        ),
        pytest.param(
            ",bob,42\nt2,carol,7\n",
            {"t2": UserInfo("carol", "7")},
            id="a record with an empty token is skipped",
        ),
        pytest.param(
            "t1,bob,42\nt1,carol,7\n",
            {"t1": UserInfo("carol", "7")},
            id="a duplicate token keeps the last record",
        ),
        pytest.param(
            "t1,bob,42\n\n\nt2,carol,7",
            {"t1": UserInfo("bob", "42"), "t2": UserInfo("carol", "7")},
            id="blank lines and a missing final newline are fine",
        ),
        pytest.param("t1,bob,42\r\n", {"t1": UserInfo("bob", "42")}, id="CRLF line ends"),
        pytest.param(
            "t1,,\n", {"t1": UserInfo("", "")}, id="empty user name and uid are accepted as upstream"
        ),
        pytest.param("", {}, id="an empty file has no tokens"),
        pytest.param(
            't1,bob,42,""\n',
            {"t1": UserInfo("bob", "42", ("",))},
            id="an empty group column is one empty group",
        ),
    ],
)
def test_token_file_records(text: str, expected: dict[str, UserInfo]) -> None:
    assert parse_token_file(text, "tokens.csv") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "t1,bob\n",
            "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2",
            id="two columns",
        ),
        pytest.param(
            "t1\n",
            "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 1",
            id="one column",
        ),
        pytest.param(
            't1,"bob,42\n', "token file 'tokens.csv': parse error on line", id="an unterminated quote"
        ),
    ],
)
def test_token_file_errors(text: str, message: str) -> None:
    with pytest.raises(TokenFileError) as info:
        parse_token_file(text, "tokens.csv")
    assert str(info.value).startswith(message)


def test_a_missing_token_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot read token file"):
        load_token_file(tmp_path / "absent.csv")


@pytest.mark.parametrize(
    ("header", "token"),
    [
        pytest.param("Bearer abc", "abc", id="the usual header"),
        pytest.param("bearer abc", "abc", id="the scheme is case-insensitive"),
        pytest.param("  Bearer abc  ", "abc", id="surrounding spaces are trimmed"),
        pytest.param("Bearer abc def", "abc", id="text after a second space is ignored"),
        pytest.param("Bearer  abc", None, id="two spaces make an empty token"),
        pytest.param("Bearer", None, id="no token at all"),
        pytest.param("Basic YWxhZGRpbjpvcGVu", None, id="another scheme"),
        pytest.param("", None, id="an empty header"),
        pytest.param(None, None, id="no header"),
    ],
)
def test_bearer_header(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    ("anonymous", "header", "expected"),
    [
        pytest.param(
            False,
            "Bearer t1",
            UserInfo("bob", "42", ("g1", "system:authenticated")),
            id="a known token adds system:authenticated",
        ),
        pytest.param(False, "Bearer nope", None, id="an unknown token fails"),
        pytest.param(True, "Bearer nope", None, id="an unknown token fails even with anonymous access on"),
        pytest.param(False, None, None, id="no token and anonymous off fails"),
        pytest.param(True, None, ANONYMOUS, id="no token and anonymous on is system:anonymous"),
        pytest.param(True, "Basic xyz", ANONYMOUS, id="another scheme counts as no token"),
        pytest.param(
            False,
            "Bearer t2",
            UserInfo("carol", "7", ("system:authenticated",)),
            id="the group is not added twice",
        ),
    ],
)
def test_authenticator(anonymous: bool, header: str | None, expected: UserInfo | None) -> None:
    tokens = {"t1": UserInfo("bob", "42", ("g1",)), "t2": UserInfo("carol", "7", ("system:authenticated",))}
    assert Authenticator(tokens, anonymous=anonymous).authenticate(header) == expected


@pytest.mark.parametrize(
    ("node_user", "node"),
    [
        pytest.param(
            UserInfo("system:node:n1", "", ("system:nodes",)), "n1", id="a node user in system:nodes"
        ),
        pytest.param(UserInfo("system:node:n1", "", ()), None, id="the name alone is not enough"),
        pytest.param(UserInfo("kubelet", "", ("system:nodes",)), None, id="the group alone is not enough"),
        pytest.param(UserInfo("system:node:", "", ("system:nodes",)), "", id="an empty node name"),
    ],
)
def test_node_identity(node_user: UserInfo, node: str | None) -> None:
    assert node_user.node_name() == node


# anonymous access and 401 over HTTP -----------------------------------------------------------


def test_default_loopback_server_allows_anonymous_everything(clock: VirtualClock) -> None:
    client = TestClient(create_app(cluster_store(clock), clock))
    assert client.get("/api/v1/nodes").status_code == 200
    assert (
        client.patch(
            "/api/v1/nodes/n1",
            json={"spec": {"taints": None}},
            headers={"Content-Type": "application/strategic-merge-patch+json"},
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("headers", "path"),
    [
        pytest.param({}, "/api/v1/nodes", id="no credentials"),
        pytest.param(bearer("wrong"), "/api/v1/nodes", id="a wrong token"),
        pytest.param({}, "/version", id="no credentials on a non-resource path"),
        pytest.param(bearer("wrong"), "/healthz", id="a wrong token even on a health probe"),
    ],
)
def test_token_server_answers_401_status(
    tmp_path: Path, clock: VirtualClock, headers: dict[str, str], path: str
) -> None:
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock))
    response = client.get(path, headers=headers)
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED


def test_health_probes_answer_without_credentials(tmp_path: Path, clock: VirtualClock) -> None:
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock))
    assert [client.get(p).text for p in ("/healthz", "/livez", "/readyz")] == ["ok", "ok", "ok"]


def test_anonymous_auth_on_with_rbac_gets_403_not_401(tmp_path: Path, clock: VirtualClock) -> None:
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock, anonymous_auth=True))
    response = client.get("/api/v1/nodes")
    assert response.status_code == 403
    assert response.json()["message"] == (
        'nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" '
        "at the cluster scope"
    )
    assert client.get("/version").status_code == 200  # system:public-info-viewer


def test_a_valid_token_is_served(tmp_path: Path, clock: VirtualClock) -> None:
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock))
    response = client.get("/api/v1/nodes", headers=bearer("admin-token"))
    assert response.status_code == 200
    assert [n["metadata"]["name"] for n in response.json()["items"]] == ["n1", "n2"]


# serving configuration check --------------------------------------------------------------


TLS = TLSFiles("cert.pem", "key.pem")


@pytest.mark.parametrize(
    ("host", "tls", "config", "error"),
    [
        pytest.param("127.0.0.1", None, SecurityConfig(), None, id="loopback without anything"),
        pytest.param("::1", None, SecurityConfig(), None, id="IPv6 loopback"),
        pytest.param("localhost", None, SecurityConfig(), None, id="localhost"),
        pytest.param(
            "0.0.0.0",
            None,
            SecurityConfig(token_auth_file="t"),
            "without TLS",
            id="all addresses without TLS",
        ),
        pytest.param("10.0.0.5", TLS, SecurityConfig(), "without authentication", id="TLS but no token file"),
        pytest.param("10.0.0.5", TLS, SecurityConfig(token_auth_file="t"), None, id="TLS and tokens"),
        pytest.param(
            "10.0.0.5",
            TLS,
            SecurityConfig(token_auth_file="t", anonymous_auth=True, authorization_mode=("AlwaysAllow",)),
            "anyone could do anything",
            id="anonymous with AlwaysAllow",
        ),
        pytest.param(
            "10.0.0.5",
            TLS,
            SecurityConfig(token_auth_file="t", anonymous_auth=True),
            None,
            id="anonymous with RBAC is the operator's choice",
        ),
    ],
)
def test_check_serving(host: str, tls: TLSFiles | None, config: SecurityConfig, error: str | None) -> None:
    if error is None:
        check_serving(host, tls, config)
        return
    with pytest.raises(ServingConfigError, match=error) as info:
        check_serving(host, tls, config)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.1", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_background_server_refuses_a_public_address_without_tls(clock: VirtualClock) -> None:
    with pytest.raises(ServingConfigError, match=r"refusing to serve on non-loopback address 0\.0\.0\.0"):
        BackgroundServer(create_app(cluster_store(clock), clock), host="0.0.0.0")


def test_configuration_defaults() -> None:
    assert SecurityConfig().anonymous() is True
    assert SecurityConfig().modes() == ("AlwaysAllow",)
    assert SecurityConfig(token_auth_file="t").anonymous() is False
    assert SecurityConfig(token_auth_file="t").modes() == ("Node", "RBAC")
    assert SecurityConfig(bind_address="0.0.0.0").anonymous() is False


# TLS ------------------------------------------------------------------------------------------


def test_tls_server_answers_401_without_a_token_and_200_with_one(tmp_path: Path, clock: VirtualClock) -> None:
    tls = serving_pair(tmp_path / "pki")
    context = ssl.create_default_context(cadata=ca_of(tls).decode())
    with BackgroundServer(secure_app(tmp_path, cluster_store(clock), clock), tls=tls) as server:
        assert server.url.startswith("https://127.0.0.1:")
        with httpx.Client(base_url=server.url, verify=context) as client:
            denied = client.get("/api/v1/nodes")
            allowed = client.get("/api/v1/nodes", headers=bearer("admin-token"))
    assert denied.status_code == 401
    assert denied.json() == UNAUTHORIZED
    assert allowed.status_code == 200


def test_kubeconfig_carries_the_ca_and_the_token(tmp_path: Path) -> None:
    ca_pem = ca_of(serving_pair(tmp_path))
    config = yaml.safe_load(yaml.safe_dump(kubeconfig("https://127.0.0.1:6443", ca_pem=ca_pem, token="abc")))
    import base64

    cluster = config["clusters"][0]["cluster"]
    assert base64.b64decode(cluster["certificate-authority-data"]) == ca_pem
    assert config["users"][0]["user"] == {"token": "abc"}
    assert config["current-context"] == config["contexts"][0]["name"]
    json.dumps(config)  # plain data only


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            SecurityConfig(token_auth_file="/nonexistent/tokens.csv"),
            "cannot read token file",
            id="a missing token file",
        ),
        pytest.param(
            SecurityConfig(rbac_policy_file="/nonexistent/rbac.yaml"),
            "cannot read RBAC policy file",
            id="a missing policy file",
        ),
        pytest.param(
            SecurityConfig(authorization_mode=("ABAC",)),
            'authorization-mode "ABAC" is not a valid mode',
            id="an unknown mode",
        ),
    ],
)
def test_bad_security_configuration_is_a_one_line_error(
    clock: VirtualClock, config: SecurityConfig, message: str
) -> None:
    with pytest.raises(ServingConfigError) as info:
        create_app(cluster_store(clock), clock, security=config)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
