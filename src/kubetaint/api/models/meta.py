"""Object metadata and shared sub-objects (mirrors k8s.io/apimachinery/pkg/apis/meta/v1/types.go and
the shared parts of k8s.io/api/core/v1/types.go)."""

from __future__ import annotations

from typing import Any

from kubetaint.api.models.base import Int64, K8sModel, Time


class OwnerReference(K8sModel):
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    uid: str | None = None
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8sModel):
    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None


class LabelSelectorRequirement(K8sModel):
    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class LabelSelector(K8sModel):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class ObjectReference(K8sModel):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class TypedObject(K8sModel):
    """A top-level object: apiVersion, kind and metadata."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None

    @property
    def name(self) -> str:
        return (self.metadata.name if self.metadata else None) or ""

    @property
    def namespace(self) -> str:
        return (self.metadata.namespace if self.metadata else None) or ""


Untyped = dict[str, Any]
