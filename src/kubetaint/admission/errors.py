"""Admission rejections as Kubernetes `Status` objects (mirrors apimachinery/pkg/api/errors and
apiserver/pkg/admission/errors.go NewForbidden).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.admission.attributes import Attributes, qualified_resource, resource_group, resource_plural

JSONDict = dict[str, Any]


class AdmissionError(Exception):
    """A rejected request; `status` is the metav1.Status JSON kube-apiserver would return."""

    def __init__(self, status: JSONDict) -> None:
        super().__init__(status["message"])
        self.status = status

    @property
    def code(self) -> int:
        return int(self.status["code"])

    @property
    def reason(self) -> str:
        return str(self.status["reason"])

    @property
    def message(self) -> str:
        return str(self.status["message"])


def _status(code: int, reason: str, message: str, details: JSONDict | None = None) -> JSONDict:
    status: JSONDict = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        status["details"] = details
    return status


def _object_name(attrs: Attributes) -> str:
    """extractResourceName: the request name, else metadata.name, else generateName, else Unknown."""
    if attrs.name:
        return attrs.name
    meta = (attrs.object or {}).get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName") or "Unknown")


def forbidden(attrs: Attributes, reason: str) -> AdmissionError:
    """admission.NewForbidden: 403 `<resource> "<name>" is forbidden: <reason>`."""
    resource = attrs.resource
    name = _object_name(attrs)
    qualified = qualified_resource(resource)
    message = (
        f'{qualified} "{name}" is forbidden: {reason}' if name else f"{qualified} is forbidden: {reason}"
    )
    details = {"name": name, "group": resource_group(resource), "kind": resource_plural(resource)}
    return AdmissionError(_status(403, "Forbidden", message, {k: v for k, v in details.items() if v}))


def forbidden_resource(resource: str, name: str, reason: str) -> AdmissionError:
    """apierrors.NewForbidden of the GroupResource `resource`: `<resource> "<name>" is forbidden:
    <reason>` (without a name: `<resource> is forbidden: <reason>`)."""
    message = f'{resource} "{name}" is forbidden: {reason}' if name else f"{resource} is forbidden: {reason}"
    details = {"name": name, "group": resource_group(resource), "kind": resource_plural(resource)}
    return AdmissionError(_status(403, "Forbidden", message, {k: v for k, v in details.items() if v}))


def not_found(resource: str, name: str) -> AdmissionError:
    """errors.NewNotFound: 404 `<resource> "<name>" not found`."""
    qualified = qualified_resource(resource)
    details = {"name": name, "group": resource_group(resource), "kind": resource_plural(resource)}
    return AdmissionError(
        _status(404, "NotFound", f'{qualified} "{name}" not found', {k: v for k, v in details.items() if v})
    )


def bad_request(message: str) -> AdmissionError:
    """errors.NewBadRequest: 400 with the message as given."""
    return AdmissionError(_status(400, "BadRequest", message))


def invalid(kind: str, resource: str, name: str, causes: Sequence[Mapping[str, str]]) -> AdmissionError:
    """errors.NewInvalid: 422 `<Kind>.<group> "<name>" is invalid: <field>: <message>, ...`.

    Each cause has `field`, `reason` (e.g. FieldValueForbidden) and `message` (e.g. `Forbidden: ...`).
    """
    group = resource_group(resource)
    qualified_kind = f"{kind}.{group}" if group else kind
    rendered = [f"{c['field']}: {c['message']}" for c in causes]
    summary = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    details: JSONDict = {"name": name, "kind": kind, "causes": [dict(c) for c in causes]}
    if group:
        details["group"] = group
    return AdmissionError(
        _status(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {summary}', details)
    )


def internal_error(message: str) -> AdmissionError:
    """errors.NewInternalError: 500 `Internal error occurred: <message>`."""
    return AdmissionError(_status(500, "InternalError", f"Internal error occurred: {message}"))
