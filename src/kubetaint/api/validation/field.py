"""Field errors as kube-apiserver reports them
(mirrors staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go).

A FieldError's `message` is upstream's `ErrorBody()` and `str(err)` is upstream's `Error()`:
`<field>: <Type>[: <bad value>][: <detail>]`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubetaint.api.goquote import go_float, go_quote

INVALID = "Invalid value"
REQUIRED = "Required value"
NOT_SUPPORTED = "Unsupported value"
DUPLICATE = "Duplicate value"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"
TYPE_INVALID = "Invalid value"
TOO_MANY = "Too many"

# field.ErrorType -> metav1.CauseType (the StatusCause reason).
REASONS = {
    "NotFound": "FieldValueNotFound",
    "Required": "FieldValueRequired",
    "Duplicate": "FieldValueDuplicate",
    "Invalid": "FieldValueInvalid",
    "NotSupported": "FieldValueNotSupported",
    "Forbidden": "FieldValueForbidden",
    "TooLong": "FieldValueTooLong",
    "TypeInvalid": "FieldValueTypeInvalid",
    "TooMany": "FieldValueTooMany",
}

# Types whose body never prints the bad value.
_VALUELESS = frozenset({REQUIRED, FORBIDDEN, TOO_LONG})


class GoValue:
    """A bad value that Go prints with a fixed rendering (a struct's `%#v`, a map, ...)."""

    __slots__ = ("rendered", "value")

    def __init__(self, value: Any, rendered: str) -> None:
        self.value = value
        self.rendered = rendered

    def __repr__(self) -> str:
        return f"GoValue({self.rendered})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoValue) and other.rendered == self.rendered

    def __hash__(self) -> int:
        return hash(self.rendered)


@dataclass(frozen=True)
class FieldError:
    """One validation failure: field path, upstream error type, StatusCause reason, value and detail."""

    field: str
    type: str
    reason: str
    bad_value: Any = None
    detail: str = ""
    message: str = ""

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def render_value(value: Any) -> str:
    """How upstream's ErrorBody prints a bad value (`%q` strings, `%v` numbers, `null` for nil)."""
    if isinstance(value, GoValue):
        return value.rendered
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_struct(value)


def go_struct(value: Any) -> str:
    """A compact Go-like `%#v` for JSON containers (maps and slices) used as bad values."""
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(str(k))}:{_go_elem(v)}" for k, v in sorted(value.items()))
        return f"map[string]interface {{}}{{{items}}}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_elem(v) for v in value) + "}"
    return go_quote(str(value))


def go_string_map(values: Any) -> str:
    """A map[string]string as `%#v` prints it (keys sorted)."""
    items = ", ".join(f"{go_quote(k)}:{go_quote(str(v))}" for k, v in sorted(values.items()))
    return f"map[string]string{{{items}}}"


def _go_elem(value: Any) -> str:
    if isinstance(value, dict | list):
        return go_struct(value)
    return render_value(value)


def _make(path: str, type_: str, kind: str, bad_value: Any, detail: str, *, omit: bool = False) -> FieldError:
    body = type_ if type_ in _VALUELESS or omit else f"{type_}: {render_value(bad_value)}"
    if detail:
        body += f": {detail}"
    return FieldError(path, type_, REASONS[kind], bad_value, detail, body)


def invalid(path: str, bad_value: Any, detail: str) -> FieldError:
    """field.Invalid."""
    return _make(path, INVALID, "Invalid", bad_value, detail)


def invalid_omitted(path: str, detail: str) -> FieldError:
    """field.Invalid with field.OmitValueType{}: the body names no value."""
    return _make(path, INVALID, "Invalid", None, detail, omit=True)


def too_many(path: str, actual: int, maximum: int) -> FieldError:
    """field.TooMany: `Too many: <actual>: must have at most <max> items`."""
    unit = "item" if maximum == 1 else "items"
    return _make(path, TOO_MANY, "TooMany", actual, f"must have at most {maximum} {unit}")


def required(path: str, detail: str = "") -> FieldError:
    """field.Required."""
    return _make(path, REQUIRED, "Required", "", detail)


def forbidden(path: str, detail: str) -> FieldError:
    """field.Forbidden."""
    return _make(path, FORBIDDEN, "Forbidden", "", detail)


def duplicate(path: str, bad_value: Any, detail: str = "") -> FieldError:
    """field.Duplicate (upstream sets Detail afterwards for taints)."""
    return _make(path, DUPLICATE, "Duplicate", bad_value, detail)


def not_supported(path: str, bad_value: Any, valid_values: Iterable[str]) -> FieldError:
    """field.NotSupported: detail `supported values: "A", "B"`."""
    quoted = [go_quote(v) for v in valid_values]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return _make(path, NOT_SUPPORTED, "NotSupported", bad_value, detail)


def too_long(path: str, max_length: int) -> FieldError:
    """field.TooLong: `may not be more than N bytes`."""
    unit = "byte" if max_length == 1 else "bytes"
    detail = f"may not be more than {max_length} {unit}" if max_length >= 0 else "value is too long"
    return _make(path, TOO_LONG, "TooLong", "<value omitted>", detail)


def type_invalid(path: str, bad_value: Any, detail: str) -> FieldError:
    """field.TypeInvalid (a JSON value of the wrong type)."""
    return _make(path, TYPE_INVALID, "TypeInvalid", bad_value, detail)


def child(path: str, *names: str) -> str:
    """field.Path.Child."""
    parts = [path, *names] if path else list(names)
    return ".".join(parts)


def index(path: str, i: int) -> str:
    """field.Path.Index."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """field.Path.Key."""
    return f"{path}[{k}]"
