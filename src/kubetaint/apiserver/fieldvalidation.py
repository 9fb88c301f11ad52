"""`fieldValidation=Strict|Warn|Ignore`: unknown fields of a request body, found with the served
OpenAPI schemas, reported as kube-apiserver does (mirrors apiserver/pkg/endpoints/handlers
create.go/update.go/patch.go with sigs.k8s.io/json's strict decoding: paths such as
`spec.containers[0].foo`, in the body's order), and fields a JSON body gives twice
(`duplicate field "metadata.name"`; the last value is kept, as Go's decoder keeps it). A YAML
body's duplicate keys are go-yaml's strict error (`yaml: unmarshal errors:\n  line 5: key "name"
already set in map`, json.go's YAMLToJSONStrict; apply patches: patch.go's `error strict decoding
YAML: ...`), which no warning header can carry (it holds a newline).

- Strict: 400 BadRequest. Create and update say
  `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo"`
  (transformDecodeError); patches say `strict decoding error: unknown field "spec.foo"`.
- Warn (the default when the parameter is absent): one `Warning: 299 - "unknown field \"spec.foo\""`
  response header per field (kube-apiserver's warning recorder: UTF-8, truncated past 4 Ki runes).
- Ignore: nothing.

In every mode the unknown fields are dropped before anything is stored, as decoding into the Go
type drops them. Patch bodies are checked as sent (strategic-merge `$` directives and `null`
deletions skipped); a JSON patch is checked on the patched object, as patch.go's jsonPatcher does.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.responses import Response

from kubetaint.api import errors
from kubetaint.api.goquote import go_quote
from kubetaint.api.openapi_schemas import (
    cannot_handle,
    prune_unknown,
    schema_name,
    strict_decoding_error,
    strict_errors,
)
from kubetaint.apiserver.resources import ResourceInfo

JSON = dict[str, Any]
SUPPORTED = ("", "Ignore", "Warn", "Strict")


def directive(value: str | None) -> str:
    """The validation directive of a request (absent means Warn, as upstream since 1.27)."""
    value = value or ""
    if value not in SUPPORTED:
        supported = ", ".join(go_quote(v) for v in sorted(SUPPORTED))
        raise errors.bad_request(
            f"fieldValidation: Unsupported value: {go_quote(value)}: supported values: {supported}"
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


def decode(
    res: ResourceInfo,
    body: Any,
    value: str | None,
    *,
    patch: bool = False,
    directives: bool | None = None,
    duplicates: Mapping[int, Sequence[str]] | None = None,
    yaml_error: str | None = None,
) -> tuple[Any, list[str]]:
    """`body` as the Go type it decodes into keeps it: unknown fields dropped (never stored),
    with the warnings to send for them and for the fields given twice (`duplicates`, from
    `wire.load_json_recording`) (Warn), or a 400 (Strict); no warnings for Ignore. A YAML body's
    duplicate keys come as go-yaml's `yaml_error`, the first strict error (json.go unmarshal); as
    a warning it holds a newline, so no header carries it, as net.NewWarningHeader refuses it.
    `patch`: the Strict message has no kind prefix; `directives` (default: `patch`): strategic
    merge `$` keys and `null` deletions are not fields."""
    if directives is None:
        directives = patch
    mode = directive(value)
    name, kind, version = _schema_of(res, body)
    if name is None:
        return body, []
    found = strict_errors(body, name, patch=directives, duplicates=duplicates)
    if yaml_error is not None:
        found = [yaml_error, *found]
    if not found:
        return body, []
    if mode == "Strict":
        message = strict_decoding_error(found)
        if not patch:
            message = cannot_handle(kind, version, message)
        raise errors.bad_request(message)
    pruned = prune_unknown(body, name, patch=directives)
    return pruned, [] if mode == "Ignore" else found


def check_apply_yaml(yaml_error: str | None, value: str | None) -> list[str]:
    """The duplicate keys of an apply patch (patch.go applyPatcher: sigs.k8s.io/yaml
    UnmarshalStrict): a 400 for Strict, a warning for Warn (as a header: none, for its newline)."""
    mode = directive(value)
    if yaml_error is None or mode == "Ignore":
        return []
    message = f"error converting YAML to JSON: {yaml_error}"
    if mode == "Strict":
        raise errors.bad_request(f"error strict decoding YAML: {message}")
    return [message]


def decode_patched(res: ResourceInfo, patched: JSON, value: str | None) -> tuple[JSON, list[str]]:
    """A JSON-patched object decoded into its Go type (patch.go jsonPatcher): unknown fields
    dropped with warnings (Warn), or, for Strict, upstream's 422 naming the patched object."""
    try:
        pruned, warnings = decode(res, patched, value, patch=True, directives=False)
    except errors.StatusError as exc:
        text = json.dumps(patched, separators=(",", ":"), ensure_ascii=False)
        raise errors.StatusError(
            422, "Invalid", f' "" is invalid: patch: Invalid value: {json.dumps(text)}: {exc.message}'
        ) from None
    return pruned if isinstance(pruned, dict) else patched, warnings


#: apiserver/pkg/endpoints/filters/warning.go: past 4 Ki runes of warning text in one response,
#: every warning is cut to 256 runes, and warnings past the total are left out.
TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


def _warning_header(text: str) -> bytes | None:
    """net.NewWarningHeader(299, "-", text): UTF-8, `"` and `\\` escaped; None (not sent) when
    the text holds control characters or is not valid UTF-8."""
    if any(unicodedata.category(c) == "Cc" for c in text):
        return None
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    try:
        return f'299 - "{escaped}"'.encode()
    except UnicodeEncodeError:
        return None


def warning_headers(
    warnings: list[str], *, total: int = TRUNCATE_AT_TOTAL_RUNES, item: int = TRUNCATE_ITEM_RUNES
) -> list[bytes]:
    """The `Warning` header values kube-apiserver's warning recorder sends for `warnings` added
    in order (filters/warning.go recorder.AddWarning): deduplicated, empty ones skipped, and
    once the text passes TRUNCATE_AT_TOTAL_RUNES, every one cut to TRUNCATE_ITEM_RUNES."""
    headers: list[bytes] = []
    ordered: list[str] = []
    recorded: set[str] = set()
    written, truncating = 0, False
    for warning in warnings:
        if not warning or (truncating and written >= total) or warning in recorded:
            continue
        recorded.add(warning)
        ordered.append(warning)
        text = warning[:item] if truncating else warning
        header = _warning_header(text)
        if header is None:
            continue
        if written + len(text) <= total or truncating:
            written += len(text)
            headers.append(header)
            continue
        truncating, written, headers = True, 0, []
        for earlier in ordered:
            cut = earlier[:item]
            replayed = _warning_header(cut)
            if replayed is not None:
                written += len(cut)
                headers.append(replayed)
    return headers


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """Add one RFC 7234 `Warning: 299 - "..."` header per warning, as kube-apiserver does."""
    for header in warning_headers(warnings):
        response.raw_headers.append((b"warning", header))
    return response
