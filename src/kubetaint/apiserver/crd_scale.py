"""The custom resource validator's checks of the scale subresource's paths
(apiextensions-apiserver pkg/registry/customresource/validator.go ValidateScaleSpec and
ValidateScaleStatus): the replicas at `specReplicasPath` and `statusReplicasPath`, read as
unstructured.NestedInt64 reads them, are integers from 0 to 2^31-1, and the value at
`labelSelectorPath` is a string. An absent value is no error (NestedInt64 reads it as 0).
"""

from __future__ import annotations

from typing import Any

from kubetaint.api.validation import field as fe
from kubetaint.apiserver.patch import go_value

JSON = dict[str, Any]
MAX_INT32 = 2**31 - 1


def validate(obj: JSON, paths: tuple[str, str, str], *, spec: bool = True) -> list[fe.FieldError]:
    """The errors of `obj`'s scale paths (specReplicasPath, statusReplicasPath,
    labelSelectorPath; "" when the version has no scale subresource). `spec` False: the status
    strategy's check, which leaves the spec path alone."""
    spec_path, status_path, selector_path = paths
    if not spec_path and not status_path:
        return []
    errs: list[fe.FieldError] = []
    if spec:
        errs.extend(_replicas_errors(obj, spec_path))
    errs.extend(_replicas_errors(obj, status_path))
    if selector_path:
        _, error = _nested(obj, selector_path, "string")
        if error:
            errs.append(fe.invalid(selector_path, "", error))
    return errs


def _replicas_errors(obj: JSON, path: str) -> list[fe.FieldError]:
    value, error = _nested(obj, path, "int64")
    replicas = value if isinstance(value, int) and not isinstance(value, bool) else 0
    if error:
        return [fe.invalid(path, 0, error)]
    if replicas < 0:
        return [fe.invalid(path, replicas, "should be a non-negative integer")]
    if replicas > MAX_INT32:
        return [fe.invalid(path, replicas, f"should be less than or equal to {MAX_INT32}")]
    return []


def _nested(obj: JSON, path: str, want: str) -> tuple[Any, str]:
    """(value, "") or (None, the accessor error) as unstructured.NestedInt64 / NestedString
    report them (`.spec.replicas accessor error: 1.5 is of the type float64, expected int64`)."""
    fields = path.removeprefix(".").split(".")
    value: Any = obj
    for i, name in enumerate(fields):
        if value is None:
            return None, ""
        if not isinstance(value, dict):
            at = "." + ".".join(fields[: i + 1])
            return None, (
                f"{at} accessor error: {go_value(value)} is of the type {_go_type(value)}, "
                "expected map[string]interface{}"
            )
        if name not in value:
            return None, ""
        value = value[name]
    if _go_type(value) != want:
        at = "." + ".".join(fields)
        return (
            None,
            f"{at} accessor error: {go_value(value)} is of the type {_go_type(value)}, expected {want}",
        )
    return value, ""


def _go_type(value: Any) -> str:
    """`%T` of a decoded JSON value."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):  # a JSON integer beyond int64 decodes as a float64
        return "int64" if -(2**63) <= value < 2**63 else "float64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "[]interface {}" if isinstance(value, list) else "map[string]interface {}"
