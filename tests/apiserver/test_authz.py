"""Authorization: request attributes from paths, RBAC rule matching and policy files, the Node
authorizer, upstream's 403 messages, and system:masters / view / node identities over HTTP
(issue 10, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from kubetaint.apiserver.authn import UserInfo
from kubetaint.apiserver.authz import NodeAuthorizer, build_authorizer, forbidden
from kubetaint.apiserver.rbac import Policy, PolicyFileError, PolicyRule, load_policy_file
from kubetaint.apiserver.rbac_store import bootstrap_policy
from kubetaint.apiserver.requestinfo import RequestInfo, exact_match, request_info
from kubetaint.clock import VirtualClock

from .builders import pod
from .test_auth import bearer, cluster_store, secure_app

SMP = {"Content-Type": "application/strategic-merge-patch+json"}
N1 = UserInfo("system:node:n1", "uid-n1", ("system:nodes", "system:authenticated"))
ALICE = UserInfo("alice", "uid-alice", ("dev", "system:authenticated"))


def info(method: str, path: str, **query: str) -> RequestInfo:
    return request_info(method, path, query)


# request info ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "query", "verb", "group", "namespace", "resource", "name", "subresource"),
    [
        pytest.param(
            "GET", "/api/v1/namespaces", {}, "list", "", "", "namespaces", "", "", id="list namespaces"
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/other",
            {},
            "get",
            "",
            "other",
            "namespaces",
            "other",
            "",
            id="get a namespace",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/other/pods",
            {},
            "list",
            "",
            "other",
            "pods",
            "",
            "",
            id="list pods in a namespace",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/other/pods/foo",
            {},
            "get",
            "",
            "other",
            "pods",
            "foo",
            "",
            id="get a pod",
        ),
        pytest.param(
            "HEAD",
            "/api/v1/namespaces/other/pods/foo",
            {},
            "get",
            "",
            "other",
            "pods",
            "foo",
            "",
            id="HEAD is get",
        ),
        pytest.param("GET", "/api/v1/pods", {}, "list", "", "", "pods", "", "", id="pods in all namespaces"),
        pytest.param(
            "GET", "/api/v1/pods", {"watch": "true"}, "watch", "", "", "pods", "", "", id="watch=true"
        ),
        pytest.param(
            "GET", "/api/v1/pods", {"watch": "True"}, "watch", "", "", "pods", "", "", id="watch=True"
        ),
        pytest.param("GET", "/api/v1/pods", {"watch": "1"}, "watch", "", "", "pods", "", "", id="watch=1"),
        pytest.param(
            "GET", "/api/v1/pods", {"watch": "false"}, "list", "", "", "pods", "", "", id="watch=false"
        ),
        pytest.param("GET", "/api/v1/pods", {"watch": "0"}, "list", "", "", "pods", "", "", id="watch=0"),
        pytest.param(
            "GET", "/api/v1/watch/pods", {}, "watch", "", "", "pods", "", "", id="the legacy watch prefix"
        ),
        pytest.param(
            "GET",
            "/api/v1/watch/namespaces/other/pods",
            {},
            "watch",
            "",
            "other",
            "pods",
            "",
            "",
            id="legacy watch in a namespace",
        ),
        pytest.param(
            "POST", "/api/v1/namespaces/other/pods", {}, "create", "", "other", "pods", "", "", id="create"
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/other/pods/foo",
            {},
            "update",
            "",
            "other",
            "pods",
            "foo",
            "",
            id="update",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/namespaces/other/pods/foo",
            {},
            "patch",
            "",
            "other",
            "pods",
            "foo",
            "",
            id="patch",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/other/pods/foo",
            {},
            "delete",
            "",
            "other",
            "pods",
            "foo",
            "",
            id="delete",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/other/pods",
            {},
            "deletecollection",
            "",
            "other",
            "pods",
            "",
            "",
            id="deletecollection",
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/other/finalize",
            {},
            "update",
            "",
            "other",
            "namespaces",
            "other",
            "finalize",
            id="namespace finalize",
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/other/status",
            {},
            "update",
            "",
            "other",
            "namespaces",
            "other",
            "status",
            id="namespace status",
        ),
        pytest.param(
            "PATCH", "/api/v1/nodes/n1/status", {}, "patch", "", "", "nodes", "n1", "status", id="node status"
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/ns/pods/p/eviction",
            {},
            "create",
            "",
            "ns",
            "pods",
            "p",
            "eviction",
            id="eviction",
        ),
        pytest.param(
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
            {},
            "get",
            "coordination.k8s.io",
            "kube-node-lease",
            "leases",
            "n1",
            "",
            id="a lease in a named group",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes",
            {"fieldSelector": "metadata.name=n1"},
            "list",
            "",
            "",
            "nodes",
            "n1",
            "",
            id="a metadata.name field selector names the object",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes",
            {"fieldSelector": "metadata.name==n1", "watch": "1"},
            "watch",
            "",
            "",
            "nodes",
            "n1",
            "",
            id="== in the selector",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes",
            {"fieldSelector": "metadata.name!=n1"},
            "list",
            "",
            "",
            "nodes",
            "",
            "",
            id="!= does not name the object",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes",
            {"fieldSelector": "metadata.name=a/b"},
            "list",
            "",
            "",
            "nodes",
            "",
            "",
            id="an invalid path segment does not name the object",
        ),
        pytest.param(
            "PROPFIND",
            "/api/v1/nodes/n1",
            {},
            "",
            "",
            "",
            "nodes",
            "n1",
            "",
            id="an unknown method has no verb",
        ),
    ],
)
def test_resource_request_info(
    method: str,
    path: str,
    query: dict[str, str],
    verb: str,
    group: str,
    namespace: str,
    resource: str,
    name: str,
    subresource: str,
) -> None:
    got = request_info(method, path, query)
    assert got.is_resource_request
    assert (got.verb, got.api_group, got.namespace, got.resource, got.name, got.subresource) == (
        verb,
        group,
        namespace,
        resource,
        name,
        subresource,
    )


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/healthz",
        "/version",
        "/api",
        "/api/v1",
        "/apis",
        "/apis/policy",
        "/apis/policy/v1",
        "/openapi/v3/api/v1",
        "/api/v1/watch",
    ],
)
def test_non_resource_request_info(path: str) -> None:
    got = request_info("GET", path, {})
    assert not got.is_resource_request
    assert (got.verb, got.path) == ("get", path)


@pytest.mark.parametrize(
    ("selector", "value"),
    [
        ("spec.nodeName=n1", "n1"),
        ("spec.nodeName==n1", "n1"),
        ("status.phase!=Failed,spec.nodeName=n1", "n1"),
        ("spec.nodeName!=n1", None),
        ("spec.nodeName=", ""),
        ("metadata.name=n1", None),
        ("", None),
    ],
)
def test_field_selector_exact_match(selector: str, value: str | None) -> None:
    assert exact_match(selector, "spec.nodeName") == value


# RBAC rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "request_", "allowed"),
    [
        pytest.param(
            PolicyRule(("get",), ("",), ("pods",)),
            info("GET", "/api/v1/namespaces/a/pods/p"),
            True,
            id="exact verb, group and resource",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("pods",)),
            info("GET", "/api/v1/namespaces/a/pods"),
            False,
            id="get does not grant list",
        ),
        pytest.param(
            PolicyRule(("*",), ("",), ("pods",)),
            info("DELETE", "/api/v1/namespaces/a/pods"),
            True,
            id="verb wildcard",
        ),
        pytest.param(
            PolicyRule(("get",), ("*",), ("leases",)),
            info("GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l"),
            True,
            id="group wildcard",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("leases",)),
            info("GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l"),
            False,
            id="the core group is not every group",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("pods",)),
            info("GET", "/api/v1/namespaces/a/pods/p/status"),
            False,
            id="a resource does not grant its subresources",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("pods/status",)),
            info("GET", "/api/v1/namespaces/a/pods/p/status"),
            True,
            id="resource/subresource",
        ),
        pytest.param(
            PolicyRule(("patch",), ("",), ("*/status",)),
            info("PATCH", "/api/v1/nodes/n/status"),
            True,
            id="*/subresource",
        ),
        pytest.param(
            PolicyRule(("patch",), ("",), ("*/status",)),
            info("PATCH", "/api/v1/nodes/n"),
            False,
            id="*/subresource needs the subresource",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("*",)),
            info("GET", "/api/v1/nodes/n/status"),
            True,
            id="* includes subresources",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("nodes",), ("n1",)),
            info("GET", "/api/v1/nodes/n1"),
            True,
            id="a listed resource name",
        ),
        pytest.param(
            PolicyRule(("get",), ("",), ("nodes",), ("n1",)),
            info("GET", "/api/v1/nodes/n2"),
            False,
            id="another resource name",
        ),
        pytest.param(
            PolicyRule(("list",), ("",), ("nodes",), ("n1",)),
            info("GET", "/api/v1/nodes"),
            False,
            id="resource names do not grant whole lists",
        ),
        pytest.param(
            PolicyRule(("list",), ("",), ("nodes",), ("n1",)),
            info("GET", "/api/v1/nodes", fieldSelector="metadata.name=n1"),
            True,
            id="a list narrowed to the name",
        ),
        pytest.param(
            PolicyRule(("get",), non_resource_urls=("/healthz",)),
            info("GET", "/healthz"),
            True,
            id="a non-resource URL",
        ),
        pytest.param(
            PolicyRule(("get",), non_resource_urls=("/apis/*",)),
            info("GET", "/apis/policy/v1"),
            True,
            id="a non-resource prefix",
        ),
        pytest.param(
            PolicyRule(("get",), non_resource_urls=("/apis/*",)),
            info("GET", "/api"),
            False,
            id="a prefix does not match outside",
        ),
        pytest.param(
            PolicyRule(("get",), ("*",), ("*",)),
            info("GET", "/healthz"),
            False,
            id="resource rules never grant URLs",
        ),
        pytest.param(
            PolicyRule(("get",), non_resource_urls=("*",)),
            info("GET", "/api/v1/nodes"),
            False,
            id="URL rules never grant resources",
        ),
    ],
)
def test_rule_allows(rule: PolicyRule, request_: RequestInfo, allowed: bool) -> None:
    assert rule.allows(request_) is allowed


POLICY_YAML = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-tainter}
rules:
- {apiGroups: [""], resources: [nodes], verbs: [get, list, watch, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: devs-taint}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-tainter}
subjects:
- {kind: Group, name: dev}
---
apiVersion: v1
kind: List
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: viewer-team-a, namespace: team-a}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
  subjects:
  - {kind: User, name: viewer}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: pod-deleter, namespace: team-a}
  rules:
  - {apiGroups: [""], resources: [pods], verbs: [delete]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: bot-deletes, namespace: team-a}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-deleter}
  subjects:
  - {kind: ServiceAccount, name: bot}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: dangling}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: missing-role}
  subjects:
  - {kind: User, name: ghost}
"""
VIEWER = UserInfo("viewer", "", ("system:authenticated",))
BOT = UserInfo("system:serviceaccount:team-a:bot", "", ("system:serviceaccounts", "system:authenticated"))
GHOST = UserInfo("ghost", "", ("system:authenticated",))
ADMIN = UserInfo("admin", "", ("system:masters", "system:authenticated"))


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    path = tmp_path_factory.mktemp("rbac") / "policy.yaml"
    path.write_text(POLICY_YAML)
    return bootstrap_policy().extended(load_policy_file(path))


