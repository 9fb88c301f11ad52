"""RBAC evaluation: ClusterRoles, Roles and their bindings as a `Policy` that authorizes
requests and lists a user's rules (mirrors plugin/pkg/auth/authorizer/rbac/rbac.go,
pkg/registry/rbac/validation/rule.go's DefaultRuleResolver and rbac/v1/evaluation_helpers.go).

A Policy is built from rbac.authorization.k8s.io/v1 objects: the stored ones (`rbac_store`),
or those of a `--rbac-policy-file` (YAML: ClusterRole, ClusterRoleBinding, Role and RoleBinding
objects as separate documents or in a `kind: List`), added to the served ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubetaint.apiserver.authn import UserInfo
from kubetaint.apiserver.requestinfo import RequestInfo

RBAC_GROUP = "rbac.authorization.k8s.io"
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

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> PolicyRule:
        """A rule of a stored (validated) object; fields of the wrong type count as empty."""
        return cls(
            _tuple(raw.get("verbs")),
            _tuple(raw.get("apiGroups")),
            _tuple(raw.get("resources")),
            _tuple(raw.get("resourceNames")),
            _tuple(raw.get("nonResourceURLs")),
        )

    def compact_string(self) -> str:
        """rbacv1helpers.CompactString: `{APIGroups:["" "apps"], Resources:["pods"], Verbs:["get"]}`."""
        parts = []
        for label, values in (
            ("APIGroups", self.api_groups),
            ("Resources", self.resources),
            ("NonResourceURLs", self.non_resource_urls),
            ("ResourceNames", self.resource_names),
            ("Verbs", self.verbs),
        ):
            if values:
                parts.append(f"{label}:{go_string_slice(values)}")
        return "{" + ", ".join(parts) + "}"


def go_string_slice(values: Iterable[str]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    from kubetaint.api.goquote import go_quote

    return "[" + " ".join(go_quote(v) for v in values) + "]"


def _tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


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

    def describe(self, binding_namespace: str) -> str:
        """describeSubject."""
        if self.kind == "ServiceAccount":
            return f'{self.kind} "{self.name}/{self.namespace or binding_namespace}"'
        return f'{self.kind} "{self.name}"'


@dataclass(frozen=True, slots=True)
class Binding:
    name: str
    role_kind: str  # ClusterRole or Role
    role_name: str
    subjects: tuple[Subject, ...]
    namespace: str = ""  # "" for a ClusterRoleBinding

    def applying_subject(self, user: UserInfo) -> Subject | None:
        """appliesTo: the first subject that applies to the user."""
        return next((s for s in self.subjects if s.applies_to(user, self.namespace)), None)

    def describe(self, subject: Subject) -> str:
        """clusterRoleBindingDescriber / roleBindingDescriber."""
        if self.namespace:
            return (
                f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} "{self.role_name}" '
                f"to {subject.describe(self.namespace)}"
            )
        role = f'{self.role_kind} "{self.role_name}"'
        return f'ClusterRoleBinding "{self.name}" of {role} to {subject.describe("")}'

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Binding:
        """A binding of a stored (validated) object."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), Mapping) else {}
        assert isinstance(ref, Mapping)
        subjects = tuple(
            Subject(str(s.get("kind") or ""), str(s.get("name") or ""), str(s.get("namespace") or ""))
            for s in obj.get("subjects") or []
            if isinstance(s, Mapping)
        )
        namespace = str(meta.get("namespace") or "") if obj.get("kind") == "RoleBinding" else ""
        return cls(
            str(meta.get("name") or ""),
            str(ref.get("kind") or ""),
            str(ref.get("name") or ""),
            subjects,
            namespace,
        )


#: What visiting a user's rules yields: (the binding granting it, described; the rule) or an error.
Visit = tuple[str, PolicyRule] | str


