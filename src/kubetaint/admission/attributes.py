"""What an admission plugin sees of a request (mirrors k8s.io/apiserver/pkg/admission Attributes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.user import UserInfo

CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
CONNECT = "CONNECT"
OPERATIONS = (CREATE, UPDATE, DELETE, CONNECT)

#: API group of each resource kubetaint serves, for qualified names in error messages.
RESOURCE_GROUPS: dict[str, str] = {
    "priorityclasses": "scheduling.k8s.io",
    "runtimeclasses": "node.k8s.io",
    "poddisruptionbudgets": "policy",
    "daemonsets": "apps",
    "replicasets": "apps",
    "deployments": "apps",
    "leases": "coordination.k8s.io",
    "events": "",
}


def qualified_resource(resource: str) -> str:
    """GroupResource.String(): `pods`, `priorityclasses.scheduling.k8s.io` (of a plural or of a
    resource already qualified)."""
    if "." in resource:
        return resource
    group = RESOURCE_GROUPS.get(resource, "")
    return f"{resource}.{group}" if group else resource


def resource_group(resource: str) -> str:
    """GroupResource.Group of a plural (`priorityclasses`) or a qualified resource."""
    plural, dot, group = resource.partition(".")
    return group if dot else RESOURCE_GROUPS.get(plural, "")


def resource_plural(resource: str) -> str:
    """GroupResource.Resource: `leases.coordination.k8s.io` → `leases`."""
    return resource.partition(".")[0]


#: Attributes' fields, in the order its constructor takes them.
_FIELDS = (
    "operation",
    "resource",
    "object",
    "old_object",
    "namespace",
    "name",
    "subresource",
    "dry_run",
    "user",
)


class Attributes:
    """One admission request.

    `resource` is the GroupResource (`pods`, `leases.coordination.k8s.io`: the store's resource
    name); `object` is the new object (None on DELETE/CONNECT), `old_object` the stored one on
    UPDATE; `user` is the requesting user (GetUserInfo), None for the control plane's own
    components writing in process.
    Read-only, as both objects are: plugins return changed copies. (A plain slotted class rather
    than a frozen dataclass, whose construction costs four times as much: every write builds one.)
    """

    __slots__ = _FIELDS

    def __init__(  # noqa: PLR0917 - every caller passes the first fields by position
        self,
        operation: str,
        resource: str,
        object: Mapping[str, Any] | None = None,
        old_object: Mapping[str, Any] | None = None,
        namespace: str = "",
        name: str = "",
        subresource: str = "",
        dry_run: bool = False,
        user: UserInfo | None = None,
    ) -> None:
        if operation not in OPERATIONS:
            raise ValueError(f"unknown admission operation {operation!r}")
        self.operation = operation
        self.resource = resource
        self.object = object
        self.old_object = old_object
        self.namespace = namespace
        self.name = name
        self.subresource = subresource
        self.dry_run = dry_run
        self.user = user

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Attributes:
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # carries dicts

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"Attributes({shown})"

    def with_object(self, obj: Mapping[str, Any] | None) -> Attributes:
        """The same request carrying the (mutated) object `obj`."""
        return Attributes(
            self.operation,
            self.resource,
            obj,
            self.old_object,
            self.namespace,
            self.name,
            self.subresource,
            self.dry_run,
            self.user,
        )