@pytest.mark.parametrize(
    ("user", "request_", "decision"),
    [
        pytest.param(
            ALICE, info("PATCH", "/api/v1/nodes/n1"), (True, ""), id="a group bound to a cluster role"
        ),
        pytest.param(ALICE, info("DELETE", "/api/v1/nodes/n1"), (False, ""), id="a verb the role lacks"),
        pytest.param(
            ALICE, info("GET", "/api/v1/namespaces/a/pods"), (False, ""), id="a resource the role lacks"
        ),
        pytest.param(
            VIEWER,
            info("GET", "/api/v1/namespaces/team-a/pods"),
            (True, ""),
            id="view through a RoleBinding in its namespace",
        ),
        pytest.param(
            VIEWER,
            info("GET", "/api/v1/namespaces/team-b/pods"),
            (False, ""),
            id="a RoleBinding does not reach other namespaces",
        ),
        pytest.param(
            VIEWER, info("GET", "/api/v1/pods"), (False, ""), id="a RoleBinding does not grant all namespaces"
        ),
        pytest.param(
            VIEWER,
            info("GET", "/api/v1/namespaces/team-a/secrets/s"),
            (False, ""),
            id="view never reads secrets",
        ),
        pytest.param(
            VIEWER,
            info("GET", "/apis/policy/v1/namespaces/team-a/poddisruptionbudgets"),
            (True, ""),
            id="view reads PDBs",
        ),
        pytest.param(
            VIEWER, info("PATCH", "/api/v1/namespaces/team-a/pods/p"), (False, ""), id="view never writes"
        ),
        pytest.param(
            BOT,
            info("DELETE", "/api/v1/namespaces/team-a/pods/p"),
            (True, ""),
            id="a service account through a namespaced Role",
        ),
        pytest.param(
            BOT,
            info("DELETE", "/api/v1/namespaces/team-b/pods/p"),
            (False, ""),
            id="the Role is only in its namespace",
        ),
        pytest.param(
            GHOST,
            info("GET", "/api/v1/nodes"),
            (False, 'RBAC: clusterrole.rbac.authorization.k8s.io "missing-role" not found'),
            id="a binding to a missing role is the reason",
        ),
        pytest.param(
            ADMIN, info("DELETE", "/api/v1/nodes/n1"), (True, ""), id="system:masters through cluster-admin"
        ),
        pytest.param(ALICE, info("GET", "/apis"), (True, ""), id="authenticated users read discovery"),
        pytest.param(ALICE, info("GET", "/version"), (True, ""), id="authenticated users read the version"),
        pytest.param(
            UserInfo("system:anonymous", "", ("system:unauthenticated",)),
            info("GET", "/apis"),
            (False, ""),
            id="anonymous users do not read discovery",
        ),
        pytest.param(
            UserInfo("system:anonymous", "", ("system:unauthenticated",)),
            info("GET", "/readyz"),
            (True, ""),
            id="anonymous users read health",
        ),
    ],
)
def test_rbac_policy(
    policy: Policy, user: UserInfo, request_: RequestInfo, decision: tuple[bool, str]
) -> None:
    allowed, reason = policy.authorize(user, request_)
    assert (allowed, "" if allowed else reason) == decision
    if allowed:
        assert reason.startswith("RBAC: allowed by ")


