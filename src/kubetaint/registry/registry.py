"""`Registry`: a Store that runs admission and validation before every write.

Mirrors the generic registry store's Create/Update/Delete flow: BeforeCreate (generateName), the
mutating admission chain, object validation, the validating admission chain, then storage.
With `graceful_pod_deletion` (and a clock), pod deletes are graceful as kube-apiserver's
(registry.graceful).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kubetaint.admission import (
    CREATE,
    DELETE,
    UPDATE,
    AdmissionChain,
    AdmissionError,
    Attributes,
    ObjectLookup,
)
from kubetaint.api import resources
from kubetaint.api.errors import StatusError
from kubetaint.api.features import FeatureGates
from kubetaint.api.validation import FieldError, invalid_status, validate, validate_pod_create_like
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.deletion import keep_deletion_fields, marked_for_deletion, should_delete_during_update
from kubetaint.core.names import generate_name
from kubetaint.registry.bulk import PodAdmissionMemo, RecordingLookup
from kubetaint.registry.graceful import delete_pod
from kubetaint.registry.heartbeats import HEARTBEAT_FIELDS, HeartbeatTrust
from kubetaint.store.interface import JSON, Handler, ListResult, Store, Watch, object_key, update_many
from kubetaint.store.mutation import check_delete_preconditions

#: Raises a 422 StatusError when `obj` (with `old` on update) is invalid.
Validator = Callable[[str, JSON, JSON | None], None]


def plain_resource(resource: str) -> str:
    """`deployments.apps` → `deployments` (admission plugins key on the plural alone)."""
    return resource.partition(".")[0]


@functools.lru_cache(maxsize=256)
def resource_info(resource: str) -> resources.Resource | None:
    """The resource-table row of a store resource name (`pods`, `deployments.apps`) or of the
    plain plural admission keys on (`deployments`: the core group's first, else any group's);
    remembered (the table is a constant tuple and every write asks)."""
    plural, dot, group = resource.partition(".")
    found = resources.by_plural(plural, group)
    if found is None and not dot:
        found = resources.by_plural(plural)
    return found


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
        this validator accepted on create (validation.validate_pod_create_like)."""
        info = resource_info("pods")
        if info is None or (obj.get("apiVersion"), obj.get("kind")) != ("v1", "Pod"):
            self("pods", obj, None)  # validated as whatever kind it claims, as the first one was
            return
        self._raise(info, obj, validate_pod_create_like(obj, feature_gates=self.feature_gates))

    @staticmethod
    def _raise(info: resources.Resource, obj: JSON, errs: builtins.list[FieldError]) -> None:
        if errs:
            name = str((obj.get("metadata") or {}).get("name") or "")
            raise StatusError.from_status(invalid_status(info.kind, name, errs, info.group))


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


