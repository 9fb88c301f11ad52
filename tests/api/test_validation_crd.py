"""ValidateCustomResourceDefinition for apiextensions.k8s.io/v1: the cases of upstream's
validation_test.go (TestValidateCustomResourceDefinition) and schema/validation_test.go
(TestValidateStructural) that users meet, as data; messages as kube-apiserver words them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.api import crd as crds
from kubetaint.api.validation import validate

JSON = dict[str, Any]


def valid_crd(**spec: Any) -> JSON:
    body: JSON = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "plural.group.com"},
        "spec": {
            "group": "group.com",
            "scope": "Namespaced",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": [
                {
                    "name": "version",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
            "conversion": {"strategy": "None"},
            **spec,
        },
    }
    return body


def with_schema(schema: JSON, **version: Any) -> JSON:
    crd = valid_crd()
    crd["spec"]["versions"][0].update({"schema": {"openAPIV3Schema": schema}, **version})
    return crd


def messages(obj: JSON, old: JSON | None = None) -> list[str]:
    """The errors of a create (after the strategy's PrepareForCreate, as the server validates)
    or of an update of `old`."""
    if old is None:
        obj = crds.prepare_for_create(obj)
    return [str(e) for e in validate(obj, old=old)]


def edited(path: list[Any], value: Any) -> JSON:
    crd = valid_crd()
    node: Any = crd
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return crd


_DELETE = object()


@pytest.mark.parametrize(
    ("crd", "expected"),
    [
        pytest.param(valid_crd(), [], id="a complete CRD is valid"),
        pytest.param(
            edited(["metadata", "name"], "other.group.com"),
            ['metadata.name: Invalid value: "other.group.com": must be spec.names.plural+"."+spec.group'],
            id="the name must be the plural and the group",
        ),
        pytest.param(
            edited(["spec", "group"], "group"),
            [
                'metadata.name: Invalid value: "plural.group.com": must be spec.names.plural+"."+spec.group',
                'spec.group: Invalid value: "group": should be a domain with at least one dot',
            ],
            id="the group is a domain with a dot",
        ),
        pytest.param(
            edited(["spec", "scope"], "Other"),
            ['spec.scope: Unsupported value: "Other": supported values: "Cluster", "Namespaced"'],
            id="the scope is Cluster or Namespaced",
        ),
        pytest.param(
            edited(["spec", "scope"], _DELETE),
            ["spec.scope: Required value"],
            id="the scope is required",
        ),
        pytest.param(
            edited(["spec", "versions", 0, "storage"], False),
            [
                "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion"
                '{apiextensions.CustomResourceDefinitionVersion{Name:"version", Served:true, Storage:false, ...}}'
                ": must have exactly one version marked as storage version",
                "status.storedVersions: Invalid value: []string(nil): must have at least one stored version",
            ],
            id="exactly one version is the storage version",
        ),
        pytest.param(
            edited(["spec", "versions", 0, "name"], "Version"),
            [
                'spec.versions[0].name: Invalid value: "Version": a DNS-1035 label must consist of lower case '
                "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                "'[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
            id="version names are DNS-1035 labels",
        ),
        pytest.param(
            edited(["spec", "versions", 0, "schema"], _DELETE),
            ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"],
            id="every version has a schema",
        ),
        pytest.param(
            edited(["spec", "names", "kind"], "Plural Kind"),
            [
                'spec.names.kind: Invalid value: "Plural Kind": may have mixed case, but should otherwise '
                "match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
                "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
            id="the kind may have mixed case but is otherwise a DNS-1035 label",
        ),
        pytest.param(
            edited(["spec", "names", "listKind"], "Plural"),
            ['spec.names.listKind: Invalid value: "Plural": kind and listKind may not be the same'],
            id="kind and listKind differ",
        ),
        pytest.param(
            edited(["spec", "names", "plural"], ""),
            [
                'metadata.name: Invalid value: "plural.group.com": must be spec.names.plural+"."+spec.group',
                "spec.names.plural: Required value",
            ],
            id="the plural is required",
        ),
    ],
)
def test_crd_validation(crd: JSON, expected: list[str]) -> None:
    assert messages(crd) == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"type": "object"}, [], id="an object at the root is structural"),
        pytest.param(
            {"properties": {"spec": {"type": "object"}}},
            ["spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root"],
            id="the root has a type",
        ),
        pytest.param(
            {"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}},
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: "
                "must not be empty for specified object fields"
            ],
            id="a specified field has a type",
        ),
        pytest.param(
            {"type": "object", "properties": {"list": {"type": "array"}}},
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[list].items: Required value: must be specified"
            ],
            id="an array has items",
        ),
        pytest.param(
            {"type": "string"},
            [
                'spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root'
            ],
            id="the root is an object",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "m": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "additionalProperties": {},
                    }
                },
            },
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[m].additionalProperties: Forbidden: "
                "additionalProperties and properties are mutual exclusive",
                "spec.versions[0].schema.openAPIV3Schema.properties[m].additionalProperties.type: "
                "Required value: must not be empty for specified object fields",
            ],
            id="properties and additionalProperties are exclusive",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"x": {"type": "object", "x-kubernetes-preserve-unknown-fields": False}},
            },
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[x].x-kubernetes-preserve-unknown-fields: "
                "Invalid value: false: must be true or undefined"
            ],
            id="x-kubernetes-preserve-unknown-fields is true or absent",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"x-kubernetes-preserve-unknown-fields": True}}},
            [],
            id="a field preserving unknown fields needs no type",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"x-kubernetes-int-or-string": True}}},
            [],
            id="an int-or-string field needs no type",
        ),
        pytest.param(
            {"type": "object", "properties": {"x": {"type": "duck"}}},
            [
                'spec.versions[0].schema.openAPIV3Schema.properties[x].type: Unsupported value: "duck": '
                'supported values: "array", "boolean", "integer", "number", "object", "string"'
            ],
            id="types are OpenAPI's",
        ),
        pytest.param(
            {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {}}}}},
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[metadata].properties[labels].type: "
                "Required value: must not be empty for specified object fields",
                "spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify "
                "anything other than name and generateName, but metadata is implicitly specified",
            ],
            id="metadata may restrict only name and generateName",
        ),
        pytest.param(
            {"type": "object", "anyOf": [{"type": "object"}]},
            [
                "spec.versions[0].schema.openAPIV3Schema.anyOf[0].type: Forbidden: must be empty to be structural"
            ],
            id="types under anyOf are not structural",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
            },
            [
                "spec.versions[0].schema.openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems "
                "cannot be set to true since the runtime complexity becomes quadratic"
            ],
            id="uniqueItems is forbidden",
        ),
    ],
)
def test_structural_schema(schema: JSON, expected: list[str]) -> None:
    assert messages(with_schema(schema)) == expected


def test_printer_columns_are_checked() -> None:
    crd = with_schema(
        {"type": "object"},
        additionalPrinterColumns=[
            {"name": "A", "type": "text", "jsonPath": ".spec.a"},
            {"name": "B", "type": "string", "jsonPath": "spec.b"},
        ],
    )
    assert messages(crd) == [
        'spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "text": '
        "must be one of boolean,date,integer,number,string",
        'spec.versions[0].additionalPrinterColumns[1].jsonPath: Invalid value: "spec.b": '
        "must be a simple json path starting with .",
    ]


def test_scale_paths_are_under_spec_and_status() -> None:
    crd = with_schema(
        {"type": "object"}, subresources={"scale": {"specReplicasPath": "replicas", "statusReplicasPath": ""}}
    )
    assert messages(crd) == [
        'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: "replicas": '
        "should be a json path under .spec",
        "spec.versions[0].subresources.scale.statusReplicasPath: Required value",
    ]


def test_an_update_may_not_change_the_group_or_plural_and_once_established_the_scope() -> None:
    old = crds.established_status(crds.prepare_for_create(valid_crd()), [], now="2025-01-01T00:00:00Z")
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    assert messages(new, old) == ['spec.scope: Invalid value: "Cluster": field is immutable']
    new = copy.deepcopy(old)
    new["spec"]["names"]["plural"] = "others"
    new["metadata"]["name"] = "others.group.com"
    found = messages(new, old)
    assert 'spec.names.plural: Invalid value: "others": field is immutable' in found


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        pytest.param(["version"], [], id="the storage version is stored"),
        pytest.param(
            ["version", "gone"],
            ['status.storedVersions[1]: Invalid value: "gone": must appear in spec.versions'],
            id="stored versions appear in spec.versions",
        ),
        pytest.param(
            ["other"],
            [
                "status.storedVersions: Invalid value: apiextensions.CustomResourceDefinitionVersion"
                '{Name:"version", Served:true, Storage:true, ...}: must have the storage version version',
                'status.storedVersions[0]: Invalid value: "other": must appear in spec.versions',
            ],
            id="the storage version is among the stored ones",
        ),
    ],
)
def test_stored_versions_on_update(stored: list[str], expected: list[str]) -> None:
    old = crds.established_status(crds.prepare_for_create(valid_crd()), [], now="2025-01-01T00:00:00Z")
    new = copy.deepcopy(old)
    new["status"]["storedVersions"] = stored
    assert messages(new, old) == expected


@pytest.mark.parametrize(
    ("conversion", "expected"),
    [
        pytest.param({"strategy": "None"}, [], id="no conversion"),
        pytest.param(
            {"strategy": "Webhook"},
            ["spec.conversion.webhook: Required value: required when strategy is set to Webhook"],
            id="a webhook strategy needs a webhook",
        ),
        pytest.param(
            {"strategy": "Magic"},
            ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'],
            id="strategies are None and Webhook",
        ),
    ],
)
def test_conversion(conversion: JSON, expected: list[str]) -> None:
    assert messages(valid_crd(conversion=conversion)) == expected


def test_short_names_and_categories_are_dns_1035_labels() -> None:
    crd = valid_crd()
    crd["spec"]["names"].update(shortNames=["ok", "Not-OK"], categories=["all", "a_b"])
    assert [m.split(":")[0] for m in messages(crd)] == [
        "spec.names.shortNames[1]",
        "spec.names.categories[1]",
    ]
