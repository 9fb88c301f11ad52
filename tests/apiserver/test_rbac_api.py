"""The RBAC objects through the API: stored and served like other kinds, defaulted and validated
as upstream, the bootstrap policy created without overwriting, aggregation filled in, the
authorizer following changes at once, escalation refused unless `escalate`/`bind` is held; and
the review APIs (SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectReview) under Node,RBAC and AlwaysAllow (issue 22)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.live import LiveCluster
from kubetaint.apiserver.rbac_store import ensure_bootstrap_policy
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_app, make_store
from .test_auth import TOKENS, bearer

JSON = dict[str, Any]
RBAC = "/apis/rbac.authorization.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
GROUP = "rbac.authorization.k8s.io"
ADMIN = bearer("admin-token")
ALICE = bearer("alice-token")  # alice, groups dev and qa


def role(name: str, rules: list[JSON], namespace: str = "default") -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    }


def cluster_role(name: str, rules: list[JSON], labels: dict[str, str] | None = None, **extra: Any) -> JSON:
    meta: JSON = {"name": name, **({"labels": labels} if labels else {})}
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": meta, "rules": rules, **extra}


def binding(name: str, kind: str, role_name: str, user: str, namespace: str = "default") -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"kind": kind, "name": role_name},
        "subjects": [{"kind": "User", "name": user}],
    }


def rule(verbs: list[str], resources: list[str], groups: list[str] | None = None) -> JSON:
    return {"apiGroups": groups if groups is not None else [""], "resources": resources, "verbs": verbs}


def live_client(tmp_path: Path) -> tuple[TestClient, VirtualClock]:
    """The API of a live cluster (the engine's validation and admission) with TOKENS as
    --token-auth-file and Node,RBAC."""
    clock = VirtualClock()
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    security = SecurityConfig(token_auth_file=str(tokens), authorization_mode=("Node", "RBAC"))
    cluster = LiveCluster(MemoryStore(clock), clock, workers=0, seed=1, server_address="x", security=security)
    cluster.start()
    return TestClient(cluster.app), clock


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return live_client(tmp_path)[0]


def ssar(client: TestClient, headers: dict[str, str], **attributes: str) -> JSON:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    response = client.post(f"{AUTHZ}/selfsubjectaccessreviews", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


# objects ------------------------------------------------------------------------------------


def test_bindings_are_defaulted_stored_and_listed(client: TestClient) -> None:
    created = client.post(
        f"{RBAC}/namespaces/default/rolebindings",
        json=binding("b", "ClusterRole", "view", "bob"),
        headers=ADMIN,
    )
    assert created.status_code == 201, created.text
    stored = created.json()
    assert stored["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}
    assert stored["subjects"] == [{"kind": "User", "name": "bob", "apiGroup": GROUP}]
    listed = client.get(f"{RBAC}/rolebindings", headers=ADMIN).json()
    assert listed["kind"] == "RoleBindingList"
    assert [b["metadata"]["name"] for b in listed["items"]] == ["b"]


def test_invalid_objects_are_422_with_upstream_causes(client: TestClient) -> None:
    bad = role("r", [{"verbs": [], "resources": ["pods"]}])
    response = client.post(f"{RBAC}/namespaces/default/roles", json=bad, headers=ADMIN)
    assert response.status_code == 422
    assert response.json()["message"] == (
        'Role.rbac.authorization.k8s.io "r" is invalid: [rules[0].verbs: Required value: verbs must contain at '
        "least one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group]"
    )
    wrong_type = {**role("r", []), "rules": [{"verbs": "get"}]}
    response = client.post(f"{RBAC}/namespaces/default/roles", json=wrong_type, headers=ADMIN)
    assert response.status_code == 400
    assert (
        "cannot unmarshal string into Go struct field PolicyRule.rules.verbs of type []string"
        in response.json()["message"]
    )


def test_a_binding_role_ref_cannot_change(client: TestClient) -> None:
    client.post(
        f"{RBAC}/namespaces/default/rolebindings",
        json=binding("b", "ClusterRole", "view", "bob"),
        headers=ADMIN,
    )
    patch = {"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"}}
    response = client.patch(
        f"{RBAC}/namespaces/default/rolebindings/b",
        json=patch,
        headers={**ADMIN, "Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 422
    assert response.json()["message"].endswith(
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef'
    )


def test_the_bootstrap_policy_is_created_once_and_never_overwritten() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    created = ensure_bootstrap_policy(store)
    assert "clusterroles.rbac.authorization.k8s.io/cluster-admin" in created
    assert "clusterrolebindings.rbac.authorization.k8s.io/system:basic-user" in created
    # the aggregated roles are stored with their aggregation (view, into edit, into admin)
    admin = store.get(f"clusterroles.{GROUP}", "", "admin")["rules"]
    assert rule(["get", "list", "watch"], ["namespaces"]) in admin
    assert rule(["create"], ["pods/eviction"]) in admin
    view = store.get(f"clusterroles.{GROUP}", "", "system:basic-user")
    store.update(f"clusterroles.{GROUP}", {**view, "rules": [rule(["get"], ["pods"])]})
    store.delete(f"clusterroles.{GROUP}", "", "edit")
    assert ensure_bootstrap_policy(store) == ["clusterroles.rbac.authorization.k8s.io/edit"]
    assert store.get(f"clusterroles.{GROUP}", "", "system:basic-user")["rules"] == [rule(["get"], ["pods"])]


def test_aggregation_fills_the_aggregated_role_and_the_authorizer_uses_it(tmp_path: Path) -> None:
    client, clock = live_client(tmp_path)
    aggregated = cluster_role(
        "monitoring",
        [],
        aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"example.com/monitoring": "true"}}]},
    )
    assert client.post(f"{RBAC}/clusterroles", json=aggregated, headers=ADMIN).status_code == 201
    part = cluster_role("pod-reading", [rule(["get", "list"], ["pods"])], {"example.com/monitoring": "true"})
    assert client.post(f"{RBAC}/clusterroles", json=part, headers=ADMIN).status_code == 201
    crb = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-monitors"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "monitoring"},
        "subjects": [{"apiGroup": GROUP, "kind": "User", "name": "alice"}],
    }
    assert client.post(f"{RBAC}/clusterrolebindings", json=crb, headers=ADMIN).status_code == 201
    # the authorizer aggregates at once; the stored object follows on the next clock turn
    assert client.get("/api/v1/namespaces/default/pods", headers=ALICE).status_code == 200
    clock.run_pending()
    stored = client.get(f"{RBAC}/clusterroles/monitoring", headers=ADMIN).json()
    assert stored["rules"] == [rule(["get", "list"], ["pods"])]
    # a change of a selected role is followed
    client.delete(f"{RBAC}/clusterroles/pod-reading", headers=ADMIN)
    assert client.get("/api/v1/namespaces/default/pods", headers=ALICE).status_code == 403
    clock.run_pending()
    assert client.get(f"{RBAC}/clusterroles/monitoring", headers=ADMIN).json()["rules"] == []


def test_a_binding_to_a_missing_role_is_the_403_reason(client: TestClient) -> None:
    client.post(
        f"{RBAC}/namespaces/default/rolebindings",
        json=binding("b", "Role", "nothing", "alice"),
        headers=ADMIN,
    )
    response = client.get("/api/v1/namespaces/default/pods", headers=ALICE)
    assert response.status_code == 403
    assert response.json()["message"].endswith(': RBAC: role.rbac.authorization.k8s.io "nothing" not found')


# escalation ---------------------------------------------------------------------------------


def _grant(client: TestClient, name: str, rules: list[JSON]) -> None:
    assert (
        client.post(f"{RBAC}/namespaces/default/roles", json=role(name, rules), headers=ADMIN).status_code
        == 201
    )
    response = client.post(
        f"{RBAC}/namespaces/default/rolebindings",
        json=binding(f"{name}-alice", "Role", name, "alice"),
        headers=ADMIN,
    )
    assert response.status_code == 201


def test_a_role_with_permissions_not_held_is_refused_unless_escalate(client: TestClient) -> None:
    _grant(client, "role-writer", [rule(["create", "update"], ["roles"], [GROUP])])
    wanted = role("deleter", [rule(["delete"], ["pods"])])
    refused = client.post(f"{RBAC}/namespaces/default/roles", json=wanted, headers=ALICE)
    assert refused.status_code == 403
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "alice" (groups=["dev" "qa" '
        '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
        "reason": "Forbidden",
        "details": {"name": "deleter", "group": GROUP, "kind": "roles"},
        "code": 403,
    }
    _grant(client, "escalator", [rule(["escalate"], ["roles"], [GROUP])])
    assert client.post(f"{RBAC}/namespaces/default/roles", json=wanted, headers=ALICE).status_code == 201


def test_a_binding_to_a_role_not_held_is_refused_unless_bind(client: TestClient) -> None:
    _grant(client, "binder", [rule(["create"], ["rolebindings"], [GROUP])])
    wanted = binding("alice-edits", "ClusterRole", "edit", "alice")
    refused = client.post(f"{RBAC}/namespaces/default/rolebindings", json=wanted, headers=ALICE)
    assert refused.status_code == 403
    message = refused.json()["message"]
    assert message.startswith(
        'rolebindings.rbac.authorization.k8s.io "alice-edits" is forbidden: user "alice"'
    )
    leases = '{APIGroups:["coordination.k8s.io"], Resources:["leases"], Verbs:["create" "delete" "deletecollection"'
    assert leases + ' "get" "list" "patch" "update" "watch"]}' in message
    missing = client.post(
        f"{RBAC}/namespaces/default/rolebindings",
        json=binding("x", "ClusterRole", "no-such-role", "alice"),
        headers=ALICE,
    )
    assert (missing.status_code, missing.json()["message"]) == (
        404,
        'clusterroles.rbac.authorization.k8s.io "no-such-role" not found',
    )
    bind_edit = {
        "apiGroups": [GROUP],
        "resources": ["clusterroles"],
        "verbs": ["bind"],
        "resourceNames": ["edit"],
    }
    _grant(client, "edit-binder", [bind_edit])
    assert (
        client.post(f"{RBAC}/namespaces/default/rolebindings", json=wanted, headers=ALICE).status_code == 201
    )


def test_an_aggregation_rule_needs_cluster_admin(client: TestClient) -> None:
    grant = cluster_role("role-writer", [rule(["create"], ["clusterroles"], [GROUP])])
    client.post(f"{RBAC}/clusterroles", json=grant, headers=ADMIN)
    crb = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-writes"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "role-writer"},
        "subjects": [{"apiGroup": GROUP, "kind": "User", "name": "alice"}],
    }
    client.post(f"{RBAC}/clusterrolebindings", json=crb, headers=ADMIN)
    aggregated = cluster_role(
        "agg", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
    )
    refused = client.post(f"{RBAC}/clusterroles", json=aggregated, headers=ALICE)
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the '
        "aggregationRule",
    )


# reviews ------------------------------------------------------------------------------------


def test_self_subject_access_review_answers_for_the_caller(client: TestClient) -> None:
    denied = ssar(client, ALICE, verb="list", resource="pods", namespace="default")
    assert denied["status"] == {"allowed": False}
    assert denied["metadata"] == {"creationTimestamp": None}
    _grant(client, "reader", [rule(["list"], ["pods"])])
    allowed = ssar(client, ALICE, verb="list", resource="pods", namespace="default")
    assert allowed["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "reader-alice/default" of Role "reader" to User "alice"',
    }
    assert ssar(client, ADMIN, verb="delete", resource="nodes")["status"] == {"allowed": True}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {},
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: '
            "null: exactly one of nonResourceAttributes or resourceAttributes must be specified",
            id="neither attributes",
        ),
        pytest.param(
            {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"verb": "get", "path": "/x"}},
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
            "&authorization.NonResourceAttributes{...}: cannot be specified in combination with resourceAttributes",
            id="both attributes",
        ),
        pytest.param(
            {"resourceAttributes": {"verb": "get"}, "metadata": {"name": "x"}},
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: metadata: Invalid value: '
            'v1.ObjectMeta{Name:"x"}: must be empty',
            id="metadata",
        ),
    ],
)
def test_an_invalid_self_subject_access_review_is_422(client: TestClient, spec: JSON, message: str) -> None:
    spec = dict(spec)
    meta = spec.pop("metadata", None)
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}
    if meta is not None:
        body["metadata"] = meta
    response = client.post(f"{AUTHZ}/selfsubjectaccessreviews", json=body, headers=ALICE)
    assert (response.status_code, response.json()["message"]) == (422, message)


def test_self_subject_rules_review_lists_the_bound_rules(client: TestClient) -> None:
    _grant(client, "reader", [rule(["get", "list"], ["pods"])])
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    status = client.post(f"{AUTHZ}/selfsubjectrulesreviews", json=body, headers=ALICE).json()["status"]
    assert {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]} in status["resourceRules"]
    assert {
        "verbs": ["create"],
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    } in status["resourceRules"]
    assert {
        "verbs": ["get"],
        "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
    } in status["nonResourceRules"]
    assert status["incomplete"] is False
    no_namespace = {**body, "spec": {}}
    response = client.post(f"{AUTHZ}/selfsubjectrulesreviews", json=no_namespace, headers=ALICE)
    assert (response.status_code, response.json()["message"]) == (400, "no namespace on request")


def test_a_node_user_s_rules_are_incomplete(client: TestClient) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    status = client.post(f"{AUTHZ}/selfsubjectrulesreviews", json=body, headers=bearer("n1-token")).json()[
        "status"
    ]
    assert status["incomplete"] is True
    assert status["evaluationError"] == "node authorizer does not support user rule resolution"


def test_subject_access_reviews_answer_for_the_spec_user(client: TestClient) -> None:
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "admin",
            "groups": ["system:masters"],
            "resourceAttributes": {"verb": "delete", "resource": "nodes"},
        },
    }
    answer = client.post(f"{AUTHZ}/subjectaccessreviews", json=body, headers=ADMIN)
    assert (answer.status_code, answer.json()["status"]) == (201, {"allowed": True})
    refused = client.post(f"{AUTHZ}/subjectaccessreviews", json=body, headers=ALICE)
    assert refused.status_code == 403
    local = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview",
        "spec": {
            "user": "bob",
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "other"},
        },
    }
    response = client.post(f"{AUTHZ}/namespaces/default/localsubjectaccessreviews", json=local, headers=ADMIN)
    assert (response.status_code, response.json()["message"]) == (
        400,
        "spec.resourceAttributes.namespace must match namespace: default",
    )


def test_reviews_answer_under_always_allow() -> None:
    clock = VirtualClock()
    client = TestClient(make_app(make_store(clock), clock))
    answer = ssar(client, {}, verb="delete", resource="nodes")
    assert answer["status"] == {"allowed": True}
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"},
    }
    status = client.post(f"{AUTHZ}/selfsubjectrulesreviews", json=body).json()["status"]
    assert status == {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
        "incomplete": False,
    }
    whoami = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    user = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=whoami).json()["status"][
        "userInfo"
    ]
    assert user == {"username": "system:anonymous", "groups": ["system:unauthenticated"]}


def test_reviews_are_create_only(client: TestClient) -> None:
    response = client.get(f"{AUTHZ}/selfsubjectaccessreviews", headers=ADMIN)
    assert response.status_code == 405
