"""The model of apiextensions.k8s.io/v1 CustomResourceDefinition (mirrors
k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go): typed decoding of request
bodies, so a field of the wrong JSON type is kube-apiserver's 400. Schemas
(`JSONSchemaProps`) are kept as JSON."""

from __future__ import annotations

from kubetaint.api.models.base import Int32, K8sModel
from kubetaint.api.models.meta import TypedObject, Untyped


class CustomResourceDefinitionNames(K8sModel):
    plural: str | None = None
    singular: str | None = None
    short_names: list[str] | None = None
    kind: str | None = None
    list_kind: str | None = None
    categories: list[str] | None = None


class CustomResourceColumnDefinition(K8sModel):
    name: str | None = None
    type: str | None = None
    format: str | None = None
    description: str | None = None
    priority: Int32 | None = None
    json_path: str | None = None


class CustomResourceValidation(K8sModel):
    """`openAPIV3Schema` is kept as sent (an extra field)."""


class CustomResourceDefinitionVersion(K8sModel):
    name: str | None = None
    served: bool | None = None
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema_: CustomResourceValidation | None = None
    subresources: Untyped | None = None
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None
    selectable_fields: list[Untyped] | None = None


class CustomResourceConversion(K8sModel):
    strategy: str | None = None
    webhook: Untyped | None = None


class CustomResourceDefinitionSpec(K8sModel):
    group: str | None = None
    names: CustomResourceDefinitionNames | None = None
    scope: str | None = None
    versions: list[CustomResourceDefinitionVersion] | None = None
    conversion: CustomResourceConversion | None = None
    preserve_unknown_fields: bool | None = None


class CustomResourceDefinitionStatus(K8sModel):
    conditions: list[Untyped] | None = None
    accepted_names: CustomResourceDefinitionNames | None = None
    stored_versions: list[str] | None = None


class CustomResourceDefinition(TypedObject):
    spec: CustomResourceDefinitionSpec | None = None
    status: CustomResourceDefinitionStatus | None = None
