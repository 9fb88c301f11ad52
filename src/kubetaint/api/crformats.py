"""The `format`s a CRD schema may name that apiextensions-apiserver recognizes
(k8s.io/apiextensions-apiserver pkg/apiserver/validation/formats.go at the version kubetaint
follows), and the CRD strategy's warnings for the others (customresourcedefinition/strategy.go
WarningsOnCreate / WarningsOnUpdate: `unrecognized format "x"`). Upstream ignores an
unrecognized format when it validates a custom resource; so does kubetaint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: supportedVersionedFormats up to 1.34 (k8s-short-name and k8s-long-name came in 1.34), with
#: go-openapi's normalization: dashes removed.
RECOGNIZED_STRING_FORMATS = frozenset(
    name.replace("-", "")
    for name in (
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "quantity",
        "k8s-short-name",
        "k8s-long-name",
    )
)
_NUMERIC = {"integer": ("int32", "int64"), "number": ("float", "double")}
#: The keywords whose values are schemas, lists of schemas or maps of schemas.
_SCHEMA_KEYS = ("items", "allOf", "oneOf", "anyOf", "not", "additionalProperties", "additionalItems")
_SCHEMA_MAP_KEYS = ("properties", "patternProperties", "definitions", "dependencies")


def recognized(schema: Mapping[str, Any]) -> bool:
    """GetUnrecognizedFormats of one schema node is empty: its format, if any, is one upstream
    recognizes for its type (strings and untyped: the list above; integers: int32, int64;
    numbers: float, double; other types: none)."""
    fmt = schema.get("format")
    if not isinstance(fmt, str) or not fmt:
        return True
    kind = schema.get("type")
    if kind in (None, "", "string"):
        return fmt.replace("-", "") in RECOGNIZED_STRING_FORMATS
    return fmt in _NUMERIC.get(str(kind), ())


def unrecognized_formats(crd: Mapping[str, Any]) -> list[str]:
    """Every unrecognized format the CRD's version schemas name, one per use, in schema order."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    found: list[str] = []
    for version in spec.get("versions") or []:
        schema = (version.get("schema") or {}) if isinstance(version, Mapping) else {}
        root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        found.extend(str(node["format"]) for node in _nodes(root) if not recognized(node))
    return found


def format_warnings(crd: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    """The CRD strategy's warnings: on create every unrecognized format, on update those the
    old CRD does not use already."""
    formats = unrecognized_formats(crd)
    if old is not None:
        before = set(unrecognized_formats(old))
        formats = [f for f in formats if f not in before]
    return [f'unrecognized format "{f}"' for f in formats]


def _nodes(schema: Any) -> Iterator[Mapping[str, Any]]:
    """The schema nodes of `schema` (itself first), as validation.SchemaHas visits them."""
    if not isinstance(schema, Mapping):
        return
    yield schema
    for key in _SCHEMA_KEYS:
        value = schema.get(key)
        for child in value if isinstance(value, list) else [value]:
            yield from _nodes(child)
    for key in _SCHEMA_MAP_KEYS:
        value = schema.get(key)
        if isinstance(value, Mapping):
            for child in value.values():
                yield from _nodes(child)
