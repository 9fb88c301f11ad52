"""The model of apiextensions.k8s.io/v1 CustomResourceDefinition (mirrors
k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/types.go and types_jsonschema.go): typed
decoding of request bodies, schemas (`JSONSchemaProps`) included, so a field of the wrong JSON
type is kube-apiserver's 400."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kubetaint.api.models.base import GoType, Int32, Int64, K8sModel
from kubetaint.api.models.meta import TypedObject, Untyped


class ExternalDocumentation(K8sModel):
    description: str | None = None
    url: str | None = None


class ValidationRule(K8sModel):
    rule: str | None = None
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None


class JSONSchemaProps(K8sModel):
    id: str | None = None
    schema_url: str | None = Field(default=None, alias="$schema")
    ref: str | None = Field(default=None, alias="$ref")
    description: str | None = None
    type: str | None = None
    format: str | None = None
    title: str | None = None
    default: Any = None
    maximum: float | None = None
    exclusive_maximum: bool | None = None
    minimum: float | None = None
    exclusive_minimum: bool | None = None
    max_length: Int64 | None = None
    min_length: Int64 | None = None
    pattern: str | None = None
    max_items: Int64 | None = None
    min_items: Int64 | None = None
    unique_items: bool | None = None
    multiple_of: float | None = None
    enum: list[Any] | None = None
    max_properties: Int64 | None = None
    min_properties: Int64 | None = None
    required: list[str] | None = None
    items: Annotated[JSONSchemaProps | list[JSONSchemaProps], GoType("v1.JSONSchemaPropsOrArray")] | None = (
        None
    )
    all_of: list[JSONSchemaProps] | None = None
    one_of: list[JSONSchemaProps] | None = None
    any_of: list[JSONSchemaProps] | None = None
    not_: JSONSchemaProps | None = Field(default=None, alias="not")
    properties: dict[str, JSONSchemaProps] | None = None
    additional_properties: Annotated[bool | JSONSchemaProps, GoType("v1.JSONSchemaPropsOrBool")] | None = None
    pattern_properties: dict[str, JSONSchemaProps] | None = None
    dependencies: dict[str, Any] | None = None
    additional_items: Annotated[bool | JSONSchemaProps, GoType("v1.JSONSchemaPropsOrBool")] | None = None
    definitions: dict[str, JSONSchemaProps] | None = None
    external_docs: ExternalDocumentation | None = None
    example: Any = None
    nullable: bool | None = None
    x_kubernetes_preserve_unknown_fields: bool | None = Field(
        default=None, alias="x-kubernetes-preserve-unknown-fields"
    )
    x_kubernetes_embedded_resource: bool | None = Field(default=None, alias="x-kubernetes-embedded-resource")
    x_kubernetes_int_or_string: bool | None = Field(default=None, alias="x-kubernetes-int-or-string")
    x_kubernetes_list_map_keys: list[str] | None = Field(default=None, alias="x-kubernetes-list-map-keys")
    x_kubernetes_list_type: str | None = Field(default=None, alias="x-kubernetes-list-type")
    x_kubernetes_map_type: str | None = Field(default=None, alias="x-kubernetes-map-type")
    x_kubernetes_validations: list[ValidationRule] | None = Field(
        default=None, alias="x-kubernetes-validations"
    )


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
    open_apiv3_schema: JSONSchemaProps | None = Field(default=None, alias="openAPIV3Schema")


class CustomResourceDefinitionVersion(K8sModel):
    name: str | None = None
    served: bool | None = None
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema_: CustomResourceValidation | None = Field(default=None, alias="schema")
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