@pytest.mark.parametrize(
    ("user", "request_", "reason"),
    [
        pytest.param(
            ALICE,
            info("PATCH", "/api/v1/nodes/n1"),
            'RBAC: allowed by ClusterRoleBinding "devs-taint" of ClusterRole "node-tainter" to Group "dev"',
            id="a ClusterRoleBinding to a group",
        ),
        pytest.param(
            UserInfo("system:serviceaccount:team-a:bot", "", ("system:authenticated",)),
            info("DELETE", "/api/v1/namespaces/team-a/pods/p"),
            'RBAC: allowed by RoleBinding "bot-deletes/team-a" of Role "pod-deleter" to ServiceAccount "bot/team-a"',
            id="a RoleBinding to a service account",
        ),
    ],
)
def test_rbac_allow_reason_names_the_binding(
    policy: Policy, user: UserInfo, request_: RequestInfo, reason: str
) -> None:
    assert policy.authorize(user, request_) == (True, reason)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("kind: Pod\nmetadata: {name: p}\n", "expected a named ClusterRole", id="another kind"),
        pytest.param("kind: ClusterRole\nmetadata: {}\n", "expected a named ClusterRole", id="no name"),
        pytest.param(
            "kind: Role\nmetadata: {name: r}\n",
            "Role 'r' needs metadata.namespace",
            id="a Role without namespace",
        ),
        pytest.param(
            "kind: ClusterRole\nmetadata: {name: r}\nrules: [{resources: [pods]}]\n",
            "rules[].verbs: Required value",
            id="a rule without verbs",
        ),
        pytest.param(
            "kind: ClusterRole\nmetadata: {name: r}\nrules: [{verbs: get}]\n",
            "verbs must be a list of strings",
            id="verbs not a list",
        ),
        pytest.param(
            "kind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: Role, name: r}\n",
            "a ClusterRoleBinding can only refer to a ClusterRole",
            id="a ClusterRoleBinding to a Role",
        ),
        pytest.param(
            "kind: ClusterRoleBinding\nmetadata: {name: b}\nroleRef: {kind: ClusterRole, name: r}\nsubjects: [{kind: Robot, name: x}]\n",
            "subjects[].kind must be User, Group or ServiceAccount",
            id="an unknown subject kind",
        ),
        pytest.param("- a\n- b\n", "every document must be an object", id="a list document"),
        pytest.param("kind: ClusterRole\n  bad: [\n", "cannot read RBAC policy file", id="bad YAML"),
    ],
)
def test_policy_file_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(PolicyFileError) as err:
        load_policy_file(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bootstrap_policy_has_upstream_role_names() -> None:
    roles = {name for _, name in bootstrap_policy().roles}
    assert {
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:basic-user",
        "system:discovery",
        "system:public-info-viewer",
        "system:node",
        "system:kube-scheduler",
        "system:kube-controller-manager",
    } <= roles


# Node authorizer ----------------------------------------------------------------------------


def pod_node(namespace: str, name: str) -> str | None:
    return {("default", "on-n1"): "n1", ("default", "on-n2"): "n2"}.get((namespace, name))


@pytest.mark.parametrize(
    ("request_", "decision"),
    [
        pytest.param(info("GET", "/api/v1/nodes/n1"), (True, ""), id="read its own node"),
        pytest.param(
            info("GET", "/api/v1/nodes/n2"),
            (False, "node 'n1' cannot read 'n2', only its own Node object"),
            id="read another node",
        ),
        pytest.param(
            info("GET", "/api/v1/nodes"),
            (False, "node 'n1' cannot read all nodes, only its own Node object"),
            id="list all nodes",
        ),
        pytest.param(
            info("GET", "/api/v1/nodes", fieldSelector="metadata.name=n1", watch="true"),
            (True, ""),
            id="watch its own node by field selector",
        ),
        pytest.param(info("PATCH", "/api/v1/nodes/n2"), (True, ""), id="patch is left to NodeRestriction"),
        pytest.param(info("PATCH", "/api/v1/nodes/n1/status"), (True, ""), id="patch node status"),
        pytest.param(info("GET", "/api/v1/nodes/n1/status"), (False, ""), id="no reads of node status"),
        pytest.param(info("DELETE", "/api/v1/nodes/n1"), (False, ""), id="no node deletes"),
        pytest.param(
            info("GET", "/api/v1/namespaces/default/pods/on-n1"), (True, ""), id="get a pod bound to it"
        ),
        pytest.param(
            info("GET", "/api/v1/namespaces/default/pods/on-n2"),
            (False, "no relationship found between node 'n1' and this object"),
            id="get a pod bound elsewhere",
        ),
        pytest.param(
            info("GET", "/api/v1/pods", fieldSelector="spec.nodeName=n1"), (True, ""), id="list its pods"
        ),
        pytest.param(
            info("GET", "/api/v1/pods", fieldSelector="spec.nodeName=n2"),
            (False, "can only list/watch pods with spec.nodeName field selector"),
            id="list another node's pods",
        ),
        pytest.param(
            info("GET", "/api/v1/pods", watch="1"),
            (False, "can only list/watch pods with spec.nodeName field selector"),
            id="watch all pods",
        ),
        pytest.param(
            info("PATCH", "/api/v1/namespaces/default/pods/on-n2/status"),
            (True, ""),
            id="pod status is left to NodeRestriction",
        ),
        pytest.param(
            info("POST", "/api/v1/namespaces/default/pods/on-n1/eviction"),
            (True, ""),
            id="evictions are left to NodeRestriction",
        ),
        pytest.param(
            info("POST", "/api/v1/namespaces/default/pods/on-n1/binding"), (False, ""), id="no binding"
        ),
        pytest.param(info("PUT", "/api/v1/namespaces/default/pods/on-n1"), (False, ""), id="no pod updates"),
        pytest.param(
            info("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1"),
            (True, ""),
            id="renew its lease",
        ),
        pytest.param(
            info("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2"),
            (False, "can only access node lease with the same name as the requesting node"),
            id="renew another node's lease",
        ),
        pytest.param(
            info("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1"),
            (False, 'can only access leases in the "kube-node-lease" system namespace'),
            id="a lease elsewhere",
        ),
        pytest.param(
            info("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"),
            (False, "can only get, create, update, patch, or delete a node lease"),
            id="list leases",
        ),
        pytest.param(
            info("POST", "/api/v1/namespaces/default/events"),
            (True, ""),
            id="create events by the static rules",
        ),
        pytest.param(
            info("DELETE", "/api/v1/namespaces/default/events/e"), (False, ""), id="no event deletes"
        ),
        pytest.param(
            info("GET", "/apis/scheduling.k8s.io/v1/priorityclasses"),
            (False, ""),
            id="nothing outside the rules",
        ),
    ],
)
def test_node_authorizer(request_: RequestInfo, decision: tuple[bool, str]) -> None:
    assert NodeAuthorizer(pod_node).authorize(N1, request_) == decision


def test_node_authorizer_has_no_opinion_on_other_users() -> None:
    assert NodeAuthorizer(pod_node).authorize(ALICE, info("GET", "/api/v1/nodes/n1")) == (False, "")
    empty = UserInfo("system:node:", "", ("system:nodes",))
    assert NodeAuthorizer(pod_node).authorize(empty, info("GET", "/api/v1/nodes/n1")) == (
        False,
        'unknown node for user "system:node:"',
    )


def test_union_joins_reasons_and_lets_masters_through() -> None:
    chain = build_authorizer(["Node", "RBAC"], bootstrap_policy(), pod_node)
    assert chain.authorize(N1, info("GET", "/api/v1/nodes")) == (
        False,
        "node 'n1' cannot read all nodes, only its own Node object",
    )
    assert chain.authorize(ADMIN, info("DELETE", "/api/v1/nodes/n1")) == (True, "")
    with pytest.raises(ValueError, match="not a valid mode"):
        build_authorizer(["ABAC"], bootstrap_policy(), pod_node)


# 403 messages -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "reason", "message", "details"),
    [
        pytest.param(
            info("PATCH", "/api/v1/nodes/n2"),
            "",
            'nodes "n2" is forbidden: User "system:node:n1" cannot patch resource "nodes" in API group "" at the cluster scope',
            {"name": "n2", "kind": "nodes"},
            id="a named cluster-scoped object",
        ),
        pytest.param(
            info("GET", "/api/v1/nodes"),
            "node 'n1' cannot read all nodes, only its own Node object",
            'nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: node \'n1\' cannot read all nodes, only its own Node object',
            {"kind": "nodes"},
            id="a collection with the authorizer's reason",
        ),
        pytest.param(
            info("PATCH", "/api/v1/namespaces/default/pods/p/status"),
            "",
            'pods "p" is forbidden: User "system:node:n1" cannot patch resource "pods/status" in API group "" in the namespace "default"',
            {"name": "p", "kind": "pods"},
            id="a namespaced subresource",
        ),
        pytest.param(
            info("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2"),
            "",
            'leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease"',
            {"name": "n2", "group": "coordination.k8s.io", "kind": "leases"},
            id="a named group",
        ),
        pytest.param(
            info("GET", "/apis"),
            "",
            'forbidden: User "system:node:n1" cannot get path "/apis"',
            None,
            id="a non-resource path",
        ),
    ],
)
def test_forbidden_status(
    request_: RequestInfo, reason: str, message: str, details: dict[str, str] | None
) -> None:
    status = forbidden(N1, request_, reason).to_status()
    assert status["code"] == 403
    assert status["reason"] == "Forbidden"
    assert status["message"] == message
    assert status.get("details") == details


