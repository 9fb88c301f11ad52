"""Upstream's bootstrap ClusterRoles and ClusterRoleBindings that matter for what kubetaint
serves (mirrors plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go as its
testdata/cluster-roles.yaml and cluster-role-bindings.yaml render it): cluster-admin bound to
system:masters; the aggregated admin/edit/view and their system:aggregate-to-* parts;
system:basic-user, system:discovery, system:public-info-viewer and system:monitoring with their
bindings; system:node (bound to nobody: the Node authorizer decides for nodes); the
kube-scheduler's and kube-controller-manager's roles bound to their users; system:auth-delegator.

Upstream's other bootstrap roles (certificates, kube-dns, kube-proxy, volume provisioning,
heapster, the per-controller roles) are about components kubetaint does not run.
"""

from __future__ import annotations

from typing import Any

from kubetaint.apiserver.rbac import RBAC_GROUP

JSON = dict[str, Any]
BOOTSTRAPPING_LABEL = "kubernetes.io/bootstrapping"
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"
_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def _rule(verbs: list[str], groups: list[str], resources: list[str], names: list[str] | None = None) -> JSON:
    rule: JSON = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return rule


def _urls(verbs: list[str], urls: list[str]) -> JSON:
    return {"nonResourceURLs": urls, "verbs": verbs}


def _meta(name: str, labels: dict[str, str] | None = None) -> JSON:
    return {
        "name": name,
        "labels": {BOOTSTRAPPING_LABEL: "rbac-defaults", **(labels or {})},
        "annotations": {AUTOUPDATE_ANNOTATION: "true"},
    }


def _role(name: str, rules: list[JSON], *, to: str = "", aggregate: str = "") -> JSON:
    labels = {AGGREGATE_TO + to: "true"} if to else None
    role: JSON = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": _meta(name, labels)}
    if aggregate:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]
        }
        role["rules"] = []
    else:
        role["rules"] = rules
    return role


