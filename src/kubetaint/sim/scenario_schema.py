"""The Scenario format's JSON Schema (`scenario.schema.json`, next to this module) and the structural
check the loader runs with it before anything else: every problem (unknown keys, wrong types,
missing values, out-of-range numbers) found in one pass, each with its path.

The schema is standard JSON Schema (draft 2020-12) for editors; this checker implements the
keywords the schema uses: type, const, enum, properties, additionalProperties, required, items,
minimum, maximum, minLength, minItems, anyOf and local `$ref`s. Annotations (title, description)
are ignored, and an unknown keyword is an error in the schema, found by the tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_data
from typing import Any

SCHEMA_FILE = "scenario.schema.json"
#: the keywords `check` knows; annotations are skipped
KEYWORDS = frozenset(
    (
        "type",
        "const",
        "enum",
        "properties",
        "additionalProperties",
        "required",
        "items",
        "minimum",
        "maximum",
        "minLength",
        "minItems",
        "anyOf",
        "$ref",
    )
)
ANNOTATIONS = frozenset(("$schema", "$defs", "title", "description", "default", "examples"))
_TYPE_NAMES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


@cache
def scenario_schema() -> dict[str, Any]:
    """The shipped schema (read once; treat as read-only)."""
    text = package_data.files("kubetaint.sim").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@dataclass(frozen=True)
class SchemaProblem:
    """One problem: the path (keys and indexes) and the message."""

    path: tuple[str | int, ...]
    message: str


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    return value is None


def _shown(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def unsupported(value: Any) -> str:
    """A value in an `Unsupported value: ...` message: a string quoted as Go's %q quotes it
    (field.NotSupported's form), anything else as `_shown` says it."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '"...'
    return _shown(value)


class _Checker:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.problems: list[SchemaProblem] = []

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        for _ in range(32):
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                return schema
            node: Any = self.root
            for part in ref.removeprefix("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def fail(self, path: tuple[str | int, ...], message: str) -> None:
        self.problems.append(SchemaProblem(path, message))

    def matches(self, value: Any, schema: Mapping[str, Any]) -> bool:
        probe = _Checker(self.root)
        probe.check(value, schema, ())
        return not probe.problems

    def check(self, value: Any, schema: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
        schema = self.resolve(schema)
        if "anyOf" in schema:
            options = [self.resolve(s) for s in schema["anyOf"]]
            if not any(self.matches(value, s) for s in options):
                kinds = [_TYPE_NAMES.get(str(s.get("type")), "a value") for s in options]
                self.fail(path, f"expected {' or '.join(kinds)}, got {_shown(value)}")
            return
        if "const" in schema and value != schema["const"]:
            self.fail(
                path,
                f"Unsupported value: {unsupported(value)}: supported values: {json.dumps(schema['const'])}",
            )
            return
        if "enum" in schema and value not in schema["enum"]:
            supported = ", ".join(json.dumps(v) for v in schema["enum"])
            self.fail(path, f"Unsupported value: {unsupported(value)}: supported values: {supported}")
            return
        kind = schema.get("type")
        if isinstance(kind, str) and not _is_type(value, kind):
            self.fail(path, f"expected {_TYPE_NAMES[kind]}, got {_shown(value)}")
            return
        if isinstance(value, Mapping):
            self.mapping(value, schema, path)
        elif isinstance(value, list):
            self.sequence(value, schema, path)
        elif isinstance(value, str):
            if len(value) < schema.get("minLength", 0):
                self.fail(path, "Required value")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            low, high = schema.get("minimum"), schema.get("maximum")
            if low is not None and value < low:
                self.fail(path, f"must be at least {low}, got {_shown(value)}")
            elif high is not None and value > high:
                self.fail(path, f"must be at most {high}, got {_shown(value)}")

    def mapping(
        self, value: Mapping[Any, Any], schema: Mapping[str, Any], path: tuple[str | int, ...]
    ) -> None:
        props: Mapping[str, Any] = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for name in schema.get("required") or []:
            if name not in value:
                self.fail((*path, name), "Required value")
        if extra is True:  # only the declared keys are checked (a manifest's are its decoder's)
            for key, sub in props.items():
                if key in value:
                    self.check(value[key], sub, (*path, key))
            return
        for key, item in value.items():
            if not isinstance(key, str):
                self.fail(path, f"expected string keys, got {_shown(key)}")
                continue
            if key in props:
                self.check(item, props[key], (*path, key))
            elif extra is False:
                supported = ", ".join(props)
                self.fail((*path, key), f"unknown field (supported: {supported})")
            elif isinstance(extra, Mapping):
                self.check(item, extra, (*path, key))

    def sequence(self, value: list[Any], schema: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
        if len(value) < schema.get("minItems", 0):
            self.fail(path, "Required value")
        items = schema.get("items")
        if isinstance(items, Mapping):
            items = self.resolve(items)
            simple = _simple_object(items)
            for index, item in enumerate(value):
                if simple is not None and type(item) is dict and _holds(item, *simple):
                    continue  # (150,000 manifests: the common case without a call per key)
                self.check(item, items, (*path, index))


def _simple_object(schema: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]] | None:
    """(required keys, (key, type) of each declared key) of an object schema whose declared keys
    only have a type and whose other keys are free; None for any other schema."""
    if schema.get("type") != "object" or schema.get("additionalProperties", True) is not True:
        return None
    typed: list[tuple[str, str]] = []
    for key, sub in (schema.get("properties") or {}).items():
        if set(sub) - {"type", "description"} or not isinstance(sub.get("type"), str):
            return None
        typed.append((key, sub["type"]))
    return tuple(schema.get("required") or ()), tuple(typed)


#: The plain type whose values are of each schema type (the usual parsed value, told first).
_PLAIN_TYPES: dict[str, type] = {"object": dict, "array": list, "string": str}


def _holds(value: dict[Any, Any], required: tuple[str, ...], typed: tuple[tuple[str, str], ...]) -> bool:
    for key in required:
        if key not in value:
            return False
    for key, kind in typed:
        if key in value:
            item = value[key]
            if type(item) is not _PLAIN_TYPES.get(kind) and not _is_type(item, kind):
                return False
    return True


def check(document: Any, schema: Mapping[str, Any] | None = None) -> list[SchemaProblem]:
    """Every structural problem of a Scenario document, in document order."""
    root = schema if schema is not None else scenario_schema()
    checker = _Checker(root)
    checker.check(document, root, ())
    return checker.problems
