"""What an admission plugin sees of a request (mirrors k8s.io/apiserver/pkg/admission Attributes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
    """GroupResource.String(): `pods`, `priorityclasses.scheduling.k8s.io`."""
    group = RESOURCE_GROUPS.get(resource, "")
    return f"{resource}.{group}" if group else resource


@dataclass(frozen=True)
class Attributes:
    """One admission request.

    `object` is the new object (None on DELETE/CONNECT), `old_object` the stored one on UPDATE.
    Both are read-only: plugins return changed copies.
    """

    operation: str
    resource: str
    object: Mapping[str, Any] | None = None
    old_object: Mapping[str, Any] | None = None
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    dry_run: bool = False

    def __post_init__(self) -> None:
        if self.operation not in OPERATIONS:
            raise ValueError(f"unknown admission operation {self.operation!r}")

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
        )
