"""The write hooks the server calls on every create/update/patch/delete: admission (mutating then
validating, as kube-apiserver's admission chain) and object validation (the registry strategy's
Validate/ValidateUpdate). The defaults do nothing; `kubetaint up` plugs in kubetaint.admission
and the foundation's validation.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

JSON = dict[str, Any]
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
#: (field path, cause reason such as `FieldValueRequired`, error body such as `Required value`).
FieldCause = tuple[str, str, str]


class WriteHooks(Protocol):
    """What the server asks before it writes.

    `admit` may return a changed object (mutating admission; it must not change `obj` or `old`
    in place) or raise `kubetaint.api.errors.StatusError` to reject the request. `resource` is the
    store's group-qualified plural; `old` is None on CREATE; `obj` is the old object on DELETE.
    `validate` returns field errors; any error makes the write a 422 Invalid.
    """

    def admit(
        self,
        operation: Operation,
        resource: str,
        subresource: str,
        obj: JSON,
        *,
        old: JSON | None,
        dry_run: bool,
    ) -> JSON: ...

    def validate(self, resource: str, obj: JSON, old: JSON | None) -> list[FieldCause]: ...


@runtime_checkable
class Evictor(Protocol):
    """Optional: hooks that carry out a pod eviction themselves (the engine's: PodDisruptionBudget
    checks, then the delete). Wrapping hooks (NodeRestriction, the RBAC escalation check) do
    not hide it: the server takes the evictor from the hooks it is given, before wrapping."""

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> JSON: ...


class NoHooks:
    """Admit everything unchanged and find nothing invalid."""

    def admit(
        self,
        operation: Operation,
        resource: str,
        subresource: str,
        obj: JSON,
        *,
        old: JSON | None,
        dry_run: bool,
    ) -> JSON:
        return obj

    def validate(self, resource: str, obj: JSON, old: JSON | None) -> list[FieldCause]:
        return []