# over HTTP ---------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path, clock: VirtualClock) -> TestClient:
    store = cluster_store(clock)
    store.create("pods", pod("on-n1", node_name="n1"))
    store.create("pods", pod("on-n2", node_name="n2"))
    return TestClient(secure_app(tmp_path, store, clock))


def test_node_removing_its_own_taint_gets_403(client: TestClient) -> None:
    response = client.patch(
        "/api/v1/nodes/n1", json={"spec": {"taints": None}}, headers={**SMP, **bearer("n1-token")}
    )
    assert response.status_code == 403
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints',
        "reason": "Forbidden",
        "details": {"name": "n1", "kind": "nodes"},
        "code": 403,
    }
    node = client.get("/api/v1/nodes/n1", headers=bearer("admin-token")).json()
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "code", "message"),
    [
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n1",
            {"spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}},
            SMP,
            403,
            'nodes "n1" is forbidden: node "n1" is not allowed to modify taints',
            id="adding a taint to itself",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n2",
            {"metadata": {"labels": {"a": "b"}}},
            SMP,
            403,
            'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
            id="patching another node",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n1",
            {"metadata": {"labels": {"node-role.kubernetes.io/control-plane": ""}}},
            SMP,
            403,
            'nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane',
            id="giving itself a role label",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n1",
            {"metadata": {"labels": {"topology.kubernetes.io/zone": "z1", "team": "a"}}},
            SMP,
            200,
            None,
            id="kubelet labels and unprefixed labels are fine",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n1/status",
            {"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
            SMP,
            200,
            None,
            id="reporting its own status",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n1/status",
            {"spec": {"taints": None}},
            SMP,
            200,
            None,
            id="spec in a status patch is ignored, so the taint stays",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/nodes/n2/status",
            {"status": {"conditions": []}},
            SMP,
            403,
            'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
            id="reporting another node's status",
        ),
        pytest.param(
            "GET",
            "/api/v1/nodes",
            None,
            {},
            403,
            'nodes is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: '
            "node 'n1' cannot read all nodes, only its own Node object",
            id="listing every node",
        ),
        pytest.param("GET", "/api/v1/nodes/n1", None, {}, 200, None, id="reading itself"),
        pytest.param(
            "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", None, {}, 200, None, id="listing its pods"
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods/on-n1",
            None,
            {},
            200,
            None,
            id="reading a pod bound to it",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/default/pods/on-n2",
            None,
            {},
            403,
            'pods "on-n2" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the namespace '
            "\"default\": no relationship found between node 'n1' and this object",
            id="reading a pod bound elsewhere",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/namespaces/default/pods/on-n2/status",
            {"status": {"phase": "Running"}},
            SMP,
            403,
            'pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
            id="another node's pod status",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/namespaces/default/pods/on-n1/status",
            {"status": {"phase": "Running"}},
            SMP,
            200,
            None,
            id="its own pod's status",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods/on-n2/eviction",
            {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "on-n2"}},
            {},
            403,
            'pods "on-n2" is forbidden: node n1 can only evict pods with spec.nodeName set to itself',
            id="evicting another node's pod",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/default/pods/on-n2",
            None,
            {},
            403,
            'pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
            id="deleting another node's pod",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/default/pods",
            {
                "metadata": {"name": "x"},
                "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
            },
            {},
            403,
            'pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
            id="creating a pod that is not a mirror pod",
        ),
        pytest.param(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            {"metadata": {"name": "n2"}},
            {},
            403,
            'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
            id="creating another node's lease",
        ),
        pytest.param(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}},
            {},
            201,
            None,
            id="creating its own lease",
        ),
        pytest.param(
            "DELETE",
            "/api/v1/nodes/n1",
            None,
            {},
            403,
            'nodes "n1" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope',
            id="deleting itself",
        ),
    ],
)
def test_node_identity_over_http(
    client: TestClient,
    method: str,
    path: str,
    body: object,
    headers: dict[str, str],
    code: int,
    message: str | None,
) -> None:
    response = client.request(method, path, json=body, headers={**headers, **bearer("n1-token")})
    assert response.status_code == code, response.text
    if message is not None:
        assert response.json()["message"] == message