_AGGREGATE_TO_VIEW = [
    _rule(
        _READ,
        [""],
        [
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
        ],
    ),
    _rule(
        _READ,
        [""],
        [
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ],
    ),
    _rule(_READ, [""], ["namespaces"]),
    _rule(_READ, ["discovery.k8s.io"], ["endpointslices"]),
    _rule(
        _READ,
        ["apps"],
        [
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ],
    ),
    _rule(_READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    _rule(_READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    _rule(
        _READ,
        ["extensions"],
        [
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
        ],
    ),
    _rule(_READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    _rule(_READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
]

_AGGREGATE_TO_EDIT = [
    _rule(
        _READ,
        [""],
        ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"],
    ),
    _rule(["impersonate"], [""], ["serviceaccounts"]),
    _rule(_WRITE, [""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(
        _WRITE,
        [""],
        [
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ],
    ),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(
        _WRITE,
        ["apps"],
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
    ),
    _rule(_WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
    _rule(_WRITE, ["batch"], ["cronjobs", "jobs"]),
    _rule(
        _WRITE,
        ["extensions"],
        [
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "ingresses",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
        ],
    ),
    _rule(_WRITE, ["policy"], ["poddisruptionbudgets"]),
    _rule(_WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
    _rule(_ALL, ["coordination.k8s.io"], ["leases"]),
]

_AGGREGATE_TO_ADMIN = [
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
    _rule(_ALL, [RBAC_GROUP], ["rolebindings", "roles"]),
]

_EVENTS_WRITE = _rule(["create", "patch", "update"], ["", "events.k8s.io"], ["events"])
_REVIEWS = [
    _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    _rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
]

_NODE = [
    _rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    _rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews", "subjectaccessreviews"]),
    _rule(_READ, [""], ["services"]),
    _rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    _rule(["patch", "update"], [""], ["nodes/status"]),
    _rule(["patch", "update"], [""], ["nodes"]),
    _rule(["create", "patch", "update"], [""], ["events"]),
    _rule(_READ, [""], ["pods"]),
    _rule(["create", "delete"], [""], ["pods"]),
    _rule(["patch", "update"], [""], ["pods/status"]),
    _rule(["create"], [""], ["pods/eviction"]),
    _rule(_READ, [""], ["configmaps", "secrets"]),
    _rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
    _rule(["get"], [""], ["endpoints"]),
    _rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    _rule(["create", "delete", "get", "patch", "update"], ["coordination.k8s.io"], ["leases"]),
    _rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
    _rule(["get", "patch", "update"], [""], ["persistentvolumeclaims/status"]),
    _rule(_READ, ["storage.k8s.io"], ["csidrivers"]),
    _rule(["create", "delete", "get", "patch", "update"], ["storage.k8s.io"], ["csinodes"]),
    _rule(_READ, ["node.k8s.io"], ["runtimeclasses"]),
]

_KUBE_SCHEDULER = [
    _EVENTS_WRITE,
    _rule(["create"], ["coordination.k8s.io"], ["leases"]),
    _rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-scheduler"]),
    _rule(_READ, [""], ["nodes"]),
    _rule(["delete", "get", "list", "watch"], [""], ["pods"]),
    _rule(["create"], [""], ["bindings", "pods/binding"]),
    _rule(["patch", "update"], [""], ["pods/status"]),
    _rule(_READ, [""], ["replicationcontrollers", "services"]),
    _rule(_READ, ["apps", "extensions"], ["replicasets"]),
    _rule(_READ, ["apps"], ["statefulsets"]),
    _rule(_READ, ["policy"], ["poddisruptionbudgets"]),
    _rule(_READ, [""], ["persistentvolumeclaims", "persistentvolumes"]),
    *_REVIEWS,
    _rule(_READ, ["storage.k8s.io"], ["csinodes"]),
    _rule(_READ, [""], ["namespaces"]),
    _rule(_READ, ["storage.k8s.io"], ["csidrivers"]),
    _rule(_READ, ["storage.k8s.io"], ["csistoragecapacities"]),
]

_KUBE_CONTROLLER_MANAGER = [
    _EVENTS_WRITE,
    _rule(["create"], ["coordination.k8s.io"], ["leases"]),
    _rule(["get", "update"], ["coordination.k8s.io"], ["leases"], ["kube-controller-manager"]),
    _rule(["create"], [""], ["secrets", "serviceaccounts"]),
    _rule(["delete"], [""], ["secrets"]),
    _rule(["get"], [""], ["configmaps", "namespaces", "secrets", "serviceaccounts"]),
    _rule(["update"], [""], ["secrets", "serviceaccounts"]),
    *_REVIEWS,
    _rule(["list", "watch"], ["*"], ["*"]),
    _rule(["create"], [""], ["serviceaccounts/token"]),
]


def cluster_roles() -> list[JSON]:
    """The bootstrap ClusterRoles, by name (aggregated roles with empty rules: the
    clusterrole-aggregation controller fills them)."""
    roles = [
        _role("admin", [], aggregate="admin"),
        _role("cluster-admin", [_rule(["*"], ["*"], ["*"]), _urls(["*"], ["*"])]),
        _role("edit", [], to="admin", aggregate="edit"),
        _role("system:aggregate-to-admin", _AGGREGATE_TO_ADMIN, to="admin"),
        _role("system:aggregate-to-edit", _AGGREGATE_TO_EDIT, to="edit"),
        _role("system:aggregate-to-view", _AGGREGATE_TO_VIEW, to="view"),
        _role("system:auth-delegator", _REVIEWS),
        _role(
            "system:basic-user",
            [
                _rule(
                    ["create"],
                    ["authorization.k8s.io"],
                    ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                _rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"]),
            ],
        ),
        _role(
            "system:discovery",
            [
                _urls(
                    ["get"],
                    [
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/",
                    ],
                )
            ],
        ),
        _role("system:kube-controller-manager", _KUBE_CONTROLLER_MANAGER),
        _role("system:kube-scheduler", _KUBE_SCHEDULER),
        _role(
            "system:monitoring",
            [
                _urls(
                    ["get"],
                    [
                        "/healthz",
                        "/healthz/*",
                        "/livez",
                        "/livez/*",
                        "/metrics",
                        "/metrics/slis",
                        "/readyz",
                        "/readyz/*",
                    ],
                )
            ],
        ),
        _role("system:node", _NODE),
        _role(
            "system:public-info-viewer",
            [_urls(["get"], ["/healthz", "/livez", "/readyz", "/version", "/version/"])],
        ),
        _role(
            "system:volume-scheduler",
            [
                _rule(["get", "list", "patch", "update", "watch"], [""], ["persistentvolumes"]),
                _rule(_READ, ["storage.k8s.io"], ["storageclasses"]),
                _rule(["get", "list", "patch", "update", "watch"], [""], ["persistentvolumeclaims"]),
            ],
        ),
        _role("view", [], to="edit", aggregate="view"),
    ]
    return roles


def _binding(name: str, *subjects: tuple[str, str]) -> JSON:
    binding: JSON = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": _meta(name),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
    }
    if subjects:
        binding["subjects"] = [{"apiGroup": RBAC_GROUP, "kind": kind, "name": who} for kind, who in subjects]
    return binding


def cluster_role_bindings() -> list[JSON]:
    """The bootstrap ClusterRoleBindings, by name (system:node binds nobody: nodes are
    authorized by the Node authorizer)."""
    return [
        _binding("cluster-admin", ("Group", "system:masters")),
        _binding("system:basic-user", ("Group", "system:authenticated")),
        _binding("system:discovery", ("Group", "system:authenticated")),
        _binding("system:kube-controller-manager", ("User", "system:kube-controller-manager")),
        _binding("system:kube-scheduler", ("User", "system:kube-scheduler")),
        _binding("system:monitoring", ("Group", "system:monitoring")),
        _binding("system:node"),
        _binding(
            "system:public-info-viewer",
            ("Group", "system:authenticated"),
            ("Group", "system:unauthenticated"),
        ),
        _binding("system:volume-scheduler", ("User", "system:kube-scheduler")),
    ]
