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
from kubetaint.api.openapi_schemas import cannot_handle, schema_name, strict_decoding_error, strict_errors
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
    found = strict_errors(body, name, patch=patch)
    if not found:
        return []
    if mode == "Strict":
        message = strict_decoding_error(found)
        if not patch:
            message = cannot_handle(kind, version, message)
        raise errors.bad_request(message)
    return found


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """Add one RFC 7234 `Warning: 299 - "..."` header per warning, as kube-apiserver does."""
    for text in warnings:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.append("Warning", f'299 - "{escaped}"')
    return response