class Registry:
    """A Store whose writes pass admission and validation first."""

    def __init__(
        self,
        store: Store,
        *,
        admission: AdmissionChain | None = None,
        validator: Validator | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        graceful_pod_deletion: bool = False,
    ) -> None:
        if graceful_pod_deletion and clock is None:
            raise ValueError("graceful pod deletion needs a clock")
        self.store = store
        #: Stamps deletionTimestamp (objects waiting for finalizers, pods deleted gracefully).
        self.clock = clock
        #: True: pods are deleted gracefully (registry.graceful); False: at once (the simulator).
        self.graceful_pod_deletion = graceful_pod_deletion
        self.admission = admission
        self.validator = validator if validator is not None else api_validator()
        self._rng = rng or random.Random(0)
        self._lookup = StoreLookup(store)
        self._heartbeats = HeartbeatTrust()
        #: Admission results of pods stamped from one template (registry.bulk).
        self._pod_memo = PodAdmissionMemo(store, self._lookup)

    # reads pass straight through -----------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        return self.store.get(resource, namespace, name)

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        return self.store.list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> Watch:
        return self.store.watch(resource, **kwargs)

    def subscribe(self, handler: Handler, resource: str | None = None) -> Callable[[], None]:
        return self.store.subscribe(handler, resource)

    def current_resource_version(self) -> int:
        return self.store.current_resource_version()

    @property
    def delivers_synchronously(self) -> bool:
        """The store's (see MemoryStore.delivers_synchronously): the registry adds no delay."""
        return bool(getattr(self.store, "delivers_synchronously", False))

    def close(self) -> None:
        self.store.close()

    # writes --------------------------------------------------------------------------------

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        obj = self._before_create(resource, obj)
        if (
            resource == "pods"
            and not dry_run
            and self.admission is not None
            and self.admission.acts_on("pods")
        ):
            return self._create_pod(obj)
        namespace, name = object_key(obj)
        attrs = Attributes(CREATE, plain_resource(resource), obj, None, namespace, name, "", dry_run)
        admitted = self._admit(attrs, None)
        return self.store.create(resource, admitted, dry_run=dry_run)

    @contextlib.contextmanager
    def bulk_creates(self) -> Iterator[None]:
        """Within the block, pods created from one template share their admission result without
        repeating its look-ups while nothing else is written (registry.bulk); everything stored
        is what creating them one by one stores."""
        if self._pod_memo.in_bulk:
            yield
            return
        self._pod_memo.start_bulk()
        try:
            yield
        finally:
            self._pod_memo.end_bulk()

    def _create_pod(self, obj: JSON) -> JSON:
        """Create a pod, admitted as an earlier pod of the same template was when admission
        would look up the same (registry.bulk), else afresh."""
        memo = self._pod_memo
        admitted = memo.admitted(obj, self.validator)
        if admitted is None:
            namespace, name = object_key(obj)
            attrs = Attributes(CREATE, "pods", obj, None, namespace, name, "", False)
            recording = RecordingLookup(self._lookup)
            admitted = self._admit(attrs, None, recording)
            memo.remember(obj, admitted, recording.calls, self.validator)
        elif isinstance(self.validator, APIValidator):
            # admission (with its validating phase) and validation passed for this key's first pod
            self.validator.check_pod_like(admitted)
        elif self.validator is not None:
            self.validator("pods", admitted, None)
        created = self.store.create("pods", admitted)
        memo.stored(created)
        return created

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        obj = with_type_meta(resource, obj)
        if resource == "pods":
            obj = default_pod_requests(obj)
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        obj = keep_deletion_fields(obj, old)
        key = (namespace, name)
        if self._trusts_heartbeats(resource) and self._heartbeats.beats_valid(resource, key, obj, old):
            admitted = obj
        else:
            attrs = Attributes(UPDATE, plain_resource(resource), obj, old, namespace, name, "", dry_run)
            admitted = self._admit(attrs, old)
        if resource != "pods" and should_delete_during_update(admitted, old):
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete(resource, namespace, name, uid=uid, dry_run=dry_run)
        stored = self.store.update(resource, admitted, dry_run=dry_run)
        if not dry_run:
            self._heartbeats.remember(resource, key, stored)
        return stored

    def update_many(
        self, resource: str, objects: builtins.list[JSON]
    ) -> tuple[builtins.list[JSON], StatusError | None]:
        """`kubetaint.store.interface.update_many` with admission and validation of each object
        first (against the store as it is before the batch: the objects must be distinct). An
        object that fails them ends the batch there, after the ones before it are stored.

        Heartbeats (lease renewals) on objects this registry stored skip checks that cannot
        fail (`kubetaint.registry.heartbeats`)."""
        admitted: builtins.list[JSON] = []
        refused: StatusError | None = None
        heartbeats = self._heartbeats if self._trusts_heartbeats(resource) else None
        keys: builtins.list[tuple[str, str]] = []
        for given in objects:
            obj = with_type_meta(resource, given)
            if resource == "pods":
                obj = default_pod_requests(obj)
            key = namespace, name = object_key(obj)
            keys.append(key)
            try:
                old = self.store.get(resource, namespace, name)
                if heartbeats is not None and heartbeats.beats_valid(resource, key, obj, old):
                    admitted.append(obj)
                    continue
                attrs = Attributes(UPDATE, plain_resource(resource), obj, old, namespace, name, "", False)
                admitted.append(self._admit(attrs, old))
            except StatusError as err:
                refused = err
                break
        stored, failure = update_many(self.store, resource, admitted)
        self._heartbeats.remember_all(resource, keys, stored)
        return stored, failure if failure is not None else refused

    def _trusts_heartbeats(self, resource: str) -> bool:
        """Whether a heartbeat write's admission and validation are known to pass when the
        object it changes passed them: no admission plugin acts on updates of `resource` and
        validation is kube-apiserver's (which never reads the heartbeat field)."""
        if resource not in HEARTBEAT_FIELDS:
            return False
        if self.validator is not None and type(self.validator) is not APIValidator:
            return False
        admission = self.admission
        if admission is None:
            return True
        plain = plain_resource(resource)
        return not any(
            (plugin.resources is None or plain in plugin.resources) and plugin.handles(UPDATE)
            for plugin in admission.plugins
        )

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
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> JSON:
        """Delete, or (finalizers pending, e.g. `orphan` / `foregroundDeletion` for the
        propagation policy) mark for deletion and return the marked object."""
        old = self.store.get(resource, namespace, name)
        self._heartbeats.forget(resource, (namespace, name))  # its entry would only keep it alive
        if self.admission is not None:
            attrs = Attributes(DELETE, plain_resource(resource), None, old, namespace, name, "", dry_run)
            try:
                self.admission.validate(attrs, self._lookup)
            except AdmissionError as err:
                raise StatusError.from_status(err.status) from None
        if resource == "pods" and self.graceful_pod_deletion and self.clock is not None:
            return delete_pod(
                self.store,
                self.clock,
                namespace,
                name,
                grace_period_seconds=grace_period_seconds,
                resource_version=resource_version,
                uid=uid,
                dry_run=dry_run,
                current=old,
            )
        now = format_time(self.clock.now() if self.clock is not None else 0.0)
        # pods keep their own (graceful) path: their finalizers are not modelled
        marked = None if resource == "pods" else marked_for_deletion(old, propagation_policy, now)
        if marked is not None:
            check_delete_preconditions(resource, name, old, resource_version, uid)
            return self.store.update(resource, marked, dry_run=dry_run)
        return self.store.delete(
            resource, namespace, name, resource_version=resource_version, uid=uid, dry_run=dry_run
        )

    # steps ---------------------------------------------------------------------------------

    def _before_create(self, resource: str, obj: JSON) -> JSON:
        obj = with_type_meta(resource, obj)
        if resource == "pods":
            obj = default_pod_requests(obj)  # decoding a v1.Pod body runs SetDefaults_Pod
        meta = dict(obj.get("metadata") or {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(str(meta["generateName"]), self._rng)
        info = resource_info(resource)
        if (info is None or info.namespaced) and not meta.get("namespace"):
            meta["namespace"] = "default"
        return {**obj, "metadata": meta}

    def _admit(self, attrs: Attributes, old: JSON | None, lookup: ObjectLookup | None = None) -> JSON:
        lookup = lookup if lookup is not None else self._lookup
        obj = dict(attrs.object or {})
        # a chain without a plugin for this resource would return the object and accept it
        admission = (
            self.admission if self.admission is not None and self.admission.acts_on(attrs.resource) else None
        )
        try:
            if admission is not None:
                obj = dict(admission.mutate(attrs, lookup) or obj)
            if self.validator is not None:
                self.validator(attrs.resource, obj, old)
            if admission is not None:
                admission.validate(attrs.with_object(obj), lookup)
        except AdmissionError as err:
            raise StatusError.from_status(err.status) from None
        return obj


def with_type_meta(resource: str, obj: JSON) -> JSON:
    """`obj` with apiVersion and kind filled from the resource table when missing (as decoding
    a request body for that URL would)."""
    if obj.get("apiVersion") and obj.get("kind"):
        return obj
    info = resource_info(resource)
    if info is None:
        return obj
    return {"apiVersion": info.api_version, "kind": info.kind, **obj}
