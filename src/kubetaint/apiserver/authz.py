"""Authorization: `--authorization-mode` AlwaysAllow or Node,RBAC, tried in order after the
`system:masters` superuser group, with upstream's 403 message, and the rules each authorizer
can list for SelfSubjectRulesReview
(mirrors apiserver/pkg/authorization/union, authorizerfactory.NewPrivilegedGroups and
NewAlwaysAllowAuthorizer, plugin/pkg/auth/authorizer/node/node_authorizer.go with
AuthorizeNodeWithSelectors on, and apiserver/pkg/endpoints/handlers/responsewriters/errors.go
forbiddenMessage).

The Node authorizer's graph is reduced to what kubetaint serves: a node may read a pod bound to
it (`spec.nodeName`), found through `pod_node(namespace, name)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubetaint.api import errors
from kubetaint.apiserver.authn import MASTERS_GROUP, UserInfo
from kubetaint.apiserver.modes import MODES
from kubetaint.apiserver.rbac import Policy, PolicyRule, aggregate
from kubetaint.apiserver.requestinfo import RequestInfo, exact_match

NODE_LEASE_NAMESPACE = "kube-node-lease"
#: (allowed, reason): a denial's reason is appended to the 403 message when not empty.
Decision = tuple[bool, str]
PodNode = Callable[[str, str], "str | None"]
#: The current RBAC policy (the stored objects', kept current by informers).
PolicySource = Callable[[], Policy]
_READ = ("get", "list", "watch")

#: system:node's static rules (bootstrappolicy.NodeRules) for the resources the Node authorizer
#: does not subdivide.
NODE_RULES = (
    PolicyRule(("create",), ("authentication.k8s.io",), ("tokenreviews",)),
    PolicyRule(("create",), ("authorization.k8s.io",), ("subjectaccessreviews", "localsubjectaccessreviews")),
    PolicyRule(_READ, ("",), ("services",)),
    PolicyRule(("create", "get", "list", "watch"), ("",), ("nodes",)),
    PolicyRule(("update", "patch"), ("",), ("nodes/status",)),
    PolicyRule(("update", "patch"), ("",), ("nodes",)),
    PolicyRule(("create", "update", "patch"), ("",), ("events",)),
    PolicyRule(("create", "update", "patch"), ("events.k8s.io",), ("events",)),
    PolicyRule(_READ, ("",), ("pods",)),
    PolicyRule(("create", "delete"), ("",), ("pods",)),
    PolicyRule(("update", "patch"), ("",), ("pods/status",)),
    PolicyRule(("create",), ("",), ("pods/eviction",)),
    PolicyRule(_READ, ("",), ("secrets", "configmaps")),
    PolicyRule(("get",), ("",), ("endpoints",)),
    PolicyRule(("get", "create", "update", "patch", "delete"), ("coordination.k8s.io",), ("leases",)),
    PolicyRule(_READ, ("node.k8s.io",), ("runtimeclasses",)),
)


@dataclass
class Rules:
    """authorizer.RuleResolver's answer: the rules a user has in a namespace (resource rules
    and non-resource rules), whether the list is incomplete, and the errors met."""

    resource_rules: list[PolicyRule] = field(default_factory=list)
    non_resource_rules: list[PolicyRule] = field(default_factory=list)
    incomplete: bool = False
    errors: list[str] = field(default_factory=list)

    def extend(self, other: Rules) -> None:
        self.resource_rules += other.resource_rules
        self.non_resource_rules += other.non_resource_rules
        self.incomplete = self.incomplete or other.incomplete
        self.errors += other.errors


class Authorizer(Protocol):
    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision: ...

    def rules_for(self, user: UserInfo, namespace: str) -> Rules: ...


class AlwaysAllow:
    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision:
        return True, ""

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules([PolicyRule(("*",), ("*",), ("*",))], [PolicyRule(("*",), non_resource_urls=("*",))])


class PrivilegedGroups:
    """Members of `system:masters` may do anything (not a rule resolver upstream: their rules
    come from the cluster-admin binding)."""

    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision:
        return MASTERS_GROUP in user.groups, ""

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


class RBACAuthorizer:
    def __init__(self, policy: PolicySource) -> None:
        self.policy = policy

    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision:
        return self.policy().authorize(user, info)

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """RBACAuthorizer.RulesFor: a rule with resources is a resource rule, one with
        non-resource URLs a non-resource rule."""
        rules, errors = self.policy().rules_for(user, namespace)
        out = Rules()
        for rule in rules:
            if rule.resources:
                out.resource_rules.append(rule)
            if rule.non_resource_urls:
                out.non_resource_rules.append(rule)
        if errors:
            out.errors.append(aggregate(errors))
        return out


class NodeAuthorizer:
    """Requests of `system:node:<name>` users: the node's own Node object and Lease, pods bound
    to it (list/watch only with a `spec.nodeName=<name>` field selector), and NODE_RULES."""

    def __init__(self, pod_node: PodNode) -> None:
        self.pod_node = pod_node

    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision:
        node = user.node_name()
        if node is None:
            return False, ""
        if not node:
            return False, f'unknown node for user "{user.name}"'
        if info.is_resource_request:
            group_resource = (info.api_group, info.resource)
            if group_resource == ("coordination.k8s.io", "leases"):
                return _lease(node, info)
            if group_resource == ("", "nodes"):
                return _node(node, info)
            if group_resource == ("", "pods"):
                return self._pod(node, info)
        return any(rule.allows(info) for rule in NODE_RULES), ""

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """Nodes' permissions are not enumerable: incomplete, with upstream's error."""
        if user.node_name() is None:
            return Rules()
        return Rules(incomplete=True, errors=["node authorizer does not support user rule resolution"])

    def _pod(self, node: str, info: RequestInfo) -> Decision:
        if info.subresource == "":
            if info.verb == "get":
                return self._related_pod(node, info)
            if info.verb in ("list", "watch"):
                if exact_match(info.field_selector, "spec.nodeName") == node:
                    return True, ""
                if info.name:
                    return self._related_pod(node, info)
                return False, "can only list/watch pods with spec.nodeName field selector"
            if info.verb in ("create", "delete"):
                return True, ""  # mirror pods; NodeRestriction limits them to the node
            return False, ""
        allowed = (info.subresource, info.verb) in (
            ("status", "update"),
            ("status", "patch"),
            ("eviction", "create"),
        )
        return allowed, ""

    def _related_pod(self, node: str, info: RequestInfo) -> Decision:
        if info.subresource:
            return False, "cannot get subresource"
        if not info.name:
            return False, "No Object name found"
        if self.pod_node(info.namespace, info.name) != node:
            return False, f"no relationship found between node '{node}' and this object"
        return True, ""


def _lease(node: str, info: RequestInfo) -> Decision:
    if info.verb not in ("get", "create", "update", "patch", "delete"):
        return False, "can only get, create, update, patch, or delete a node lease"
    if info.namespace != NODE_LEASE_NAMESPACE:
        return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
    if info.verb != "create" and info.name != node:
        return False, "can only access node lease with the same name as the requesting node"
    return True, ""


def _node(node: str, info: RequestInfo) -> Decision:
    if info.subresource == "":
        if info.verb in ("create", "update", "patch"):
            return True, ""  # NodeRestriction limits writes to the node's own object
        if info.verb in ("get", "list", "watch"):
            if info.name == node:
                return True, ""
            if not info.name:
                return False, f"node '{node}' cannot read all nodes, only its own Node object"
            return False, f"node '{node}' cannot read '{info.name}', only its own Node object"
    elif info.subresource == "status" and info.verb in ("update", "patch"):
        return True, ""
    return False, ""


class Union:
    """The first authorizer that allows wins, with its reason; else the reasons of all, one
    per line. Rules are those of every authorizer."""

    def __init__(self, authorizers: Sequence[Authorizer]) -> None:
        self.authorizers = list(authorizers)

    def authorize(self, user: UserInfo, info: RequestInfo) -> Decision:
        reasons = []
        for authorizer in self.authorizers:
            allowed, reason = authorizer.authorize(user, info)
            if allowed:
                return True, reason
            if reason:
                reasons.append(reason)
        return False, "\n".join(reasons)

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        out = Rules()
        for authorizer in self.authorizers:
            out.extend(authorizer.rules_for(user, namespace))
        return out


def build_authorizer(modes: Sequence[str], policy: Policy | PolicySource, pod_node: PodNode) -> Authorizer:
    """The union for `--authorization-mode` (e.g. ["Node", "RBAC"]), after system:masters."""
    chain: list[Authorizer] = [PrivilegedGroups()]
    for mode in modes:
        if mode == "AlwaysAllow":
            chain.append(AlwaysAllow())
        elif mode == "Node":
            chain.append(NodeAuthorizer(pod_node))
        elif mode == "RBAC":
            chain.append(RBACAuthorizer(policy if callable(policy) else (lambda: policy)))
        else:
            raise ValueError(f'authorization-mode "{mode}" is not a valid mode: {", ".join(MODES)}')
    return Union(chain)


def forbidden_message(user: UserInfo, info: RequestInfo) -> str:
    if not info.is_resource_request:
        return f'User "{user.name}" cannot {info.verb} path "{info.path}"'
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    where = f'in the namespace "{info.namespace}"' if info.namespace else "at the cluster scope"
    return (
        f'User "{user.name}" cannot {info.verb} resource "{resource}" in API group "{info.api_group}" {where}'
    )


def forbidden(user: UserInfo, info: RequestInfo, reason: str) -> errors.StatusError:
    """responsewriters.Forbidden: apierrors.NewForbidden(group resource, name, message[: reason])."""
    message = forbidden_message(user, info)
    if reason:
        message = f"{message}: {reason}"
    return forbidden_error(info.resource, info.api_group, info.name, message)


def forbidden_error(resource: str, group: str, name: str, message: str) -> errors.StatusError:
    """apierrors.NewForbidden."""
    qualified = f"{resource}.{group}" if group else resource
    if not qualified:
        text = f"forbidden: {message}"
    elif not name:
        text = f"{qualified} is forbidden: {message}"
    else:
        text = f'{qualified} "{name}" is forbidden: {message}'
    return errors.StatusError(403, "Forbidden", text, name=name, group=group, kind=resource)
