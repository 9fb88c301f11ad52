"""rbac.authorization.k8s.io/v1 validation (mirrors pkg/apis/rbac/validation/validation.go):
names are path segments (`ValidateRBACName`), rules need verbs and either resources with API
groups or non-resource URLs, an aggregation rule valid selectors, bindings a supported roleRef and
subjects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation.labelselector import has_invalid_label_value, validate_label_selector
from kubetaint.api.validation.metaupdate import validate_metadata
from kubetaint.api.validation.names import name_is_dns_subdomain

Obj = Mapping[str, Any]
GROUP_NAME = "rbac.authorization.k8s.io"
NAME_MAY_NOT_BE = (".", "..")
NAME_MAY_NOT_CONTAIN = ("/", "%")


def is_valid_path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """path.IsValidPathSegmentName (RBAC's minimalNameRequirements)."""
    for illegal in NAME_MAY_NOT_BE:
        if name == illegal:
            return [f"may not be '{illegal}'"]
    return [f"may not contain '{illegal}'" for illegal in NAME_MAY_NOT_CONTAIN if illegal in name]


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def go_strings(values: list[str]) -> f.GoValue:
    """A []string as field errors print it (`[]string{"a", "b"}`)."""
    return f.GoValue(values, "[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def _meta(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[f.FieldError]:
    return validate_metadata(obj, old, namespaced=namespaced, name_fn=is_valid_path_segment_name)


def validate_policy_rule(rule: Obj, namespaced: bool, path: str) -> list[f.FieldError]:
    """validatePolicyRule."""
    errs: list[f.FieldError] = []
    if not _strings(rule.get("verbs")):
        errs.append(f.required(f.child(path, "verbs"), "verbs must contain at least one value"))
    urls = _strings(rule.get("nonResourceURLs"))
    groups, resources = _strings(rule.get("apiGroups")), _strings(rule.get("resources"))
    names = _strings(rule.get("resourceNames"))
    if urls:
        url_path = f.child(path, "nonResourceURLs")
        if namespaced:
            errs.append(
                f.invalid(url_path, go_strings(urls), "namespaced rules cannot apply to non-resource URLs")
            )
        if groups or resources or names:
            errs.append(
                f.invalid(
                    url_path,
                    go_strings(urls),
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return errs
    if not groups:
        errs.append(
            f.required(f.child(path, "apiGroups"), "resource rules must supply at least one api group")
        )
    if not resources:
        errs.append(
            f.required(f.child(path, "resources"), "resource rules must supply at least one resource")
        )
    return errs


def _rules(obj: Obj, namespaced: bool) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    rules = obj.get("rules")
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        errs.extend(
            validate_policy_rule(rule if isinstance(rule, Mapping) else {}, namespaced, f.index("rules", i))
        )
    return errs


def validate_role(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateRole / ValidateRoleUpdate."""
    return _meta(obj, old, namespaced=True) + _rules(obj, True)


def validate_cluster_role(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateClusterRole / ValidateClusterRoleUpdate: metadata, rules, then the aggregation
    rule's selectors (an update may keep invalid label values an old selector had)."""
    errs = _meta(obj, old, namespaced=False) + _rules(obj, False)
    rule = obj.get("aggregationRule")
    if rule is None:
        return errs
    selectors = _m(obj, "aggregationRule").get("clusterRoleSelectors")
    selectors = selectors if isinstance(selectors, list) else []
    base = "aggregationRule.clusterRoleSelectors"
    if not selectors:
        errs.append(
            f.required(base, "at least one clusterRoleSelector required if aggregationRule is non-nil")
        )
    allow_invalid = old is not None and any(
        has_invalid_label_value(s) for s in _m(old, "aggregationRule").get("clusterRoleSelectors") or []
    )
    for i, selector in enumerate(selectors):
        path = f.index(base, i)
        found = validate_label_selector(selector, path, allow_invalid_values=allow_invalid)
        errs.extend(found)
        if validate_label_selector(selector, path):  # LabelSelectorAsSelector fails on the same
            errs.append(f.invalid(path, f.GoValue(None, "<nil>"), "invalid label selector."))
    return errs


def _role_ref(ref: Obj) -> tuple[str, str, str]:
    return str(ref.get("apiGroup") or ""), str(ref.get("kind") or ""), str(ref.get("name") or "")


def _validate_binding(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[f.FieldError]:
    errs = _meta(obj, old, namespaced=namespaced)
    ref = _m(obj, "roleRef")
    group, kind, name = _role_ref(ref)
    if group != GROUP_NAME:
        errs.append(f.not_supported("roleRef.apiGroup", group, [GROUP_NAME]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    if kind not in kinds:
        errs.append(f.not_supported("roleRef.kind", kind, kinds))
    if not name:
        errs.append(f.required("roleRef.name"))
    else:
        errs.extend(f.invalid("roleRef.name", name, msg) for msg in is_valid_path_segment_name(name))
    subjects = obj.get("subjects")
    for i, subject in enumerate(subjects if isinstance(subjects, list) else []):
        given = subject if isinstance(subject, Mapping) else {}
        errs.extend(validate_subject(given, namespaced, f.index("subjects", i)))
    if old is not None and _role_ref(_m(old, "roleRef")) != (group, kind, name):
        shown = f"rbac.RoleRef{{APIGroup:{go_quote(group)}, Kind:{go_quote(kind)}, Name:{go_quote(name)}}}"
        errs.append(f.invalid("roleRef", f.GoValue(dict(ref), shown), "cannot change roleRef"))
    return errs


def validate_subject(subject: Obj, namespaced: bool, path: str) -> list[f.FieldError]:
    """validateRoleBindingSubject."""
    errs: list[f.FieldError] = []
    name, kind = str(subject.get("name") or ""), str(subject.get("kind") or "")
    group = str(subject.get("apiGroup") or "")
    if not name:
        errs.append(f.required(f.child(path, "name")))
    if kind == "ServiceAccount":
        if name:
            errs.extend(f.invalid(f.child(path, "name"), name, msg) for msg in name_is_dns_subdomain(name))
        if group:
            errs.append(f.not_supported(f.child(path, "apiGroup"), group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(f.required(f.child(path, "namespace")))
    elif kind in ("User", "Group"):
        if group != GROUP_NAME:
            errs.append(f.not_supported(f.child(path, "apiGroup"), group, [GROUP_NAME]))
    else:
        errs.append(f.not_supported(f.child(path, "kind"), kind, ["ServiceAccount", "User", "Group"]))
    return errs


def validate_role_binding(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateRoleBinding / ValidateRoleBindingUpdate."""
    return _validate_binding(obj, old, namespaced=True)


def validate_cluster_role_binding(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateClusterRoleBinding / ValidateClusterRoleBindingUpdate."""
    return _validate_binding(obj, old, namespaced=False)
