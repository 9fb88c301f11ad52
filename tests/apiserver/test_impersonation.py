"""Impersonation: `Impersonate-User`/`-Group`/`-Uid`/`-Extra-*` switch the request's user once
the caller may `impersonate` each (mirrors apiserver/pkg/endpoints/filters/impersonation.go and
its tests' cases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock

from .test_auth import bearer, cluster_store, secure_app

RBAC = "/apis/rbac.authorization.k8s.io/v1"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    clock = VirtualClock()
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock))
    admin = bearer("admin-token")
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "impersonate-bob"},
        "rules": [
            {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"], "resourceNames": ["bob"]},
            {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"], "resourceNames": ["team"]},
            {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
            {
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["userextras/scopes"],
                "verbs": ["impersonate"],
            },
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-impersonates"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "impersonate-bob",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    }
    assert client.post(f"{RBAC}/clusterroles", json=role, headers=admin).status_code == 201
    assert client.post(f"{RBAC}/clusterrolebindings", json=binding, headers=admin).status_code == 201
    return client


@pytest.mark.parametrize(
    ("headers", "user"),
    [
        pytest.param(
            {"Impersonate-User": "bob"},
            {"username": "bob", "groups": ["system:authenticated"]},
            id="a user gets system:authenticated",
        ),
        pytest.param(
            [("Impersonate-User", "bob"), ("Impersonate-Group", "team")],
            {"username": "bob", "groups": ["team", "system:authenticated"]},
            id="a user with a group",
        ),
        pytest.param(
            {"Impersonate-User": "system:serviceaccount:default:bot"},
            {
                "username": "system:serviceaccount:default:bot",
                "groups": [
                    "system:serviceaccounts",
                    "system:serviceaccounts:default",
                    "system:authenticated",
                ],
            },
            id="a service account gets its groups",
        ),
        pytest.param(
            {"Impersonate-User": "bob", "Impersonate-Extra-Scopes": "view"},
            {"username": "bob", "groups": ["system:authenticated"], "extra": {"scopes": ["view"]}},
            id="an extra value",
        ),
    ],
)
def test_an_allowed_impersonation_switches_the_user(client: TestClient, headers, user: dict) -> None:
    if isinstance(headers, dict):
        headers = list(headers.items())
    response = client.post(WHOAMI, json=REVIEW, headers=[("Authorization", "Bearer alice-token"), *headers])
    assert response.status_code == 201, response.text
    assert response.json()["status"]["userInfo"] == user


@pytest.mark.parametrize(
    ("headers", "code", "message"),
    [
        pytest.param(
            {"Impersonate-User": "carol"},
            403,
            'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" '
            "at the cluster scope",
            id="a user not granted",
        ),
        pytest.param(
            {"Impersonate-User": "bob", "Impersonate-Group": "system:masters"},
            403,
            'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API '
            'group "" at the cluster scope',
            id="a group not granted",
        ),
        pytest.param(
            {"Impersonate-User": "bob", "Impersonate-Uid": "1"},
            403,
            'uids.authentication.k8s.io "1" is forbidden: User "alice" cannot impersonate resource "uids" in '
            'API group "authentication.k8s.io" at the cluster scope',
            id="a uid not granted",
        ),
    ],
)
def test_a_refused_impersonation(client: TestClient, headers: dict, code: int, message: str) -> None:
    response = client.get("/api/v1/nodes", headers={**bearer("alice-token"), **headers})
    assert (response.status_code, response.json()["message"]) == (code, message)


@pytest.mark.parametrize(
    ("headers", "requested"),
    [
        pytest.param({"Impersonate-Group": "team"}, "[{Group  team    }]", id="a group"),
        pytest.param(
            [("Impersonate-Extra-Scopes", "a"), ("Impersonate-Group", "team")],
            "[{Group  team    } {UserExtra  a  authentication.k8s.io/v1  scopes}]",
            id="the groups before the extras",
        ),
        pytest.param({"Impersonate-Uid": "1"}, "[{UID  1  authentication.k8s.io/v1  }]", id="a uid"),
        pytest.param({"Impersonate-Group": "<b>&"}, "[{Group  &lt;b&gt;&amp;    }]", id="sanitized as HTML"),
    ],
)
def test_impersonating_without_a_user_is_a_plain_text_internal_error(
    client: TestClient, headers: Any, requested: str
) -> None:
    """buildImpersonationRequests' error, answered by responsewriters.InternalError (http.Error)."""
    response = client.get(
        "/api/v1/nodes?limit=1", headers=[*bearer("alice-token").items(), *dict(headers).items()]
    )
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.text == (
        f'Internal Server Error: "/api/v1/nodes?limit=1": requested {requested} without impersonating a user\n'
    )


def test_the_impersonated_user_is_authorized(client: TestClient) -> None:
    as_bob = {**bearer("alice-token"), "Impersonate-User": "bob"}
    response = client.get("/api/v1/nodes", headers=as_bob)
    assert response.status_code == 403
    assert response.json()["message"].startswith('nodes is forbidden: User "bob" cannot list')
    as_admin = {**bearer("admin-token"), "Impersonate-User": "bob", "Impersonate-Group": "system:masters"}
    assert client.get("/api/v1/nodes", headers=as_admin).status_code == 200
