"""`fieldValidation=Strict|Warn|Ignore`: unknown fields of a request body, found with the served
OpenAPI schemas, reported as kube-apiserver does (mirrors apiserver/pkg/endpoints/handlers
create.go/update.go/patch.go with sigs.k8s.io/json's strict decoding: paths such as
`spec.containers[0].foo`, in the body's order).

- Strict: 400 BadRequest. Create and update say
  `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"`
  (transformDecodeError); patches say `strict decoding error: unknown field "spec.foo"`.
- Warn (the default when the parameter is absent): one `Warning: 299 - "unknown field \"spec.foo\""`
  response header per field.
- Ignore: nothing.

Patch bodies are checked as sent (strategic-merge `$` directives and `null` deletions skipped);
JSON patches are not checked.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from kubetaint.api import errors
from kubetaint.apiserver.openapi import REF, schema_name, schemas
from kubetaint.apiserver.resources import ResourceInfo

JSON = dict[str, Any]
SUPPORTED = ("", "Ignore", "Warn", "Strict")


def directive(value: str | None) -> str:
    """The validation directive of a request (absent means Warn, as upstream since 1.27)."""
    value = value or ""
    if value not in SUPPORTED:
        raise errors.bad_request(
            f'fieldValidation: Unsupported value: {value!r}: supported values: "Ignore", "Strict", "Warn"'
        )
    return value or "Warn"


def _resolve(schema: JSON) -> JSON:
    """Follow `$ref` and single-element `allOf` wrappers to the schema that has the structure."""
    table = schemas()
    seen = 0
    while seen < 32:
        seen += 1
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF):
            schema = table.get(ref[len(REF) :], {})
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "properties" not in schema:
            schema = all_of[0]
            continue
        break
    return schema


def _walk(value: Any, schema: JSON, path: str, found: list[str], patch: bool) -> None:
    schema = _resolve(schema)
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if patch and (key.startswith("$") or item is None):
                continue
            child = f"{path}.{key}" if path else key
            if isinstance(props, dict):
                if key in props:
                    _walk(item, props[key], child, found, patch)
                else:
                    found.append(child)
            elif isinstance(extra, dict):
                _walk(item, extra, child, found, patch)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                _walk(item, items, f"{path}[{index}]", found, patch)


def unknown_fields(obj: Any, schema: str, *, patch: bool = False) -> list[str]:
    """Paths of the fields of `obj` that `schema` (a components.schemas key) does not declare."""
    found: list[str] = []
    root = schemas().get(schema)
    if root is not None:
        _walk(obj, root, "", found, patch)
    return found


def _schema_of(res: ResourceInfo, body: Any) -> tuple[str | None, str, str]:
    """The schema a body decodes into, with the kind and version upstream names in its message:
    the body's own apiVersion/kind when the server knows it (Binding, Eviction), else the target's."""
    if isinstance(body, dict):
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str):
            group, _, version = api_version.rpartition("/")
            name = schema_name(group, version, kind)
            if name is not None:
                return name, kind, version
    return schema_name(res.group, res.version, res.kind), res.kind, res.version


def check(res: ResourceInfo, body: Any, value: str | None, *, patch: bool = False) -> list[str]:
    """Warnings to send for `body` (Warn), or raise 400 (Strict); [] for Ignore."""
    mode = directive(value)
    if mode == "Ignore":
        return []
    name, kind, version = _schema_of(res, body)
    if name is None:
        return []
    unknown = [f'unknown field "{path}"' for path in unknown_fields(body, name, patch=patch)]
    if not unknown:
        return []
    if mode == "Strict":
        message = "strict decoding error: " + ", ".join(unknown)
        if not patch:
            message = f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'
        raise errors.bad_request(message)
    return unknown


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """Add one RFC 7234 `Warning: 299 - "..."` header per warning, as kube-apiserver does."""
    for text in warnings:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.append("Warning", f'299 - "{escaped}"')
    return response