@dataclass
class Policy:
    """Roles by (namespace, name) — namespace "" for ClusterRoles — and bindings."""

    roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    _by_namespace: dict[str, list[Binding]] | None = field(default=None, repr=False, compare=False)

    def add(self, obj: dict[str, Any]) -> None:
        """Add one rbac.authorization.k8s.io/v1 object of a policy file (PolicyFileError when
        malformed)."""
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
        self._by_namespace = None

    def add_stored(self, obj: Mapping[str, Any]) -> None:
        """Add one stored (validated) rbac.authorization.k8s.io/v1 object."""
        kind = obj.get("kind")
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
        assert isinstance(meta, Mapping)
        if kind in ("ClusterRole", "Role"):
            namespace = str(meta.get("namespace") or "") if kind == "Role" else ""
            rules = obj.get("rules")
            self.roles[(namespace, str(meta.get("name") or ""))] = tuple(
                PolicyRule.from_json(r)
                for r in (rules if isinstance(rules, list) else [])
                if isinstance(r, Mapping)
            )
        elif kind in ("ClusterRoleBinding", "RoleBinding"):
            self.bindings.append(Binding.from_json(obj))
        self._by_namespace = None

    def extended(self, other: Policy) -> Policy:
        """This policy plus `other`'s roles (replacing same-named ones) and bindings."""
        return Policy({**self.roles, **other.roles}, [*self.bindings, *other.bindings])

    def _bindings_in(self, namespace: str) -> list[Binding]:
        index = self._by_namespace
        if index is None:
            index = {}
            for binding in self.bindings:
                index.setdefault(binding.namespace, []).append(binding)
            self._by_namespace = index
        return index.get(namespace, [])

    def role_rules(self, role_kind: str, role_name: str, namespace: str) -> tuple[PolicyRule, ...] | str:
        """GetRoleReferenceRules: the rules of a binding's role, or the error (a missing role)."""
        if role_kind == "Role":
            rules = self.roles.get((namespace, role_name))
        elif role_kind == "ClusterRole":
            rules = self.roles.get(("", role_name))
        else:
            return f'unsupported role reference kind: "{role_kind}"'
        if rules is None:
            return f'{role_kind.lower()}.{RBAC_GROUP} "{role_name}" not found'
        return rules

    def visit(self, user: UserInfo, namespace: str) -> Iterator[Visit]:
        """VisitRulesFor: the ClusterRoleBindings' rules, then (for a namespace) the
        RoleBindings' of that namespace; a binding to a missing role yields its error."""
        scopes = [""] if not namespace else ["", namespace]
        for scope in scopes:
            for binding in self._bindings_in(scope):
                subject = binding.applying_subject(user)
                if subject is None:
                    continue
                rules = self.role_rules(binding.role_kind, binding.role_name, scope)
                if isinstance(rules, str):
                    yield rules
                    continue
                source = binding.describe(subject)
                for rule in rules:
                    yield source, rule

    def authorize(self, user: UserInfo, info: RequestInfo) -> tuple[bool, str]:
        """(allowed, reason): allowed with `RBAC: allowed by <binding>` when a binding that
        applies to the user grants a rule allowing the request; else the reason names the
        roles that bindings refer to but are missing."""
        errors: list[str] = []
        for visited in self.visit(user, info.namespace):
            if isinstance(visited, str):
                errors.append(visited)
                continue
            source, rule = visited
            if rule.allows(info):
                return True, f"RBAC: allowed by {source}"
        return False, ("RBAC: " + aggregate(errors)) if errors else ""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[PolicyRule], list[str]]:
        """RulesFor: every rule that applies to the user in the namespace, and the errors."""
        rules: list[PolicyRule] = []
        errors: list[str] = []
        for visited in self.visit(user, namespace):
            if isinstance(visited, str):
                errors.append(visited)
            else:
                rules.append(visited[1])
        return rules, errors


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or `[a, b]` (duplicates once)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


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
    """The objects of a YAML policy file, added to `policy` (to an empty one by default)."""
    policy = policy if policy is not None else Policy()
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
