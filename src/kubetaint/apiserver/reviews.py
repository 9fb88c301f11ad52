"""The review resources: created to get an answer, never stored.

- authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth can-i`), SubjectAccessReview,
  LocalSubjectAccessReview: the authorizer's decision on the given attributes;
- authorization.k8s.io/v1 SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules the
  authorizers can list for the user in a namespace;
- authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`): the user as authenticated.

(mirrors pkg/registry/authorization/{selfsubjectaccessreview,subjectaccessreview,
localsubjectaccessreview,selfsubjectrulesreview}/rest.go, pkg/apis/authorization/validation and
pkg/registry/authentication/selfsubjectreview/rest.go.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api import errors
from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation import invalid_status
from kubetaint.apiserver.authn import CURRENT_USER, UserInfo
from kubetaint.apiserver.authz import Authorizer
from kubetaint.apiserver.rbac import PolicyRule
from kubetaint.apiserver.requestinfo import RequestInfo
from kubetaint.apiserver.resources import ResourceInfo

JSON = dict[str, Any]


def _s(obj: Mapping[str, Any], name: str) -> str:
    return str(obj.get(name) or "")


def _invalid(kind: str, errs: list[f.FieldError], group: str) -> errors.StatusError:
    return errors.StatusError.from_status(invalid_status(kind, "", errs, group))


def _metadata_errors(obj: Mapping[str, Any]) -> list[f.FieldError]:
    meta = {k: v for k, v in _m(obj, "metadata").items() if k not in ("managedFields", "creationTimestamp")}
    if meta:
        fields = ", ".join(f"{k[0].upper()}{k[1:]}:{f.render_value(v)}" for k, v in sorted(meta.items()))
        return [f.invalid("metadata", f.GoValue(meta, f"v1.ObjectMeta{{{fields}}}"), "must be empty")]
    return []


def _spec_errors(spec: Mapping[str, Any]) -> list[f.FieldError]:
    """ValidateSelfSubjectAccessReviewSpec (and the attribute part of the others)."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource is not None and non_resource is not None:
        shown = f.GoValue(non_resource, "&authorization.NonResourceAttributes{...}")
        return [
            f.invalid(
                "spec.nonResourceAttributes",
                shown,
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if resource is None and non_resource is None:
        return [
            f.invalid(
                "spec.resourceAttributes",
                f.GoValue(None, "null"),
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        ]
    return []


def attributes(spec: Mapping[str, Any]) -> RequestInfo:
    """authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, Mapping):
        return RequestInfo(
            True,
            "",
            _s(resource, "verb"),
            "apis",
            _s(resource, "group"),
            _s(resource, "version"),
            _s(resource, "namespace"),
            _s(resource, "resource"),
            _s(resource, "subresource"),
            _s(resource, "name"),
        )
    non_resource = _m(spec, "nonResourceAttributes")
    return RequestInfo(False, _s(non_resource, "path"), _s(non_resource, "verb"))


def _status(authorizer: Authorizer, user: UserInfo, info: RequestInfo) -> JSON:
    allowed, reason = authorizer.authorize(user, info)
    status: JSON = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def _answer(obj: Mapping[str, Any], status: JSON) -> JSON:
    meta = dict(_m(obj, "metadata"))
    meta.setdefault("creationTimestamp", None)
    return {**obj, "metadata": meta, "status": status}


def _user() -> UserInfo:
    user = CURRENT_USER.get()
    if user is None:
        raise errors.bad_request("no user present on request")
    return user


def _rule_json(rule: PolicyRule, resource: bool) -> JSON:
    out: JSON = {"verbs": list(rule.verbs)}
    if resource:
        if rule.api_groups:
            out["apiGroups"] = list(rule.api_groups)
        if rule.resources:
            out["resources"] = list(rule.resources)
        if rule.resource_names:
            out["resourceNames"] = list(rule.resource_names)
    elif rule.non_resource_urls:
        out["nonResourceURLs"] = list(rule.non_resource_urls)
    return out


def review(res: ResourceInfo, namespace: str, obj: JSON, authorizer: Authorizer) -> JSON:
    """The answered review `obj` (already decoded and typed as `res`)."""
    kind, group = res.kind, res.group
    spec = _m(obj, "spec")
    if kind == "SelfSubjectReview":
        user = _user()
        info: JSON = {"username": user.name}
        if user.uid:
            info["uid"] = user.uid
        info["groups"] = list(user.groups)
        if user.extra:
            info["extra"] = {key: list(values) for key, values in user.extra}
        return _answer(obj, {"userInfo": info})
    if kind == "SelfSubjectRulesReview":
        user = _user()
        wanted = _s(spec, "namespace")
        if not wanted:
            raise errors.bad_request("no namespace on request")
        rules = authorizer.rules_for(user, wanted)
        status: JSON = {
            "resourceRules": [_rule_json(r, True) for r in rules.resource_rules],
            "nonResourceRules": [_rule_json(r, False) for r in rules.non_resource_rules],
            "incomplete": rules.incomplete,
        }
        if rules.errors:
            status["evaluationError"] = (
                "[" + ", ".join(rules.errors) + "]" if len(rules.errors) > 1 else rules.errors[0]
            )
        return _answer(obj, status)
    if kind == "SelfSubjectAccessReview":
        errs = _spec_errors(spec) + _metadata_errors(obj)
        if errs:
            raise _invalid(kind, errs, group)
        return _answer(obj, _status(authorizer, _user(), attributes(spec)))
    # SubjectAccessReview and LocalSubjectAccessReview: the user given in the spec
    errs = _spec_errors(spec)
    if not _s(spec, "user") and not spec.get("groups"):
        errs.append(
            f.invalid("spec.user", _s(spec, "user"), "at least one of user or group must be specified")
        )
    if kind == "LocalSubjectAccessReview":
        if spec.get("nonResourceAttributes") is not None:
            shown = f.GoValue(spec.get("nonResourceAttributes"), "&authorization.NonResourceAttributes{...}")
            errs.append(f.invalid("spec.nonResourceAttributes", shown, "disallowed on this kind of request"))
    else:
        errs += _metadata_errors(obj)
    if errs:
        raise _invalid(kind, errs, group)
    if kind == "LocalSubjectAccessReview":
        given = _s(_m(spec, "resourceAttributes"), "namespace")
        if given != namespace:
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    groups = spec.get("groups")
    subject = UserInfo(
        _s(spec, "user"), _s(spec, "uid"), tuple(str(g) for g in groups) if isinstance(groups, list) else ()
    )
    return _answer(obj, _status(authorizer, subject, attributes(spec)))
