"""Custom resources against their CRD's structural schema (`openAPIV3Schema`): pruning of
unknown fields, defaulting, and validation with kube-openapi's messages (mirrors
k8s.io/apiextensions-apiserver pkg/apiserver/schema/{pruning,defaulting} and
pkg/apiserver/validation/validation.go, which turns kube-openapi's errors into field errors).

`apiVersion`, `kind` and `metadata` at the root (and of an `x-kubernetes-embedded-resource`) are
never pruned; `x-kubernetes-preserve-unknown-fields: true` keeps unknown fields below it.
Formats other than the ones listed in FORMATS, and CEL rules (`x-kubernetes-validations`), are not
checked: `unchecked` names what a schema uses of them, for the server to say so.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

from kubetaint.api import gopattern
from kubetaint.api.crformats import recognized
from kubetaint.api.goquote import go_float
from kubetaint.api.validation import field as f

JSON = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def _d(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# pruning ----------------------------------------------------------------------------------


def prune(obj: JSON, schema: Mapping[str, Any] | None) -> tuple[JSON, list[str]]:
    """`obj` without the fields `schema` does not specify, and the paths of the dropped fields
    (`spec.foo`, `spec.items[0].bar`), in the object's order. No schema: nothing is kept but
    apiVersion, kind and metadata (a CRD without a schema prunes everything)."""
    dropped: list[str] = []
    out = _prune_object(obj, _d(schema), "", dropped, root=True)
    return (out if isinstance(out, dict) else obj), dropped


def _prune(value: Any, schema: JSON, path: str, dropped: list[str]) -> Any:
    if isinstance(value, dict):
        return _prune_object(
            value, schema, path, dropped, root=schema.get("x-kubernetes-embedded-resource") is True
        )
    if isinstance(value, list):
        items = _d(schema.get("items"))
        if not items and schema.get("x-kubernetes-preserve-unknown-fields") is True:
            return value
        return [_prune(v, items, f"{path}[{i}]", dropped) for i, v in enumerate(value)]
    return value


def _prune_object(value: JSON, schema: JSON, path: str, dropped: list[str], *, root: bool) -> JSON:
    props = _d(schema.get("properties"))
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    additional = schema.get("additionalProperties")
    out: JSON = {}
    for key, item in value.items():
        if root and key in _ROOT_FIELDS:
            out[key] = item
            continue
        sub = props.get(key)
        if isinstance(sub, dict):
            out[key] = _prune(item, sub, _child(path, key), dropped)
        elif isinstance(additional, dict):
            out[key] = _prune(item, additional, _child(path, key), dropped)
        elif additional is True or preserve:
            out[key] = item
        else:
            dropped.append(_child(path, key))
    return out


# defaulting -------------------------------------------------------------------------------


def default(obj: JSON, schema: Mapping[str, Any] | None) -> JSON:
    """`obj` with the schema's `default`s set where a field is absent (structuraldefaulting.Default)."""
    if not schema:
        return obj
    out = _default(obj, _d(schema))
    return out if isinstance(out, dict) else obj


