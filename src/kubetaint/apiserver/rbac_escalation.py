"""RBAC's privilege-escalation prevention: a user may create or update a Role or ClusterRole
only with rules it already holds (or with the `escalate` verb on it), and a binding only to a
role whose rules it holds (or with the `bind` verb on that role); system:masters may do
anything (mirrors pkg/registry/rbac/escalation_check.go, role/policybased,
clusterrole/policybased, rolebinding/policybased, clusterrolebinding/policybased,
pkg/registry/rbac/validation/rule.go ConfirmNoEscalation and policy_compact.go, and
component-helpers/auth/rbac/validation/policy_comparator.go Covers).

`EscalationCheck` is the RBAC resources' storage check on the write path (`registry.WriteCheck`,
as upstream's policy-based storage wraps the RBAC REST storage): it reads the writer from the
admission attributes (`Attributes.user`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kubetaint.admission import CREATE, UPDATE, Attributes
from kubetaint.api import errors
from kubetaint.apiserver.authn import MASTERS_GROUP, UserInfo
from kubetaint.apiserver.authz import Authorizer, PolicySource
from kubetaint.apiserver.rbac import RBAC_GROUP, PolicyRule, aggregate, go_string_slice
from kubetaint.apiserver.requestinfo import RequestInfo
from kubetaint.registry import Registry

JSON = dict[str, Any]
ROLE_KINDS = {"roles": "Role", "clusterroles": "ClusterRole"}
BINDING_KINDS = {"rolebindings": "RoleBinding", "clusterrolebindings": "ClusterRoleBinding"}
FULL_AUTHORITY = (PolicyRule(("*",), ("*",), ("*",)), PolicyRule(("*",), non_resource_urls=("*",)))
AGGREGATION_MESSAGE = "must have cluster-admin privileges to use the aggregationRule"


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """BreakdownRule: one rule per group, resource, verb (and resource name); one per
    non-resource URL and verb."""
    out = []
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                if rule.resource_names:
                    out += [
                        PolicyRule((verb,), (group,), (resource,), (name,)) for name in rule.resource_names
                    ]
                else:
                    out.append(PolicyRule((verb,), (group,), (resource,)))
    for url in rule.non_resource_urls:
        out += [PolicyRule((verb,), non_resource_urls=(url,)) for verb in rule.verbs]
    return out


def _has_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    return set(wanted) <= set(owned)


def _resources_cover(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    """resourceCoversAll: `*`, an exact match, or `*/<subresource>` for a subresource."""
    if "*" in owned or _has_all(owned, wanted):
        return True
    for path in wanted:
        if path in owned:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owned:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: PolicyRule, sub: PolicyRule) -> bool:
    """ruleCovers: whether `owner` covers the broken-down rule `sub`."""
    verbs = "*" in owner.verbs or _has_all(owner.verbs, sub.verbs)
    groups = "*" in owner.api_groups or _has_all(owner.api_groups, sub.api_groups)
    resources = _resources_cover(owner.resources, sub.resources)
    urls = all(any(_url_covers(o, p) for o in owner.non_resource_urls) for p in sub.non_resource_urls)
    if not sub.resource_names:
        names = not owner.resource_names
    else:
        names = not owner.resource_names or _has_all(owner.resource_names, sub.resource_names)
    return verbs and groups and resources and names and urls


def covers(
    owner_rules: Sequence[PolicyRule], servant_rules: Sequence[PolicyRule]
) -> tuple[bool, list[PolicyRule]]:
    """Covers: whether the owner's rules cover every servant rule, and the uncovered pieces."""
    missing = [
        sub
        for rule in servant_rules
        for sub in breakdown(rule)
        if not any(rule_covers(owner, sub) for owner in owner_rules)
    ]
    return not missing, missing