def test_mirror_pod_of_its_own_is_admitted(client: TestClient) -> None:
    n1 = client.get("/api/v1/nodes/n1", headers=bearer("n1-token")).json()
    mirror = {
        "metadata": {
            "name": "static-web-n1",
            "annotations": {"kubernetes.io/config.mirror": "hash"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": "n1",
                    "uid": n1["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "web", "image": "nginx"}]},
    }
    response = client.post("/api/v1/namespaces/default/pods", json=mirror, headers=bearer("n1-token"))
    assert response.status_code == 201, response.text
    mirror["metadata"]["name"] = "with-secret"  # type: ignore[index]
    mirror["spec"]["volumes"] = [{"name": "s", "secret": {"secretName": "x"}}]  # type: ignore[index]
    response = client.post("/api/v1/namespaces/default/pods", json=mirror, headers=bearer("n1-token"))
    assert response.status_code == 403
    assert response.json()["message"] == (
        'pods "with-secret" is forbidden: node "n1" can not create pods that reference secrets'
    )


@pytest.mark.parametrize(
    ("token", "method", "path", "code"),
    [
        pytest.param("admin-token", "DELETE", "/api/v1/nodes/n2", 200, id="system:masters may delete a node"),
        pytest.param(
            "alice-token", "GET", "/api/v1/nodes", 403, id="a user with no binding may not list nodes"
        ),
        pytest.param("alice-token", "GET", "/api", 200, id="any authenticated user reads discovery"),
        pytest.param(
            "viewer-token", "GET", "/api/v1/namespaces/default/pods", 403, id="view is not bound by default"
        ),
    ],
)
def test_users_over_http(client: TestClient, token: str, method: str, path: str, code: int) -> None:
    assert client.request(method, path, headers=bearer(token)).status_code == code


def test_policy_file_binding_takes_effect(tmp_path: Path, clock: VirtualClock) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY_YAML)
    client = TestClient(secure_app(tmp_path, cluster_store(clock), clock, rbac_policy_file=str(policy)))
    patched = client.patch(
        "/api/v1/nodes/n2", json={"spec": {"unschedulable": True}}, headers={**SMP, **bearer("alice-token")}
    )
    assert patched.status_code == 200, patched.text
    deleted = client.delete("/api/v1/nodes/n2", headers=bearer("alice-token"))
    assert deleted.status_code == 403
    assert deleted.json()["message"] == (
        'nodes "n2" is forbidden: User "alice" cannot delete resource "nodes" in API group "" at the cluster scope'
    )


def test_request_state_carries_the_user(tmp_path: Path, clock: VirtualClock) -> None:
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    app = secure_app(tmp_path, cluster_store(clock), clock)

    async def whoami(request: Request) -> PlainTextResponse:
        user = request.state.user
        return PlainTextResponse(f"{user.name} {','.join(user.groups)}")

    app.router.routes.insert(0, Route("/whoami", whoami))
    assert app.security.token_auth_file is not None  # kept for serve()'s check
    with TestClient(app) as test_client:
        response = test_client.get("/whoami", headers=bearer("alice-token"))
    assert response.status_code == 403  # a non-resource path nobody was granted
    with TestClient(app) as test_client:
        response = test_client.get("/whoami", headers=bearer("admin-token"))
    assert response.text == "admin system:masters,system:authenticated"
