"""The server's write hooks backed by the shared engine (`kubetaint.registry.Registry`): the
admission chain (mutating), object validation (422 Invalid with kube-apiserver's causes, rendered
by `kubetaint.api.validation.invalid_status`), the admission chain (validating), in kube-apiserver's
order; pods/binding admitted as a CREATE of `pods/binding` without pod update validation (binding
is the one way spec.nodeName changes); pods/eviction through `kubetaint.registry.eviction`
(PodDisruptionBudget checks, 429 with upstream's messages).
"""

from __future__ import annotations

from typing import Any

from kubetaint.admission import CREATE, AdmissionError, Attributes
from kubetaint.api.errors import StatusError
from kubetaint.apiserver.hooks import FieldCause, Operation
from kubetaint.clock.base import Clock
from kubetaint.registry import Registry, StoreLookup
from kubetaint.registry import eviction as evictions
from kubetaint.registry.registry import plain_resource
from kubetaint.registry.validator import check_namespace_status_update

JSON = dict[str, Any]


def _key(obj: JSON) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def binding_for(pod: JSON) -> JSON:
    """The Binding that assigns `pod` (already carrying spec.nodeName) to its node."""
    namespace, name = _key(pod)
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


class EngineHooks:
    """WriteHooks running the engine registry's admission and validation, plus eviction."""

    def __init__(self, registry: Registry, clock: Clock) -> None:
        self.registry = registry
        self.clock = clock
        self._lookup = StoreLookup(registry.store)

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
        namespace, name = _key(old if obj is None else obj)
        plural = plain_resource(resource)
        chain = self.registry.admission
        try:
            if operation == "DELETE":
                if chain is not None:
                    chain.validate(
                        Attributes(operation, plural, None, old, namespace, name, "", dry_run), self._lookup
                    )
                return obj
            if subresource == "binding":
                if chain is not None:
                    attrs = Attributes(
                        CREATE, plural, binding_for(obj), None, namespace, name, "binding", dry_run
                    )
                    chain.validate(attrs, self._lookup)
                return obj
            if subresource == "eviction":
                return obj
            attrs = Attributes(operation, plural, obj, old, namespace, name, subresource, dry_run)
            admitted = dict(chain.mutate(attrs, self._lookup) or obj) if chain is not None else obj
            if self.registry.validator is not None:
                self.registry.validator(resource, admitted, old)
                if resource == "namespaces" and subresource == "status":
                    check_namespace_status_update(admitted)
            if chain is not None:
                chain.validate(attrs.with_object(admitted), self._lookup)
            return admitted
        except AdmissionError as err:
            raise StatusError.from_status(err.status) from None

    def validate(self, resource: str, obj: JSON, old: JSON | None) -> list[FieldCause]:
        """Validation already ran inside `admit` (between the mutating and validating chains)."""
        return []

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> JSON:
        """POST pods/NAME/eviction: the PodDisruptionBudget check, then the deletion."""
        return evictions.evict(
            self.registry, self.clock, namespace, name, grace_period_seconds=grace_period_seconds
        )
