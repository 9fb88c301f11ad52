"""rbac.authorization.k8s.io/v1, authorization.k8s.io/v1 and authentication.k8s.io/v1 models
(mirrors k8s.io/api/rbac/v1, authorization/v1 and authentication/v1 types.go): typed decoding
of request bodies, so a field of the wrong JSON type is kube-apiserver's 400."""

from __future__ import annotations

from pydantic import Field

from kubetaint.api.models.base import K8sModel
from kubetaint.api.models.meta import LabelSelector, TypedObject


class PolicyRule(K8sModel):
    verbs: list[str] | None = None
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_urls: list[str] | None = Field(default=None, alias="nonResourceURLs")


class AggregationRule(K8sModel):
    cluster_role_selectors: list[LabelSelector] | None = None


class RoleRef(K8sModel):
    api_group: str | None = None
    kind: str | None = None
    name: str | None = None


class Subject(K8sModel):
    kind: str | None = None
    api_group: str | None = None
    name: str | None = None
    namespace: str | None = None


class Role(TypedObject):
    rules: list[PolicyRule] | None = None


class ClusterRole(TypedObject):
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class RoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    role_ref: RoleRef | None = None


class ClusterRoleBinding(TypedObject):
    subjects: list[Subject] | None = None
    role_ref: RoleRef | None = None


class ResourceAttributes(K8sModel):
    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None


class NonResourceAttributes(K8sModel):
    path: str | None = None
    verb: str | None = None


class SubjectAccessReviewSpec(K8sModel):
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    user: str | None = None
    groups: list[str] | None = None
    uid: str | None = None


class SubjectAccessReview(TypedObject):
    spec: SubjectAccessReviewSpec | None = None


class SelfSubjectAccessReviewSpec(K8sModel):
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None


class SelfSubjectAccessReview(TypedObject):
    spec: SelfSubjectAccessReviewSpec | None = None


class SelfSubjectRulesReviewSpec(K8sModel):
    namespace: str | None = None


class SelfSubjectRulesReview(TypedObject):
    spec: SelfSubjectRulesReviewSpec | None = None


class SelfSubjectReview(TypedObject):
    pass
