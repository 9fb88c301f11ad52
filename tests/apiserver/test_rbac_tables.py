"""Upstream's RBAC tables as data: the authorizer (plugin/pkg/auth/authorizer/rbac/rbac_test.go
TestAuthorizer and TestRuleMatches), the escalation comparator
(component-helpers/auth/rbac/validation/policy_comparator_test.go) and ConfirmNoEscalation's
message (pkg/registry/rbac/validation/rule.go, policy_compact.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.apiserver.authn import UserInfo
from kubetaint.apiserver.rbac import Policy, PolicyRule
from kubetaint.apiserver.rbac_escalation import _url_covers, compact_rules, covers, escalation_message
from kubetaint.apiserver.requestinfo import RequestInfo

JSON = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"


def go_split(text: str) -> list[str]:
    """strings.Split(text, ","): an empty string is one empty element."""
    return text.split(",")


def new_rule(verbs: str, groups: str, resources: str, urls: str) -> JSON:
    """rbac_test.go newRule: every field split on commas."""
    return {
        "verbs": go_split(verbs),
        "apiGroups": go_split(groups),
        "resources": go_split(resources),
        "nonResourceURLs": go_split(urls),
    }


def cluster_role(name: str, *rules: JSON) -> JSON:
    return {"kind": "ClusterRole", "metadata": {"name": name}, "rules": list(rules)}


def _subjects(subjects: tuple[str, ...]) -> list[JSON]:
    out = []
    for subject in subjects:
        kind, name = subject.split(":", 1)
        out.append({"kind": kind, "name": name, "apiGroup": "" if kind == "ServiceAccount" else GROUP})
    return out


def cluster_role_binding(role: str, *subjects: str) -> JSON:
    return {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{role}-binding"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": _subjects(subjects),
    }


def role_binding_to_cluster_role(namespace: str, role: str, *subjects: str) -> JSON:
    return {
        "kind": "RoleBinding",
        "metadata": {"name": f"{role}-binding", "namespace": namespace},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": _subjects(subjects),
    }


def attrs(user: str, groups: str, verb: str, resource: str, subresource: str, namespace: str) -> tuple:
    """defaultAttributes: a resource request by a user (groups split on commas)."""
    return (
        UserInfo(user, "", tuple(go_split(groups))),
        RequestInfo(True, "", verb, "apis", "", "", namespace, resource, subresource, ""),
    )


def url(name: str, groups: tuple[str, ...], verb: str, path: str) -> tuple:
    """AttributesRecord of a non-resource request."""
    return UserInfo(name, "", groups), RequestInfo(False, path, verb)


ADMIN_IN_NS1 = [
    cluster_role("admin", new_rule("*", "*", "*", "*")),
    role_binding_to_cluster_role("ns1", "admin", "User:admin", "Group:admins"),
]
NON_RESOURCE = [
    cluster_role("non-resource-url-getter", new_rule("get", "", "", "/apis")),
    cluster_role("non-resource-url", new_rule("*", "", "", "/apis")),
    cluster_role("non-resource-url-prefix", new_rule("get", "", "", "/apis/*")),
    cluster_role_binding("non-resource-url-getter", "User:foo", "Group:bar"),
    cluster_role_binding("non-resource-url", "User:admin", "Group:admin"),
    cluster_role_binding("non-resource-url-prefix", "User:prefixed", "Group:prefixed"),
]
PODS_ONLY = [
    cluster_role("admin", new_rule("*", "*", "pods", "*")),
    role_binding_to_cluster_role("ns1", "admin", "User:admin", "Group:admins"),
]
POD_STATUS_ONLY = [
    cluster_role("admin", new_rule("*", "*", "pods/status", "*")),
    role_binding_to_cluster_role("ns1", "admin", "User:admin", "Group:admins"),
]
ANY_SCALE = [
    cluster_role("admin", new_rule("*", "*", "*/scale", "*")),
    role_binding_to_cluster_role("ns1", "admin", "User:admin", "Group:admins"),
]

AUTHORIZER_CASES = [
    # case 0: a ClusterRole bound in ns1 to a user and a group
    *(
        pytest.param(ADMIN_IN_NS1, a, True, id=f"admin in ns1 passes: {i}")
        for i, a in enumerate(
            [
                attrs("admin", "", "get", "Pods", "", "ns1"),
                attrs("admin", "", "watch", "Pods", "", "ns1"),
                attrs("admin", "group1", "watch", "Foobar", "", "ns1"),
                attrs("joe", "admins", "watch", "Foobar", "", "ns1"),
                attrs("joe", "group1,admins", "watch", "Foobar", "", "ns1"),
            ]
        )
    ),
    *(
        pytest.param(ADMIN_IN_NS1, a, False, id=f"admin in ns1 fails elsewhere: {i}")
        for i, a in enumerate(
            [
                attrs("admin", "", "GET", "Pods", "", "ns2"),
                attrs("admin", "", "GET", "Nodes", "", ""),
                attrs("admin", "admins", "GET", "Pods", "", "ns2"),
                attrs("admin", "admins", "GET", "Nodes", "", ""),
            ]
        )
    ),
    # case 1: non-resource URLs
    *(
        pytest.param(NON_RESOURCE, a, True, id=f"non-resource URL passes: {i}")
        for i, a in enumerate(
            [
                url("foo", (), "get", "/apis"),
                url("", ("bar",), "get", "/apis"),
                url("admin", (), "get", "/apis"),
                url("", ("admin",), "get", "/apis"),
                url("admin", (), "watch", "/apis"),
                url("", ("admin",), "watch", "/apis"),
                url("prefixed", (), "get", "/apis/v1"),
                url("", ("prefixed",), "get", "/apis/v1"),
                url("prefixed", (), "get", "/apis/v1/foobar"),
                url("", ("prefixed",), "get", "/apis/v1/foorbar"),
            ]
        )
    ),
    *(
        pytest.param(NON_RESOURCE, a, False, id=f"non-resource URL fails: {what}")
        for what, a in [
            ("wrong verb for a user", url("foo", (), "watch", "/apis")),
            ("wrong verb for a group", url("", ("bar",), "watch", "/apis")),
            ("wrong path for a user", url("foo", (), "get", "/api/v1")),
            ("wrong path for a group", url("", ("bar",), "get", "/api/v1")),
            ("wrong path for admin", url("admin", (), "get", "/api/v1")),
            ("wrong path for the admin group", url("", ("admin",), "get", "/api/v1")),
            ("not covered by the prefix", url("prefixed", (), "get", "/api/v1")),
            ("not covered by the prefix for a group", url("", ("prefixed",), "get", "/api/v1")),
        ]
    ),
    # cases 2-4: subresource resolution
    pytest.param(PODS_ONLY, attrs("admin", "", "get", "pods", "", "ns1"), True, id="pods covers pods"),
    pytest.param(
        PODS_ONLY,
        attrs("admin", "", "get", "pods", "status", "ns1"),
        False,
        id="pods does not cover pods/status",
    ),
    pytest.param(
        POD_STATUS_ONLY,
        attrs("admin", "", "get", "pods", "status", "ns1"),
        True,
        id="pods/status covers itself",
    ),
    pytest.param(
        POD_STATUS_ONLY,
        attrs("admin", "", "get", "pods", "", "ns1"),
        False,
        id="pods/status does not cover pods",
    ),
    pytest.param(
        ANY_SCALE, attrs("admin", "", "get", "pods", "scale", "ns1"), True, id="*/scale covers pods/scale"
    ),
    pytest.param(
        ANY_SCALE,
        attrs("admin", "", "get", "deployments", "scale", "ns1"),
        True,
        id="*/scale covers deployments/scale",
    ),
    pytest.param(
        ANY_SCALE, attrs("admin", "", "get", "pods", "", "ns1"), False, id="*/scale does not cover pods"
    ),
    pytest.param(
        ANY_SCALE,
        attrs("admin", "", "get", "pods", "status", "ns1"),
        False,
        id="*/scale does not cover pods/status",
    ),
]


@pytest.mark.parametrize(("objects", "request_", "allowed"), AUTHORIZER_CASES)
def test_authorizer(objects: list[JSON], request_: tuple, allowed: bool) -> None:
    policy = Policy()
    for obj in objects:
        policy.add_stored(obj)
    user, info = request_
    assert policy.authorize(user, info)[0] is allowed


def rule(
    verbs: tuple[str, ...], groups: tuple[str, ...] = (), resources: tuple[str, ...] = (), urls=()
) -> PolicyRule:
    return PolicyRule(verbs, groups, resources, (), tuple(urls))


def resource_request(verb: str, group: str, resource: str, subresource: str = "") -> RequestInfo:
    return RequestInfo(True, "", verb, "apis", group, "", "", resource, subresource, "")


def url_request(verb: str, path: str) -> RequestInfo:
    return RequestInfo(False, path, verb)


def _grid(
    rule_: PolicyRule, allowed: set[tuple[str, str, str]], subresources: dict[str, str] | None = None
) -> list:
    """The 8 requests of verb1/2 x group1/2 x resource1/2 with the allowed ones."""
    out = []
    for verb in ("verb1", "verb2"):
        for resource in ("resource1", "resource2"):
            for group in ("group1", "group2"):
                sub = (subresources or {}).get(f"{group}/{resource}", "")
                out.append(
                    (rule_, resource_request(verb, group, resource, sub), (verb, group, resource) in allowed)
                )
    return out


RULE_MATCHES = [
    (
        "star verb, exact match other",
        _grid(
            rule(("*",), ("group1",), ("resource1",)),
            {("verb1", "group1", "resource1"), ("verb2", "group1", "resource1")},
        ),
    ),
    (
        "star group, exact match other",
        _grid(
            rule(("verb1",), ("*",), ("resource1",)),
            {("verb1", "group1", "resource1"), ("verb1", "group2", "resource1")},
        ),
    ),
    (
        "star resource, exact match other",
        _grid(
            rule(("verb1",), ("group1",), ("*",)),
            {("verb1", "group1", "resource1"), ("verb1", "group1", "resource2")},
        ),
    ),
    (
        "tuple expansion",
        _grid(
            rule(("verb1", "verb2"), ("group1", "group2"), ("resource1", "resource2")),
            {
                (v, g, r)
                for v in ("verb1", "verb2")
                for g in ("group1", "group2")
                for r in ("resource1", "resource2")
            },
        ),
    ),
    (
        "subresource expansion",
        [
            (rule(("*",), ("*",), ("resource1/subresource1",)), resource_request(v, g, r, s), expected)
            for v in ("verb1", "verb2")
            for g, r, s, expected in (
                ("group1", "resource1", "subresource1", True),
                ("group2", "resource1", "subresource2", False),
                ("group1", "resource2", "subresource1", False),
                ("group2", "resource2", "subresource1", False),
            )
        ],
    ),
    (
        "star nonresource, exact match other",
        [
            (rule(("verb1",), urls=("*",)), url_request(v, p), v == "verb1")
            for v in ("verb1", "verb2")
            for p in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")
        ],
    ),
    (
        "star nonresource subpath",
        [
            (rule(("verb1",), urls=("/foo/*",)), url_request("verb1", p), expected)
            for p, expected in (
                ("/foo", False),
                ("/foo/bar", True),
                ("/foo/baz", True),
                ("/foo/bar/one", True),
                ("/foo/baz/one", True),
                ("/notfoo", False),
                ("/notfoo/bar", False),
                ("/notfoo/baz", False),
                ("/notfoo/bar/one", False),
                ("/notfoo/baz/one", False),
            )
        ],
    ),
    (
        "star verb, exact nonresource",
        [
            (rule(("*",), urls=("/foo", "/foo/bar/one")), url_request(v, p), p in ("/foo", "/foo/bar/one"))
            for v in ("verb1", "verb2")
            for p in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")
        ],
    ),
]


@pytest.mark.parametrize(
    ("rule_", "request_", "expected"),
    [
        pytest.param(r, q, e, id=f"{name}: {q.verb} {q.api_group}/{q.resource}/{q.subresource}{q.path}")
        for name, cases in RULE_MATCHES
        for r, q, e in cases
    ],
)
def test_rule_matches(rule_: PolicyRule, request_: RequestInfo, expected: bool) -> None:
    assert rule_.allows(request_) is expected


def r(groups: list[str], verbs: list[str], resources: list[str], names=(), urls=()) -> PolicyRule:
    return PolicyRule(tuple(verbs), tuple(groups), tuple(resources), tuple(names), tuple(urls))


def u(urls: list[str], verbs: list[str]) -> PolicyRule:
    return PolicyRule(tuple(verbs), non_resource_urls=tuple(urls))


COVERS = [
    pytest.param(
        [r(["v1"], ["get"], ["builds"])], [r(["v1"], ["get"], ["builds"])], True, [], id="exact match"
    ),
    pytest.param(
        [r(["v1"], ["get"], ["*/scale"])],
        [r(["v1"], ["get"], ["foo/scale"])],
        True,
        [],
        id="subresource wildcard",
    ),
    pytest.param(
        [
            r(["v1"], ["delete"], ["deployments"]),
            r(["v1"], ["delete"], ["builds"]),
            r(["v1"], ["update"], ["builds", "deployments"]),
        ],
        [r(["v1"], ["delete", "update"], ["builds", "deployments"])],
        True,
        [],
        id="multiple rules covering a single rule",
    ),
    pytest.param(
        [r([g], ["delete"], ["deployments"]) for g in ("group1", "group2")]
        + [r([g], ["delete"], ["builds"]) for g in ("group1", "group2")]
        + [r([g], ["update"], ["builds", "deployments"]) for g in ("group1", "group2")],
        [r(["group1", "group2"], ["delete", "update"], ["builds", "deployments"])],
        True,
        [],
        id="multiple API groups covering a single rule",
    ),
    pytest.param(
        [r(["group1", "group2"], ["delete", "update"], ["builds", "deployments"])],
        [r([g], ["delete"], ["deployments"]) for g in ("group1", "group2")]
        + [r([g], ["delete"], ["builds"]) for g in ("group1", "group2")]
        + [r([g], ["update"], ["builds", "deployments"]) for g in ("group1", "group2")],
        True,
        [],
        id="a single rule of API groups covering multiple",
    ),
    pytest.param(
        [r(["v1"], ["delete", "update"], ["builds", "deployments"]), r(["v1"], ["delete"], ["pods"])],
        [r(["v1"], ["delete", "update"], ["builds", "deployments", "pods"])],
        False,
        [r(["v1"], ["update"], ["pods"])],
        id="multiple rules missing a single verb-resource combination",
    ),
    pytest.param(
        [r(["*"], ["get"], ["roles"])],
        [r(["group1", "group2"], ["get"], ["roles"])],
        True,
        [],
        id="API group star covering multiple",
    ),
    pytest.param(
        [r(["dummy-group"], ["get"], ["roles"])],
        [r(["*"], ["get"], ["roles"])],
        False,
        [r(["*"], ["get"], ["roles"])],
        id="enumeration not covering API group star",
    ),
    pytest.param(
        [r(["*"], ["get"], ["roles"])],
        [r(["*"], ["get"], ["roles"])],
        True,
        [],
        id="API group star covering star",
    ),
    pytest.param(
        [r(["v1"], ["*"], ["roles"])],
        [r(["v1"], ["watch", "list"], ["roles"])],
        True,
        [],
        id="verb star covering multiple",
    ),
    pytest.param(
        [r(["v1"], ["get", "list", "watch", "create", "update", "delete", "exec"], ["roles"])],
        [r(["v1"], ["*"], ["roles"])],
        False,
        [r(["v1"], ["*"], ["roles"])],
        id="enumeration not covering verb star",
    ),
    pytest.param(
        [r(["v1"], ["*"], ["roles"])], [r(["v1"], ["*"], ["roles"])], True, [], id="verb star covering star"
    ),
    pytest.param(
        [r(["v1"], ["get"], ["*"])],
        [r(["v1"], ["get"], ["resourcegroup:deployments"])],
        True,
        [],
        id="resource star covering multiple",
    ),
    pytest.param(
        [r(["v1"], ["get"], ["roles", "resourcegroup:deployments"])],
        [r(["v1"], ["get"], ["*"])],
        False,
        [r(["v1"], ["get"], ["*"])],
        id="enumeration not covering resource star",
    ),
    pytest.param(
        [r(["v1"], ["get"], ["*"])], [r(["v1"], ["get"], ["*"])], True, [], id="resource star covering star"
    ),
    pytest.param(
        [r(["v1"], ["get"], ["pods"])],
        [r(["v1"], ["get"], ["pods"], ["foo", "bar"])],
        True,
        [],
        id="an empty resource name list covering names",
    ),
    pytest.param(
        [r(["v1"], ["get"], ["pods"], ["foo", "bar"])],
        [r(["v1"], ["get"], ["pods"])],
        False,
        [r(["v1"], ["get"], ["pods"])],
        id="enumerated names not covering an empty list",
    ),
    pytest.param([u(["/apis"], ["*"])], [u(["/apis"], ["*"])], True, [], id="non-resource URLs"),
    pytest.param(
        [u(["*"], ["*"])], [u(["/apis", "/apis/v1", "/"], ["*"])], True, [], id="non-resource URL star"
    ),
    pytest.param(
        [u(["/apis/*"], ["*"])],
        [u(["/apis", "/apis/v1"], ["get"])],
        False,
        [u(["/apis"], ["get"])],
        id="a star after a prefix does not cover the prefix",
    ),
    pytest.param(
        [u(["/apis/*"], ["*"])],
        [u(["/apis/v1/foo", "/apis/v1"], ["get"])],
        True,
        [],
        id="a star after a prefix",
    ),
    pytest.param(
        [r(["v1"], ["get"], ["builds"], urls=["/apis"])],
        [r(["v1"], ["get"], ["builds"], urls=["/apis"])],
        True,
        [],
        id="non-resource URLs with other fields",
    ),
    pytest.param(
        [r(["v1"], ["get"], ["builds"])],
        [r(["v1"], ["get"], ["builds"], urls=["/apis"])],
        False,
        [u(["/apis"], ["get"])],
        id="non-resource URLs with other fields, not covered",
    ),
]


@pytest.mark.parametrize(("owner", "servant", "covered", "uncovered"), COVERS)
def test_covers(
    owner: list[PolicyRule], servant: list[PolicyRule], covered: bool, uncovered: list[PolicyRule]
) -> None:
    result, missing = covers(owner, servant)
    assert result is covered
    assert sorted(missing, key=repr) == sorted(uncovered, key=repr)


@pytest.mark.parametrize(
    ("owner", "requested", "want"),
    [
        pytest.param(o, q, w, id=f"{o!r} covers {q!r}: {w}")
        for o, q, w in [
            ("*", "", True),
            ("*", "/", True),
            ("*", "/api", True),
            ("/*", "", False),
            ("/*", "/", True),
            ("/*", "/foo", True),
            ("/api", "/api", True),
            ("/apis", "/api", False),
            ("/api/v1", "/api", False),
            ("/api/v1", "/api/v1", True),
            ("/api/*", "/api/v1", True),
            ("/api/*", "/api", False),
            ("/api/*/*", "/api/v1", False),
            ("/*/v1/*", "/api/v1", False),
        ]
    ],
)
def test_non_resource_url_covers(owner: str, requested: str, want: bool) -> None:
    assert _url_covers(owner, requested) is want


def test_compact_rules_merges_single_resource_rules_by_verb() -> None:
    """policy_compact_test.go: simple rules of one group/resource merge their verbs; others stay."""
    rules = [
        r([""], ["get"], ["pods"]),
        r([""], ["list"], ["pods"]),
        r(["apps"], ["get"], ["deployments"]),
        r([""], ["get"], ["pods"], ["p1"]),
        u(["/healthz"], ["get"]),
    ]
    assert compact_rules(rules) == [
        r([""], ["get"], ["pods"], ["p1"]),
        u(["/healthz"], ["get"]),
        r([""], ["get", "list"], ["pods"]),
        r(["apps"], ["get"], ["deployments"]),
    ]


def test_the_escalation_message_lists_the_compacted_missing_rules_sorted() -> None:
    user = UserInfo("alice", "", ("dev", "system:authenticated"))
    missing = [
        r([""], ["delete"], ["pods"]),
        r([""], ["create"], ["pods"]),
        r(["apps"], ["get"], ["deployments"], ["web"]),
        u(["/metrics"], ["get"]),
    ]
    assert escalation_message(user, missing, []) == (
        'user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not '
        "currently held:\n"
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "create"]}\n'
        '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["get"]}\n'
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}'
    )
    assert escalation_message(
        user, missing[:1], ['clusterrole.rbac.authorization.k8s.io "x" not found']
    ).endswith('; resolution errors: [clusterrole.rbac.authorization.k8s.io "x" not found]')