def compact_rules(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """CompactRules: rules of one group and one resource (nothing else) merged, verbs
    appended; the merged ones after the others (their order is Go's map order, which the
    sorted message below hides)."""
    compacted: list[PolicyRule] = []
    simple: dict[tuple[str, str], PolicyRule] = {}
    for rule in rules:
        if (
            len(rule.api_groups) == 1
            and len(rule.resources) == 1
            and not rule.resource_names
            and not rule.non_resource_urls
        ):
            key = (rule.api_groups[0], rule.resources[0])
            found = simple.get(key)
            simple[key] = (
                rule
                if found is None
                else PolicyRule(found.verbs + rule.verbs, found.api_groups, found.resources)
            )
        else:
            compacted.append(rule)
    return compacted + list(simple.values())


def escalation_message(
    user: UserInfo, missing: Sequence[PolicyRule], resolution_errors: Sequence[str]
) -> str:
    """ConfirmNoEscalation's error text: the missing rules compacted, one per line, sorted."""
    descriptions = sorted({rule.compact_string() for rule in compact_rules(missing)})
    message = (
        f'user "{user.name}" (groups={go_string_slice(user.groups)}) is attempting to grant RBAC permissions '
        "not currently held:\n" + "\n".join(descriptions)
    )
    if resolution_errors:
        message += "; resolution errors: [" + aggregate(list(resolution_errors)) + "]"
    return message


def _meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = (obj or {}).get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _rules(obj: Mapping[str, Any]) -> list[PolicyRule]:
    rules = obj.get("rules")
    return [
        PolicyRule.from_json(r) for r in (rules if isinstance(rules, list) else []) if isinstance(r, Mapping)
    ]


_GC_FIELDS = ("ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion")


def only_mutating_gc_fields(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> bool:
    """IsOnlyMutatingGCFields: the update changes nothing but owner references and finalizers."""
    if old is None:
        return False

    def stripped(o: Mapping[str, Any]) -> JSON:
        meta = {k: v for k, v in _meta(o).items() if k not in _GC_FIELDS}
        return {**o, "metadata": meta}

    return stripped(obj) == stripped(old)


class EscalationCheck:
    """Refuses RBAC creates and updates granting permissions the writing user does not hold."""

    def __init__(self, authorizer: Callable[[], Authorizer], policy: PolicySource) -> None:
        self.authorizer = authorizer
        self.policy = policy

    def check(self, attrs: Attributes) -> None:
        """`registry.WriteCheck`: raise the 403 (or the 404 of a missing role) of an escalation."""
        user = attrs.user
        if attrs.operation not in (CREATE, UPDATE) or attrs.subresource or user is None:
            return
        obj = dict(attrs.object or {})
        old = dict(attrs.old_object) if attrs.old_object is not None else None
        gc_only = attrs.operation == UPDATE and only_mutating_gc_fields(obj, old)
        if MASTERS_GROUP not in user.groups and not gc_only:
            self._check(user, attrs.resource.partition(".")[0], obj, old)

    def _allowed(self, user: UserInfo, verb: str, info: RequestInfo) -> bool:
        """Whether the authorizer allows `verb` on the RBAC object `info` names."""
        return self.authorizer().authorize(user, replace(info, verb=verb))[0]

    def _check(self, user: UserInfo, plural: str, obj: JSON, old: JSON | None) -> None:
        meta = _meta(obj)
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        qualified = f"{plural}.{RBAC_GROUP}"
        if plural in ROLE_KINDS:
            role = RequestInfo(True, "", "", "apis", RBAC_GROUP, "*", namespace, plural, "", name)
            if self._allowed(user, "escalate", role):
                return  # RoleEscalationAuthorized
            self._confirm(user, namespace, _rules(obj), qualified, name)
            aggregation = obj.get("aggregationRule")
            if (
                plural == "clusterroles"
                and aggregation is not None
                and (old or {}).get("aggregationRule") != aggregation
            ):
                rules, _ = self.policy().rules_for(user, namespace)
                if not covers(rules, FULL_AUTHORITY)[0]:
                    raise errors.forbidden(qualified, name, AGGREGATION_MESSAGE)
            return
        if plural in BINDING_KINDS:
            ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), Mapping) else {}
            assert isinstance(ref, Mapping)
            kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            ref_resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(kind)
            if ref_resource is None:
                return  # validation refuses the kind
            group = str(ref.get("apiGroup") or "")
            target = RequestInfo(True, "", "", "apis", group, "", namespace, ref_resource, "", ref_name)
            if self._allowed(user, "bind", target):
                return  # BindingAuthorized
            role_rules = self.policy().role_rules(kind, ref_name, namespace)
            if isinstance(role_rules, str):
                raise errors.not_found(f"{ref_resource}.{RBAC_GROUP}", ref_name)
            self._confirm(user, namespace, list(role_rules), qualified, name)

    def _confirm(
        self, user: UserInfo, namespace: str, rules: list[PolicyRule], qualified: str, name: str
    ) -> None:
        owner_rules, resolution_errors = self.policy().rules_for(user, namespace)
        covered, missing = covers(owner_rules, rules)
        if not covered:
            raise errors.forbidden(qualified, name, escalation_message(user, missing, resolution_errors))


def add_escalation_checks(
    registry: Registry, authorizer: Callable[[], Authorizer], policy: PolicySource
) -> None:
    """The escalation check on the registry's creates and updates of the four RBAC resources."""
    check = EscalationCheck(authorizer, policy)
    for plural in (*ROLE_KINDS, *BINDING_KINDS):
        registry.add_write_check(f"{plural}.{RBAC_GROUP}", check)
