"""kube-apiserver's validation as a registry `Validator`, and an admission `ObjectLookup` reading a
Store: the two collaborators a `Registry` is built with by default.

Mirrors the generic registry's strategy.Validate/ValidateUpdate step (pkg/registry/core/*/strategy.go)
and the listers admission plugins read through.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubetaint.api import resources
from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates
from kubetaint.api.validation import (
    FieldError,
    invalid_status,
    validate,
    validate_pod_create_like,
    validate_pod_keeping_spec,
)
from kubetaint.api.validation.kinds import validate_namespace_status_update
from kubetaint.speed.memo import Memo
from kubetaint.store.interface import JSON, Store

#: Raises a 422 StatusError when `obj` (with `old` on update) is invalid.
Validator = Callable[[str, JSON, JSON | None], None]


_RESOURCE_INFO: Memo[str, tuple[resources.Resource | None]] = Memo(
    "registry.validator.resource_info", limit=256
)


def resource_info(resource: str) -> resources.Resource | None:
    """The resource-table row of a store resource name (`pods`, `deployments.apps`) or of the
    plain plural admission keys on (`deployments`: the core group's first, else any group's);
    remembered (the table is a constant tuple and every write asks)."""
    known = _RESOURCE_INFO.get(resource)
    if known is None:
        plural, dot, group = resource.partition(".")
        found = resources.by_plural(plural, group)
        if found is None and not dot:
            found = resources.by_plural(plural)
        known = _RESOURCE_INFO.put(resource, (found,))
    return known[0]


class APIValidator:
    """kube-apiserver's validation as a registry Validator (422 Status with causes)."""

    def __init__(self, feature_gates: FeatureGates | None = None) -> None:
        self.feature_gates = feature_gates

    def __call__(self, resource: str, obj: JSON, old: JSON | None) -> None:
        info = resource_info(resource)
        if info is None:
            return
        try:
            errs = validate(obj, old=old, feature_gates=self.feature_gates)
        except ValueError:
            return  # a kind validation does not model: nothing to check, as for unknown fields
        self._raise(info, obj, errs)

    def check_pod_like(self, obj: JSON) -> None:
        """Validate creating the Pod `obj`, whose spec is, but for nodeName's value, that of a pod
        this validator accepted on create (validation.validate_pod_create_like). The spec may also
        differ in a node-name affinity's value when the caller checked it is a valid node name,
        the one check upstream makes of it (registry.bulk): the spec checks are not run again."""
        info = resource_info("pods")
        if info is None or (obj.get("apiVersion"), obj.get("kind")) != ("v1", "Pod"):
            self("pods", obj, None)  # validated as whatever kind it claims, as the first one was
            return
        self._raise(info, obj, validate_pod_create_like(obj, feature_gates=self.feature_gates))

    def check_pod_keeping_spec(
        self,
        obj: JSON,
        old: JSON,
        owner_errors: Callable[[Mapping[str, Any]], builtins.list[FieldError]] | None = None,
    ) -> None:
        """Validate the update of the v1 Pod `old`, which this validator accepted, to `obj`, which
        carries old's spec object (validation.validate_pod_keeping_spec; `owner_errors`: what
        answers as owner_reference_errors does, a caller's memo)."""
        info = resource_info("pods")
        if info is not None:
            errs = (
                validate_pod_keeping_spec(obj, old)
                if owner_errors is None
                else validate_pod_keeping_spec(obj, old, owner_errors)
            )
            self._raise(info, obj, errs)

    @staticmethod
    def _raise(info: resources.Resource, obj: JSON, errs: builtins.list[FieldError]) -> None:
        if errs:
            name = str((obj.get("metadata") or {}).get("name") or "")
            raise StatusError.from_status(invalid_status(info.kind, name, errs, info.group))


def check_namespace_status_update(obj: JSON) -> None:
    """ValidateNamespaceStatusUpdate's phase rule on a namespace `status` update (422)."""
    errs = validate_namespace_status_update(obj)
    if errs:
        name = str((obj.get("metadata") or {}).get("name") or "")
        raise StatusError.from_status(invalid_status("Namespace", name, errs, ""))


def no_validation(resource: str, obj: JSON, old: JSON | None) -> None:
    """A validator that finds everything valid (a registry over a client's store: the server
    validates; an API server app embedded without the engine)."""


def api_validator(feature_gates: FeatureGates | None = None) -> Validator:
    """kube-apiserver's validation as a registry Validator (422 Status with causes)."""
    return APIValidator(feature_gates)


class StoreLookup:
    """An admission `ObjectLookup` reading a Store (plain plurals mapped to stored resources)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def _qualified(self, resource: str) -> str:
        return {
            "priorityclasses": "priorityclasses.scheduling.k8s.io",
            "runtimeclasses": "runtimeclasses.node.k8s.io",
        }.get(resource, resource)

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        try:
            return self._store.get(self._qualified(resource), namespace, name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        return self._store.list(self._qualified(resource)).items


def with_type_meta(resource: str, obj: JSON) -> JSON:
    """`obj` with apiVersion and kind filled from the resource table when missing (as decoding
    a request body for that URL would)."""
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    info = resource_info(resource)
    if info is None:
        return obj
    return {"apiVersion": info.api_version, "kind": info.kind, **obj}
