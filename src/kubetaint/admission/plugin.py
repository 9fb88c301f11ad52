"""The admission plugin interface (mirrors apiserver/pkg/admission interfaces.go and handler.go).

A plugin handles some operations; mutating plugins return a changed copy of the object from
`admit`, validating plugins raise from `validate`. Inputs are never modified in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import Attributes
from kubetaint.admission.lookup import ObjectLookup

JSONDict = dict[str, Any]


class AdmissionPlugin:
    """Base class: handles nothing, changes nothing."""

    name: ClassVar[str] = ""
    operations: ClassVar[frozenset[str]] = frozenset()
    mutating: ClassVar[bool] = False
    validating: ClassVar[bool] = False
    #: The resources whose requests the plugin may change or reject (None: any); the chain skips
    #: it for the others, where its Admit and Validate return at once.
    resources: ClassVar[frozenset[str] | None] = None
    #: The resources the plugin reads through its ObjectLookup (None: any it likes). A batch of
    #: writes may be admitted before any of it is stored only when no plugin reads what the batch
    #: writes (registry.podbatch).
    looks_up: ClassVar[frozenset[str] | None] = None
    #: True for a plugin that acts on requests of users only (NodeRestriction): the control
    #: plane's own writes (`Attributes.user` None) pass it unchanged, so what the registry trusts
    #: of those writes (registry.trust) does not depend on it.
    users_only: ClassVar[bool] = False

    def handles(self, operation: str) -> bool:
        """Handler.Handles: whether the plugin runs for `operation`."""
        return operation in self.operations

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        """Return the object to continue with (a copy when changed); raise AdmissionError to reject."""
        return attrs.object

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        """Raise AdmissionError to reject; never changes the object."""


def is_pod_request(attrs: Attributes) -> bool:
    """A request on pods proper (subresources such as status or binding are skipped upstream)."""
    return attrs.resource == "pods" and not attrs.subresource and isinstance(attrs.object, Mapping)


def pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def with_spec_fields(obj: Mapping[str, Any], **fields: Any) -> JSONDict:
    """A shallow copy of `obj` whose spec has `fields` replaced; a None value removes the field (Go's nil
    is omitted from JSON). Only the top level and the spec are copied."""
    spec = {**pod_spec(obj), **fields}
    return {**obj, "spec": {k: v for k, v in spec.items() if v is not None or k not in fields}}
