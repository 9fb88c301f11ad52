"""NamespaceLifecycle (mirrors plugin/pkg/admission/namespace/lifecycle/admission.go).

- DELETE of an immortal namespace (default, kube-system, kube-public) is refused:
  `namespaces "default" is forbidden: this namespace may not be deleted`.
- Requests on namespaces themselves, on cluster-scoped resources and deletes of other objects
  are allowed.
- A CREATE or UPDATE in a namespace that does not exist is refused with the namespace's NotFound
  (`namespaces "missing" not found`); a CREATE in a namespace being terminated with
  `<resource> "<name>" is forbidden: unable to create new content in namespace X because it is
  being terminated` and the cause `NamespaceTerminating` on `metadata.namespace`.

Upstream reads an informer's cache first and falls back to a live read (after a 50 ms wait on
create, and always for a namespace it saw deleted within 30 s): kubetaint reads the store itself
each time, which is what those fallbacks converge to, so no cache can be stale.

On UPDATE the plugin changes nothing and reads one thing: whether the object's namespace exists
(the registry's trust shortcuts check that themselves; kubetaint.registry.podtrust).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.errors import forbidden, not_found
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.core.namespaces import IMMORTAL_NAMESPACES, TERMINATING, phase

NAMESPACES = "namespaces"
#: v1.NamespaceTerminatingCause.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


class NamespaceLifecycle(AdmissionPlugin):
    """Refuses content in missing or terminating namespaces and deletes of immortal ones."""

    name: ClassVar[str] = "NamespaceLifecycle"
    looks_up = frozenset({"namespaces"})
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE, DELETE})
    mutating: ClassVar[bool] = True
    validating: ClassVar[bool] = True

    def __init__(self, immortal: frozenset[str] = IMMORTAL_NAMESPACES) -> None:
        self.immortal = immortal

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        """Admit for CREATE and UPDATE (DELETE: `validate`, which every host runs on deletes)."""
        if attrs.operation == DELETE or attrs.resource == NAMESPACES or not attrs.namespace:
            return attrs.object
        namespace = lookup.get(NAMESPACES, "", attrs.namespace)
        if namespace is None:
            raise not_found(NAMESPACES, attrs.namespace)
        if attrs.operation == CREATE and phase(namespace) == TERMINATING:
            error = forbidden(
                attrs,
                f"unable to create new content in namespace {attrs.namespace} because it is being terminated",
            )
            details = error.status.setdefault("details", {})
            details["causes"] = [
                *details.get("causes", []),
                {
                    "reason": NAMESPACE_TERMINATING_CAUSE,
                    "message": f"namespace {attrs.namespace} is being terminated",
                    "field": "metadata.namespace",
                },
            ]
            raise error
        return attrs.object

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        """The immortal namespaces' DELETE refusal (upstream's Admit does it first)."""
        if attrs.operation == DELETE and attrs.resource == NAMESPACES and attrs.name in self.immortal:
            raise forbidden(attrs, "this namespace may not be deleted")


def checks_namespace(plugin: AdmissionPlugin) -> bool:
    """Whether `plugin` is NamespaceLifecycle: on UPDATE it reads only whether the namespace exists."""
    return type(plugin) is NamespaceLifecycle