def _default(value: Any, schema: JSON) -> Any:
    if isinstance(value, dict):
        props = _d(schema.get("properties"))
        out = dict(value)
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            if "default" in sub and (
                key not in out or (out[key] is None and sub.get("nullable") is not True)
            ):
                out[key] = copy.deepcopy(sub["default"])
            if key in out:
                out[key] = _default(out[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in list(out):
                if key not in props:
                    out[key] = _default(out[key], additional)
        return out
    if isinstance(value, list):
        items = _d(schema.get("items"))
        return [_default(v, items) for v in value] if items else value
    return value


# validation -------------------------------------------------------------------------------

#: The formats checked (kube-openapi's strfmt registry, the ones a CRD can use and clients
#: commonly do); values of other formats are accepted unchecked.
FORMATS: dict[str, re.Pattern[str]] = {
    "date": re.compile(r"\d{4}-\d{2}-\d{2}"),
    "date-time": re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"),
}


def _json_type(value: Any) -> str:
    """go-openapi's name of a value's JSON type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type_matches(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def validate(obj: JSON, schema: Mapping[str, Any] | None) -> list[f.FieldError]:
    """The field errors of a custom resource against its schema (kube-openapi's validator as
    apiextensions reports it: `spec.replicas: Invalid value: "string": spec.replicas in body
    must be of type integer: "string"`, `spec.size: Unsupported value: ...`, `spec: Required
    value`). metadata is validated by the object meta rules, not here."""
    if not schema:
        return []
    errs: list[f.FieldError] = []
    body = {k: v for k, v in obj.items() if k != "metadata"}
    _validate(body, _d(schema), "", errs, root=True)
    return errs


def _validate(value: Any, schema: JSON, path: str, errs: list[f.FieldError], *, root: bool = False) -> None:
    shown = path or "<root>"
    if value is None:
        if schema.get("nullable") is True or not schema.get("type"):
            return
        want = str(schema.get("type"))
        errs.append(f.type_invalid(path, "null", f'{shown} in body must be of type {want}: "null"'))
        return
    if schema.get("x-kubernetes-int-or-string") is True and not (
        isinstance(value, str) or _type_matches(value, "integer")
    ):
        message = f'{shown} in body must be of type integer,string: "{_json_type(value)}"'
        errs.append(f.type_invalid(path, _json_type(value), message))
        return
    kind = schema.get("type")
    if isinstance(kind, str) and kind and not _type_matches(value, kind):
        actual = _json_type(value)
        errs.append(f.type_invalid(path, actual, f'{shown} in body must be of type {kind}: "{actual}"'))
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        errs.append(f.not_supported(path, value, [_enum_text(e) for e in enum]))
    if isinstance(value, str):
        _validate_string(value, schema, path, shown, errs)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _validate_number(value, schema, path, shown, errs)
    elif isinstance(value, list):
        _validate_array(value, schema, path, shown, errs)
    elif isinstance(value, dict):
        _validate_object(value, schema, path, shown, errs, root=root)
    for sub in schema.get("allOf") or []:
        if isinstance(sub, dict):
            _validate(value, sub, path, errs)
    any_of = [s for s in schema.get("anyOf") or [] if isinstance(s, dict)]
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    if any_of and not int_or_string and all(_errors_of(value, s, path) for s in any_of):
        errs.append(f.invalid(path, value, f"{shown} in body must validate at least one schema (anyOf)"))
    one_of = [s for s in schema.get("oneOf") or [] if isinstance(s, dict)]
    if one_of:
        matching = sum(1 for s in one_of if not _errors_of(value, s, path))
        if matching != 1:
            errs.append(
                f.invalid(path, value, f"{shown} in body must validate one and only one schema (oneOf)")
            )
    not_schema = schema.get("not")
    if isinstance(not_schema, dict) and not _errors_of(value, not_schema, path):
        errs.append(f.invalid(path, value, f"{shown} in body must not validate the schema (not)"))


def _errors_of(value: Any, schema: JSON, path: str) -> list[f.FieldError]:
    found: list[f.FieldError] = []
    _validate(value, schema, path, found)
    return found


def _enum_text(value: Any) -> str:
    return value if isinstance(value, str) else f.render_value(value)


def _validate_string(value: str, schema: JSON, path: str, shown: str, errs: list[f.FieldError]) -> None:
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and len(value) > max_length:
        errs.append(
            f.FieldError(
                path,
                f.TOO_LONG,
                "FieldValueTooLong",
                value,
                "",
                f"Too long: may not be longer than {max_length}",
            )
        )
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(value) < min_length:
        errs.append(f.invalid(path, value, f"{shown} in body should be at least {min_length} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not gopattern.search(pattern, value):
        errs.append(f.invalid(path, value, f"{shown} in body should match '{pattern}'"))
    fmt = schema.get("format")
    check = FORMATS.get(str(fmt)) if fmt else None
    if check is not None and check.fullmatch(value) is None:
        errs.append(f.invalid(path, value, f"{shown} in body must be of type {fmt}: {f.render_value(value)}"))


def _validate_number(value: float, schema: JSON, path: str, shown: str, errs: list[f.FieldError]) -> None:
    """kube-openapi's numberValidator: multipleOf, then minimum, then maximum. A bound is a float64;
    an integer value is checked against the bound converted to int64 (truncated) and the message
    shows it as an integer, unless the bound is out of the schema type's range (a fractional
    bound of an `integer`), when value and bound are compared as float64 as for a fractional
    value, and the message shows the bound as `%v` of a float64 (`1e+06`)."""
    kind = schema.get("type")
    multiple = _bound(schema.get("multipleOf"))
    if multiple is not None and multiple > 0:
        native = _native(value, multiple, kind)
        if native:  # an integer factor of 0 (a fraction below 1) is checked as float64
            failed = value % native != 0
            shown_bound = str(native)
        else:
            failed = not _json_integer(1 / multiple * value if multiple < 1 else value / multiple)
            shown_bound = go_float(multiple)
        if failed:
            errs.append(f.invalid(path, value, f"{shown} in body should be a multiple of {shown_bound}"))
    minimum = _bound(schema.get("minimum"))
    if minimum is not None:
        native = _native(value, minimum, kind)
        bound: float = minimum if native is None else native
        text = go_float(minimum) if native is None else str(native)
        if schema.get("exclusiveMinimum") is True and value <= bound:
            errs.append(f.invalid(path, value, f"{shown} in body should be greater than {text}"))
        elif value < bound:
            errs.append(f.invalid(path, value, f"{shown} in body should be greater than or equal to {text}"))
    maximum = _bound(schema.get("maximum"))
    if maximum is not None:
        native = _native(value, maximum, kind)
        bound = maximum if native is None else native
        text = go_float(maximum) if native is None else str(native)
        if schema.get("exclusiveMaximum") is True and value >= bound:
            errs.append(f.invalid(path, value, f"{shown} in body should be less than {text}"))
        elif value > bound:
            errs.append(f.invalid(path, value, f"{shown} in body should be less than or equal to {text}"))


def _bound(raw: Any) -> float | None:
    """A schema bound as the float64 kube-openapi holds it (None when absent or not a number)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return float(raw)


_INT64 = 2**63


def _native(value: float, bound: float, kind: Any) -> int | None:
    """The bound as int64 when kube-openapi checks an integer value natively (MaximumNativeType and
    friends): the value is an integer and the bound is within the schema type's range
    (IsValueValidAgainstRange: a fractional or huge bound of an `integer` is not). None: compare as
    float64."""
    if not isinstance(value, int) or not math.isfinite(bound):
        return None
    if kind == "integer" and (not bound.is_integer() or not -_INT64 <= bound < _INT64):
        return None
    if not -_INT64 <= bound < _INT64:
        return None  # Go's int64(bound) is undefined beyond int64; compare as float64
    return int(bound)  # Go's int64(float64) truncates toward zero


_MAX_JSON_INTEGER = float(2**53 - 1)


def _json_integer(number: float) -> bool:
    """swag.IsFloat64AJSONInteger: within ±(2^53 − 1) and an integer up to a relative error of 1e-9
    (so 0.3 is a multiple of 0.1)."""
    if not math.isfinite(number) or abs(number) > _MAX_JSON_INTEGER:
        return False
    rounded = float(round(number))
    if number == rounded:
        return True
    if rounded == 0:
        return False
    return abs(number - rounded) < 1e-9 * abs(rounded)


def _too_many(path: str, count: int, maximum: int) -> f.FieldError:
    """maxItems / maxProperties exceeded (the detail empty, "items" whatever the maximum)."""
    message = f"Too many: {count}: must have at most {maximum} items"
    return f.FieldError(path, "Too many", "FieldValueTooMany", count, "", message)


def _validate_array(value: list[Any], schema: JSON, path: str, shown: str, errs: list[f.FieldError]) -> None:
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        errs.append(_too_many(path, len(value), max_items))
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and len(value) < min_items:
        errs.append(f.invalid(path, value, f"{shown} in body should have at least {min_items} items"))
    items = _d(schema.get("items"))
    for i, item in enumerate(value):
        _validate(item, items, f"{path}[{i}]", errs)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                errs.append(f.duplicate(f"{path}[{i}]", item))
            else:
                seen.append(item)
    elif list_type == "map":
        keys = [str(k) for k in schema.get("x-kubernetes-list-map-keys") or []]
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key = tuple(item.get(k) for k in keys)
            if key in seen_keys:
                errs.append(f.duplicate(f"{path}[{i}]", {k: item.get(k) for k in keys if k in item}))
            else:
                seen_keys.append(key)


def _validate_object(
    value: JSON, schema: JSON, path: str, shown: str, errs: list[f.FieldError], *, root: bool
) -> None:
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in value:
            errs.append(f.required(_child(path, name)))
    max_props = schema.get("maxProperties")
    if isinstance(max_props, int) and len(value) > max_props:
        errs.append(_too_many(path, len(value), max_props))
    min_props = schema.get("minProperties")
    if isinstance(min_props, int) and len(value) < min_props:
        errs.append(f.invalid(path, value, f"{shown} in body should have at least {min_props} properties"))
    props = _d(schema.get("properties"))
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        if root and key in ("apiVersion", "kind") and key not in props:
            continue
        sub = props.get(key)
        if isinstance(sub, dict):
            _validate(item, sub, _child(path, key), errs)
        elif isinstance(additional, dict):
            _validate(item, additional, _child(path, key), errs)


# what is not checked ----------------------------------------------------------------------


def unchecked(schema: Mapping[str, Any] | None) -> list[str]:
    """What a schema uses that kubetaint does not check: CEL rules and the formats upstream
    recognizes outside FORMATS (each named once, in the schema's order)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("x-kubernetes-validations") and "x-kubernetes-validations" not in found:
                found.append("x-kubernetes-validations")
            fmt = node.get("format")
            named = f"format {fmt}"
            if (
                isinstance(fmt, str)
                and fmt
                and fmt not in (*FORMATS, *_NUMERIC_FORMATS)
                and recognized(node)  # upstream ignores the others too (crformats)
                and named not in found
            ):
                found.append(named)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


_NUMERIC_FORMATS = ("int32", "int64", "float", "double", "byte", "password", "int-or-string")
