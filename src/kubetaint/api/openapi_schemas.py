"""The served kinds' OpenAPI v3 schemas (upstream's `components.schemas` of the release
kubetaint.api.version names, pruned to the served kinds by scripts/build_openapi_data.py), and the
strict-decoding check built on them.

Strict decoding mirrors kube-apiserver with `fieldValidation=Strict` (apimachinery's
runtime/serializer/json with sigs.k8s.io/json's UnmarshalStrict): a field the kind's schema does
not declare is `unknown field "spec.foo"`, a field given twice is `duplicate field "spec.paused"`
(a field both unknown and duplicated is reported as unknown only, as upstream does for typed
kinds), and the errors join into `strict decoding error: a, b`. The live server
(`kubetaint.apiserver.fieldvalidation`) and the command line (`validate`, `explain`, `simulate`,
`whatif`) use this one implementation.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources as package_data
from typing import Any

from kubetaint.api.version import OPENAPI_SCHEMA_FILE

JSON = dict[str, Any]
SCHEMA_FILE = OPENAPI_SCHEMA_FILE
REF = "#/components/schemas/"
#: sigs.k8s.io/json keeps at most this many strict errors per document.
MAX_STRICT_ERRORS = 100


@cache
def schemas() -> dict[str, JSON]:
    """Every shipped schema by name (read once; treat as read-only)."""
    data = package_data.files("kubetaint.api").joinpath("openapi_data", SCHEMA_FILE).read_bytes()
    loaded: dict[str, JSON] = json.loads(gzip.decompress(data))
    return loaded


@cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in schemas().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            out[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return out


def schema_name(group: str, version: str, kind: str) -> str | None:
    """The components.schemas key of a kind (`io.k8s.api.core.v1.Pod`), if shipped."""
    return _by_gvk().get((group, version, kind))


def schema_of(api_version: str, kind: str) -> str | None:
    """The components.schemas key for an object's apiVersion and kind, if shipped."""
    group, _, version = api_version.rpartition("/")
    return schema_name(group, version, kind)


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


class _Walk:
    """One walk of a body against a schema, collecting strict errors in body order."""

    def __init__(self, patch: bool, duplicates: Mapping[int, Sequence[str]], sort_keys: bool) -> None:
        self.patch = patch
        self.duplicates = duplicates
        self.sort_keys = sort_keys
        self.found: list[str] = []

    def value(self, value: Any, schema: JSON, path: str) -> None:
        schema = _resolve(schema)
        if isinstance(value, dict):
            self.mapping(value, schema, path)
        elif isinstance(value, list):
            items = schema.get("items")
            if isinstance(items, dict):
                for index, item in enumerate(value):
                    self.value(item, items, f"{path}[{index}]")

    def mapping(self, value: dict[Any, Any], schema: JSON, path: str) -> None:
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        twice = self.duplicates.get(id(value), ()) if self.duplicates else ()
        keys = sorted(value, key=str) if self.sort_keys else list(value)
        for key in keys:
            item = value[key]
            if self.patch and (str(key).startswith("$") or item is None):
                continue
            child = f"{path}.{key}" if path else str(key)
            if isinstance(props, dict):
                if key not in props:
                    self.found.append(f'unknown field "{child}"')
                    continue
                if key in twice:
                    self.found.append(f'duplicate field "{child}"')
                self.value(item, props[key], child)
            elif isinstance(extra, dict):
                if key in twice:
                    self.found.append(f'duplicate field "{child}"')
                self.value(item, extra, child)


def strict_errors(
    obj: Any,
    schema: str | JSON,
    *,
    patch: bool = False,
    duplicates: Mapping[int, Sequence[str]] | None = None,
    sort_keys: bool = False,
) -> list[str]:
    """`unknown field "…"` and `duplicate field "…"` errors of `obj` against `schema` (a
    components.schemas key, or a schema whose `$ref`s name those keys), in body order
    (`sort_keys`: in key order, as a YAML body converted to JSON is), at most MAX_STRICT_ERRORS,
    each once. `duplicates` maps id(dict) to the keys its
    text gave more than once (the parsers of `kubetaint.api.strictload` record them)."""
    root = schemas().get(schema) if isinstance(schema, str) else schema
    if root is None:
        return []
    walk = _Walk(patch, duplicates or {}, sort_keys)
    walk.value(obj, root, "")
    unique = list(dict.fromkeys(walk.found))
    return unique[:MAX_STRICT_ERRORS]


def prune_unknown(obj: Any, schema: str, *, patch: bool = False) -> Any:
    """`obj` without the fields `schema` does not declare, as decoding into the Go type drops
    them (`patch`: strategic-merge `$` directives and `null` deletions are kept). Unchanged
    subtrees are shared with `obj`, which is not modified."""
    root = schemas().get(schema)
    return obj if root is None else _prune(obj, root, patch)


def _prune(value: Any, schema: JSON, patch: bool) -> Any:
    schema = _resolve(schema)
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not isinstance(props, dict) and not isinstance(extra, dict):
            return value
        out: JSON = {}
        changed = False
        for key, item in value.items():
            if patch and (str(key).startswith("$") or item is None):
                out[key] = item
                continue
            if isinstance(props, dict):
                if key not in props:
                    changed = True
                    continue
                kept = _prune(item, props[key], patch)
            else:
                assert isinstance(extra, dict)
                kept = _prune(item, extra, patch)
            changed = changed or kept is not item
            out[key] = kept
        return out if changed else value
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        kept_items = [_prune(item, items, patch) for item in value]
        if all(kept is item for kept, item in zip(kept_items, value, strict=True)):
            return value
        return kept_items
    return value


def strict_decoding_error(errors: Sequence[str]) -> str:
    """runtime.NewStrictDecodingError(errs).Error()."""
    return "strict decoding error: " + ", ".join(errors)


def cannot_handle(kind: str, version: str, message: str) -> str:
    """transformDecodeError: `Pod in version "v1" cannot be handled as a Pod: <message>`."""
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'
