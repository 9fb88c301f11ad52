"""Kubernetes `Status` errors, as kube-apiserver returns them
(mirrors staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go).

`resource` arguments are group-qualified plural resources as upstream prints them:
`pods`, `nodes`, `deployments.apps`, `leases.coordination.k8s.io`.
"""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """An error with a Kubernetes `Status` body (code, reason, message, details)."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        name: str = "",
        group: str = "",
        kind: str = "",
        causes: list[dict[str, str]] | None = None,
        retry_after_seconds: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.name = name
        self.group = group
        self.kind = kind
        self.causes = causes or []
        self.retry_after_seconds = retry_after_seconds
        #: ListMeta.continue of the Status (a 410 for a compacted continue token carries one)
        self.list_continue: str | None = None

    @classmethod
    def from_status(cls, status: dict[str, Any]) -> StatusError:
        """The error a `Status` body describes (e.g. one built by an admission plugin)."""
        details = status.get("details") or {}
        err = cls(
            int(status.get("code") or 500),
            str(status.get("reason") or ""),
            str(status.get("message") or ""),
            name=str(details.get("name") or ""),
            group=str(details.get("group") or ""),
            kind=str(details.get("kind") or ""),
            causes=list(details.get("causes") or []),
            retry_after_seconds=details.get("retryAfterSeconds"),
        )
        meta = status.get("metadata")
        token = meta.get("continue") if isinstance(meta, dict) else None
        err.list_continue = token if isinstance(token, str) and token else None
        return err

    def to_status(self) -> dict[str, Any]:
        """The `Status` object for an HTTP response body."""
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        if self.kind:
            details["kind"] = self.kind
        if self.causes:
            details["causes"] = self.causes
        if self.retry_after_seconds is not None:
            details["retryAfterSeconds"] = self.retry_after_seconds
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"continue": self.list_continue} if self.list_continue else {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if details:
            status["details"] = details
        status["code"] = self.code
        return status


def _split(resource: str) -> tuple[str, str]:
    plural, _, group = resource.partition(".")
    return plural, group


def not_found(resource: str, name: str) -> StatusError:
    plural, group = _split(resource)
    return StatusError(404, "NotFound", f'{resource} "{name}" not found', name=name, group=group, kind=plural)


def already_exists(resource: str, name: str) -> StatusError:
    plural, group = _split(resource)
    return StatusError(
        409, "AlreadyExists", f'{resource} "{name}" already exists', name=name, group=group, kind=plural
    )


def conflict(resource: str, name: str, detail: str) -> StatusError:
    plural, group = _split(resource)
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {resource} "{name}": {detail}',
        name=name,
        group=group,
        kind=plural,
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def expired(message: str) -> StatusError:
    """410 Gone for a watch or list from a compacted resourceVersion."""
    return StatusError(410, "Expired", message)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(resource: str, name: str, detail: str) -> StatusError:
    plural, group = _split(resource)
    text = f'{resource} "{name}" is forbidden: {detail}' if name else f"{resource} is forbidden: {detail}"
    return StatusError(403, "Forbidden", text, name=name, group=group, kind=plural)


def internal_error(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}")
