"""kube-apiserver's Invalid error: the 422 Status with causes and its message, and kubectl's rendering
(mirrors apimachinery/pkg/api/errors.NewInvalid, util/errors aggregate formatting and kubectl's
cmdutil.StandardErrorMessage/MultilineError)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation.field import FieldError


def qualified_kind(kind: str, group: str = "") -> str:
    """schema.GroupKind.String(): `Kind` for the core group, else `Kind.group`."""
    return f"{kind}.{group}" if group else kind


def _aggregate(errors: Sequence[FieldError]) -> str:
    """ErrorList.ToAggregate().Error(): de-duplicated, `[a, b]` when more than one."""
    seen: list[str] = []
    for err in errors:
        text = str(err)
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def invalid_message(kind: str, name: str, errors: Sequence[FieldError], group: str = "") -> str:
    """Status.message of NewInvalid: `Pod "p" is invalid: [a, b]`."""
    prefix = f"{qualified_kind(kind, group)} {go_quote(name)} is invalid"
    if not errors:
        return prefix
    return f"{prefix}: {_aggregate(errors)}"


def invalid_status(kind: str, name: str, errors: Sequence[FieldError], group: str = "") -> dict[str, Any]:
    """The 422 Status body kube-apiserver returns for a failed validation."""
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{"reason": e.reason, "message": e.message, "field": e.field} for e in errors]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": invalid_message(kind, name, errors, group),
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def kubectl_invalid_message(kind: str, name: str, errors: Sequence[FieldError]) -> str:
    """What kubectl prints for that Status (without the trailing newline).

    One cause: `The Node "n1" is invalid: <field>: <message>`; several: the prefix, then one
    `* <field>: <message>` line per distinct cause.
    """
    prefix = f"The {kind} {go_quote(name)} is invalid: "
    lines: list[str] = []
    for e in errors:  # statusCausesToAggrError drops repeated causes
        line = f"{e.field}: {e.message}"
        if line not in lines:
            lines.append(line)
    if not lines:
        return f"The {kind} {go_quote(name)} is invalid"
    if len(lines) == 1:
        return prefix + lines[0]
    return prefix + "\n" + "\n".join(f"* {line}" for line in lines)
