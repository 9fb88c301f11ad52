"""`Registry`: a Store that runs admission and validation before every write.

Mirrors the generic registry store's Create/Update/Delete flow: BeforeCreate (generateName), the
mutating admission chain, object validation, the validating admission chain, then storage.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubetaint.admission import CREATE, DELETE, UPDATE, AdmissionChain, AdmissionError, Attributes
from kubetaint.api.errors import StatusError
from kubetaint.store.interface import JSON, Handler, ListResult, Store, Watch, object_key

#: Raises a 422 StatusError when `obj` (with `old` on update) is invalid.
Validator = Callable[[str, JSON, JSON | None], None]

#: Upstream names.SimpleNameGenerator alphabet (no vowels, no confusable digits) and length.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_NAME_SUFFIX_LENGTH = 5
_CLUSTER_SCOPED = frozenset(
    {"nodes", "namespaces", "priorityclasses.scheduling.k8s.io", "runtimeclasses.node.k8s.io"}
)


def plain_resource(resource: str) -> str:
    """`deployments.apps` → `deployments` (admission plugins key on the plural alone)."""
    return resource.partition(".")[0]


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


class Registry:
    """A Store whose writes pass admission and validation first."""

    def __init__(
        self,
        store: Store,
        *,
        admission: AdmissionChain | None = None,
        validator: Validator | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.store = store
        self.admission = admission
        self.validator = validator
        self._rng = rng or random.Random(0)
        self._lookup = StoreLookup(store)

    # reads pass straight through -----------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        return self.store.get(resource, namespace, name)

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        return self.store.list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> Watch:
        return self.store.watch(resource, **kwargs)

    def subscribe(self, handler: Handler) -> Callable[[], None]:
        return self.store.subscribe(handler)

    def current_resource_version(self) -> int:
        return self.store.current_resource_version()

    def close(self) -> None:
        self.store.close()

    # writes --------------------------------------------------------------------------------

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        obj = self._before_create(resource, obj)
        namespace, name = object_key(obj)
        attrs = Attributes(CREATE, plain_resource(resource), obj, None, namespace, name, "", dry_run)
        admitted = self._admit(attrs, None)
        return self.store.create(resource, admitted, dry_run=dry_run)

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        attrs = Attributes(UPDATE, plain_resource(resource), obj, old, namespace, name, "", dry_run)
        admitted = self._admit(attrs, old)
        return self.store.update(resource, admitted, dry_run=dry_run)

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        """The `status` subresource: only status (and metadata) changes; spec stays as stored."""
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        merged = {**obj, "spec": old["spec"]} if "spec" in old else dict(obj)
        attrs = Attributes(UPDATE, plain_resource(resource), merged, old, namespace, name, "status", dry_run)
        admitted = self._admit(attrs, old)
        return self.store.update(resource, admitted, dry_run=dry_run)

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> JSON:
        old = self.store.get(resource, namespace, name)
        if self.admission is not None:
            attrs = Attributes(DELETE, plain_resource(resource), None, old, namespace, name, "", dry_run)
            try:
                self.admission.validate(attrs, self._lookup)
            except AdmissionError as err:
                raise StatusError.from_status(err.status) from None
        return self.store.delete(
            resource, namespace, name, resource_version=resource_version, uid=uid, dry_run=dry_run
        )

    # steps ---------------------------------------------------------------------------------

    def _before_create(self, resource: str, obj: JSON) -> JSON:
        meta = dict(obj.get("metadata") or {})
        if not meta.get("name") and meta.get("generateName"):
            suffix = "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(_NAME_SUFFIX_LENGTH))
            meta["name"] = f"{meta['generateName']}{suffix}"
        if resource not in _CLUSTER_SCOPED and not meta.get("namespace"):
            meta["namespace"] = "default"
        return {**obj, "metadata": meta}

    def _admit(self, attrs: Attributes, old: JSON | None) -> JSON:
        obj = dict(attrs.object or {})
        try:
            if self.admission is not None:
                obj = dict(self.admission.mutate(attrs, self._lookup) or obj)
            if self.validator is not None:
                self.validator(attrs.resource, obj, old)
            if self.admission is not None:
                self.admission.validate(attrs.with_object(obj), self._lookup)
        except AdmissionError as err:
            raise StatusError.from_status(err.status) from None
        return obj
