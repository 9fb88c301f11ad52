"""A subset of RBAC: ClusterRoles, Roles and their bindings, loaded from a policy file plus
upstream's bootstrap roles (mirrors plugin/pkg/auth/authorizer/rbac/rbac.go and
rbac/v1/evaluation_helpers.go; roles from plugin/pkg/auth/authorizer/rbac/bootstrappolicy).

The policy file (`--rbac-policy-file`) is YAML: rbac.authorization.k8s.io/v1 ClusterRole,
ClusterRoleBinding, Role and RoleBinding objects as separate documents or in a `kind: List`.
Aggregation rules are not evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubetaint.apiserver.authn import AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP, UserInfo
from kubetaint.apiserver.requestinfo import RequestInfo

RBAC_GROUP = "rbac.authorization.k8s.io"
_READ = ("get", "list", "watch")
_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


class PolicyFileError(Exception):
    """An RBAC policy file that cannot be read or has a malformed object."""


@dataclass(frozen=True, slots=True)
class PolicyRule:
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def allows(self, info: RequestInfo) -> bool:
        """RuleAllows."""
        if not _verb_matches(self, info.verb):
            return False
        if not info.is_resource_request:
            return _non_resource_url_matches(self, info.path)
        combined = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        return (
            ("*" in self.api_groups or info.api_group in self.api_groups)
            and _resource_matches(self, combined, info.subresource)
            and (not self.resource_names or info.name in self.resource_names)
        )


def _verb_matches(rule: PolicyRule, verb: str) -> bool:
    return "*" in rule.verbs or verb in rule.verbs


def _resource_matches(rule: PolicyRule, combined: str, subresource: str) -> bool:
    for resource in rule.resources:
        if resource in ("*", combined):
            return True
        if subresource and resource == "*/" + subresource:
            return True
    return False


def _non_resource_url_matches(rule: PolicyRule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url in ("*", path):
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Subject:
    kind: str  # User, Group or ServiceAccount
    name: str
    namespace: str = ""

    def applies_to(self, user: UserInfo, namespace: str) -> bool:
        """appliesToUser."""
        if self.kind == "User":
            return user.name == self.name
        if self.kind == "Group":
            return self.name in user.groups
        if self.kind == "ServiceAccount":
            sa_namespace = self.namespace or namespace
            return bool(sa_namespace) and user.name == f"system:serviceaccount:{sa_namespace}:{self.name}"
        return False


@dataclass(frozen=True, slots=True)
class Binding:
    name: str
    role_kind: str  # ClusterRole or Role
    role_name: str
    subjects: tuple[Subject, ...]
    namespace: str = ""  # "" for a ClusterRoleBinding


@dataclass
class Policy:
    """Roles by (namespace, name) — namespace "" for ClusterRoles — and bindings."""

    roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)

    def add(self, obj: dict[str, Any]) -> None:
        """Add one rbac.authorization.k8s.io/v1 object."""
        kind = obj.get("kind")
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        name = str(meta.get("name") or "")
        namespace = str(meta.get("namespace") or "") if kind in ("Role", "RoleBinding") else ""
        if kind not in _KINDS or not name:
            raise PolicyFileError(f"expected a named {', '.join(_KINDS)} object, got kind {kind!r}")
        if kind in ("Role", "RoleBinding") and not namespace:
            raise PolicyFileError(f"{kind} {name!r} needs metadata.namespace")
        if kind in ("ClusterRole", "Role"):
            self.roles[(namespace, name)] = tuple(_rule(r, name) for r in obj.get("rules") or [])
        else:
            self.bindings.append(_binding(obj, name, namespace))

    def authorize(self, user: UserInfo, info: RequestInfo) -> tuple[bool, str]:
        """(allowed, reason): RBAC allows when a binding that applies to the user grants a rule
        that allows the request; the reason names roles that bindings refer to but are missing."""
        missing: list[str] = []
        for binding in self.bindings:
            if binding.namespace and binding.namespace != info.namespace:
                continue
            if not any(s.applies_to(user, binding.namespace) for s in binding.subjects):
                continue
            role_ns = binding.namespace if binding.role_kind == "Role" else ""
            rules = self.roles.get((role_ns, binding.role_name))
            if rules is None:
                missing.append(f'{binding.role_kind.lower()}.{RBAC_GROUP} "{binding.role_name}" not found')
                continue
            if any(rule.allows(info) for rule in rules):
                return True, ""
        reason = ""
        if missing:
            reason = "RBAC: " + (missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]")
        return False, reason


def _strings(value: Any, what: str, owner: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyFileError(f"{owner}: {what} must be a list of strings")
    return tuple(value)


def _rule(raw: Any, owner: str) -> PolicyRule:
    if not isinstance(raw, dict):
        raise PolicyFileError(f"{owner}: each rule must be an object")
    rule = PolicyRule(
        verbs=_strings(raw.get("verbs"), "verbs", owner),
        api_groups=_strings(raw.get("apiGroups"), "apiGroups", owner),
        resources=_strings(raw.get("resources"), "resources", owner),
        resource_names=_strings(raw.get("resourceNames"), "resourceNames", owner),
        non_resource_urls=_strings(raw.get("nonResourceURLs"), "nonResourceURLs", owner),
    )
    if not rule.verbs:
        raise PolicyFileError(f"{owner}: rules[].verbs: Required value")
    return rule


def _binding(obj: dict[str, Any], name: str, namespace: str) -> Binding:
    ref = obj.get("roleRef")
    if not isinstance(ref, dict) or ref.get("kind") not in ("ClusterRole", "Role") or not ref.get("name"):
        raise PolicyFileError(f"{name}: roleRef must name a ClusterRole or Role")
    if ref["kind"] == "Role" and not namespace:
        raise PolicyFileError(f"{name}: a ClusterRoleBinding can only refer to a ClusterRole")
    subjects = []
    for raw in obj.get("subjects") or []:
        if not isinstance(raw, dict) or raw.get("kind") not in ("User", "Group", "ServiceAccount"):
            raise PolicyFileError(f"{name}: subjects[].kind must be User, Group or ServiceAccount")
        subjects.append(
            Subject(str(raw["kind"]), str(raw.get("name") or ""), str(raw.get("namespace") or ""))
        )
    return Binding(name, str(ref["kind"]), str(ref["name"]), tuple(subjects), namespace)


def load_policy_file(path: str | Path, policy: Policy | None = None) -> Policy:
    """Add the objects of a YAML policy file to `policy` (the bootstrap policy by default)."""
    policy = policy if policy is not None else bootstrap_policy()
    try:
        docs = list(yaml.safe_load_all(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        detail = " ".join(str(exc).split())
        raise PolicyFileError(f"cannot read RBAC policy file '{path}': {detail}") from None
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise PolicyFileError(f"{path}: every document must be an object")
        items = doc.get("items") if doc.get("kind") == "List" else [doc]
        for item in items or []:
            if not isinstance(item, dict):
                raise PolicyFileError(f"{path}: every item must be an object")
            try:
                policy.add(item)
            except PolicyFileError as exc:
                raise PolicyFileError(f"{path}: {exc}") from None
    return policy


# Bootstrap policy: the upstream roles that matter for the served resources --------------------

_DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*")
_HEALTH_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")

#: `view` as aggregated upstream (system:aggregate-to-view), for the resources kubetaint serves
#: and their neighbours: namespaced workload objects only — no nodes, leases, priorityclasses
#: or secrets.
VIEW_RULES = (
    PolicyRule(
        _READ,
        ("",),
        (
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
        ),
    ),
    PolicyRule(
        _READ,
        ("",),
        (
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ),
    ),
    PolicyRule(_READ, ("",), ("namespaces",)),
    PolicyRule(
        _READ,
        ("apps",),
        (
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
        ),
    ),
    PolicyRule(_READ, ("policy",), ("poddisruptionbudgets", "poddisruptionbudgets/status")),
    PolicyRule(_READ, ("discovery.k8s.io",), ("endpointslices",)),
)


def bootstrap_policy() -> Policy:
    """cluster-admin (bound to system:masters), view, system:discovery and
    system:public-info-viewer with their upstream bindings."""
    policy = Policy()
    policy.roles[("", "cluster-admin")] = (
        PolicyRule(("*",), ("*",), ("*",)),
        PolicyRule(("*",), non_resource_urls=("*",)),
    )
    policy.roles[("", "view")] = VIEW_RULES
    policy.roles[("", "system:discovery")] = (PolicyRule(("get",), non_resource_urls=_DISCOVERY_URLS),)
    policy.roles[("", "system:public-info-viewer")] = (PolicyRule(("get",), non_resource_urls=_HEALTH_URLS),)
    policy.bindings += [
        Binding("cluster-admin", "ClusterRole", "cluster-admin", (Subject("Group", MASTERS_GROUP),)),
        Binding(
            "system:discovery", "ClusterRole", "system:discovery", (Subject("Group", AUTHENTICATED_GROUP),)
        ),
        Binding(
            "system:public-info-viewer",
            "ClusterRole",
            "system:public-info-viewer",
            (Subject("Group", AUTHENTICATED_GROUP), Subject("Group", UNAUTHENTICATED_GROUP)),
        ),
    ]
    return policy
