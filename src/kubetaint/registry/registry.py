"""`Registry`: a Store that runs admission and validation before every write.

Mirrors the generic registry store's Create/Update/Delete flow: BeforeCreate (generateName), the
mutating admission chain, object validation, the validating admission chain, then storage.
With `graceful_pod_deletion` (and a clock), pod deletes are graceful as kube-apiserver's
(registry.graceful).
"""

from __future__ import annotations

import builtins
import contextlib
import random
from collections.abc import Callable, Iterator
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
from kubetaint.admission.namespacelifecycle import checks_namespace
from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core import namespaces
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.deletion import keep_deletion_fields, marked_for_deletion, should_delete_during_update
from kubetaint.core.names import generate_name
from kubetaint.registry import podruns
from kubetaint.registry.bulk import PodAdmissionMemo, RecordingLookup
from kubetaint.registry.graceful import delete_pod
from kubetaint.registry.heartbeats import HEARTBEAT_FIELDS, HeartbeatTrust
from kubetaint.registry.podbatch import create_pods
from kubetaint.registry.podtrust import PodTrust, chain_keeps_stored_specs, namespace_exists
from kubetaint.registry.validator import (
    APIValidator,
    StoreLookup,
    Validator,
    api_validator,
    plain_resource,
    resource_info,
    with_type_meta,
)
from kubetaint.store.fieldwrite import FieldPath, FieldWriteResult, with_field
from kubetaint.store.interface import (
    JSON,
    BatchHandler,
    FinalizesNamespaces,
    ListResult,
    Store,
    Watch,
    object_key,
    update_many,
)
from kubetaint.store.mutation import check_delete_preconditions, check_update_preconditions

NAMESPACES = "namespaces"

__all__ = [
    "APIValidator",
    "Registry",
    "StoreLookup",
    "Validator",
    "api_validator",
    "plain_resource",
    "resource_info",
    "with_type_meta",
]


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
        #: resource -> (validator, admission chain, its plugins, _trusts_heartbeats' answer)
        self._heartbeat_chains: dict[str, tuple[object, object, tuple[object, ...], bool]] = {}
        #: Admission results of pods stamped from one template (registry.bulk).
        self._pod_memo = PodAdmissionMemo(store, self._lookup)
        #: Pods this registry admitted, validated and stored (registry.podtrust).
        self._pods = PodTrust(store)

    # reads pass straight through -----------------------------------------------------------

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        return self.store.get(resource, namespace, name)

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        return self.store.list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> Watch:
        return self.store.watch(resource, **kwargs)

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
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
        created = self.store.create(resource, admitted, dry_run=dry_run)
        if not dry_run and resource == "pods":
            self._remember_pod((namespace, name), created)
        elif not dry_run:  # admitted, validated and stored: a later heartbeat on it needs no checks
            self._heartbeats.remember(resource, (namespace, name), created)
        return created

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
        created = self.store.create("pods", self._admitted_pod(obj))
        self._pod_memo.stored(created)
        self._remember_pod(object_key(created), created)
        return created

    def _admitted_pod(self, obj: JSON) -> JSON:
        """The pod create request `obj` (after `_before_create`) admitted and validated."""
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
        return admitted

    def create_pods(self, objects: builtins.list[JSON]) -> tuple[builtins.list[JSON], StatusError | None]:
        """`create("pods", obj)` of each in turn up to a failure: `registry.podbatch`."""
        return create_pods(self, objects)

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        obj = with_type_meta(resource, obj)
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        check_update_preconditions(resource, obj, old)  # 409 before any 422, as upstream
        key = (namespace, name)
        if resource == "pods":
            if not dry_run:
                config = self._pod_config()  # once: the trust check and the result's record share it
                if self._pods.keeps_spec(key, obj, old, config):
                    return self._update_pod_keeping_spec(key, obj, old, config)
            obj = default_pod_requests(obj)
        elif resource == NAMESPACES:
            obj = namespaces.prepare_for_update(obj, old)
        obj = keep_deletion_fields(obj, old)
        if (
            self._trusts_heartbeats(resource)
            and self._heartbeats.beats_valid(resource, key, obj, old)
            and self._namespace_admits(resource, namespace)
        ):
            admitted = obj
        else:
            attrs = Attributes(UPDATE, plain_resource(resource), obj, old, namespace, name, "", dry_run)
            admitted = self._admit(attrs, old)
        if _deletes_during_update(resource, admitted, old):
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete(resource, namespace, name, uid=uid, dry_run=dry_run)
        stored = self.store.update(resource, admitted, dry_run=dry_run)
        if not dry_run:
            self._heartbeats.remember(resource, key, stored)
            if resource == "pods":
                self._remember_pod(key, stored)
        return stored

    def _update_pod_keeping_spec(
        self, key: tuple[str, str], obj: JSON, old: JSON, config: tuple[object, object]
    ) -> JSON:
        """`update` of a pod this registry stored by an object carrying its spec object: the
        admission chain would return the object as it is and only the metadata checks can fail
        (registry.podtrust); the rest is the generic path's."""
        obj = keep_deletion_fields(obj, old)  # default_pod_requests: old's spec is defaulted already
        validator = config[0]
        assert isinstance(validator, APIValidator)  # _pod_config checked it
        validator.check_pod_keeping_spec(obj, old)
        if should_delete_during_update(obj, old):
            self._pods.forget(key)
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete("pods", key[0], key[1], uid=uid)
        stored = self.store.update("pods", obj)
        self._pods.remember(key, stored, config)
        return stored

    def update_each(self, resource: str, objects: builtins.list[JSON]) -> builtins.list[JSON | StatusError]:
        """`update` of each object in turn: the stored object, or the StatusError `update` raised,
        in its place (a failure does not stop the later ones). Pod updates keeping the stored
        spec (registry.podtrust) of distinct pods are checked as `update` checks them and stored
        by one `update_many` of the store per run of them (registry.podruns); a store with
        `update_group` (the in-memory store) delivers a run's events as one group (handler by
        handler, `Dispatcher.enqueue_group`), as lease renewals are."""
        return podruns.update_each(self, resource, objects)

    def update_owner_references_each(
        self, pods: builtins.list[JSON], refs: builtins.list[JSON]
    ) -> builtins.list[JSON | StatusError]:
        """`update_each("pods", ...)` of each pod with metadata.ownerReferences set to the one
        list `refs` (an adoption of pods without references): the same results, writes and
        events; a pod this registry stored and the store still holds skips the look-ups its
        update is known to pass (registry.podruns)."""
        return podruns.update_owner_references_each(self, pods, refs)

    def _pod_config(self) -> tuple[object, object]:
        """What pod trust depends on: the validator and the admission chain, or (None, None)
        when pod updates keeping the spec must take the generic path."""
        validator, admission = self.validator, self.admission
        if type(validator) is not APIValidator or not chain_keeps_stored_specs(admission):
            return (None, None)
        return (validator, admission)

    def trust_binding(self, key: tuple[str, str], pod: JSON, stored: JSON, node: str) -> None:
        """`stored` is the store's result of binding the pod `pod` under `key` to `node` (without
        binding annotations): trusted as `pod` was (registry.podtrust)."""
        config = self._pod_config()
        if config[0] is None:
            self._pods.forget(key)
        else:
            self._pods.remember_binding(key, pod, stored, node, config)

    def _remember_pod(self, key: tuple[str, str], stored: JSON) -> None:
        config = self._pod_config()
        if config[0] is None:
            self._pods.forget(key)
        else:
            self._pods.remember(key, stored, config)

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
                check_update_preconditions(resource, obj, old)
                if (
                    heartbeats is not None
                    and heartbeats.beats_valid(resource, key, obj, old)
                    and self._namespace_admits(resource, namespace)
                ):
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

    def update_field_many(
        self, resource: str, objects: builtins.list[JSON], path: FieldPath, value: object
    ) -> FieldWriteResult:
        """`kubetaint.store.fieldwrite.update_field_many` through admission and validation, as
        `update_many` of the `with_field` copies.

        When the field is the resource's heartbeat field, its checks cannot fail
        (`kubetaint.registry.heartbeats`) and every object is the one this registry stored (with
        its type meta) and the store still holds, the store is told what changes: it checks both
        identities in its own pass and records the results as trusted
        (`update_field_many_if_current`'s `vouched`); otherwise the copies take `update_many`'s way."""
        trusted = self._heartbeats.trusted(resource)
        fast = getattr(self.store, "update_field_many_if_current", None)
        if (
            fast is not None
            and trusted is not None
            and HEARTBEAT_FIELDS[resource] == path
            and self._trusts_heartbeats(resource)
            and all(
                self._namespace_admits(resource, ns)
                for ns in {str((o.get("metadata") or {}).get("namespace") or "") for o in objects}
            )
        ):
            result: FieldWriteResult | None = fast(resource, objects, path, value, vouched=trusted)
            if result is not None:
                return result
        return self.update_many(resource, [with_field(obj, path, value) for obj in objects])

    def _trusts_heartbeats(self, resource: str) -> bool:
        """Whether a heartbeat write's admission and validation are known to pass when the
        object it changes passed them: no admission plugin acts on updates of `resource` and
        validation is kube-apiserver's (which never reads the heartbeat field). The answer is
        kept for the validator, chain and plugins it was found for (every heartbeat asks)."""
        if resource not in HEARTBEAT_FIELDS:
            return False
        validator, admission = self.validator, self.admission
        plugins = tuple(admission.plugins) if admission is not None else ()
        known = self._heartbeat_chains.get(resource)
        if known is not None and known[0] is validator and known[1] is admission and known[2] == plugins:
            return known[3]
        trusted = self._chain_trusts_heartbeats(resource)
        self._heartbeat_chains[resource] = (validator, admission, plugins, trusted)
        return trusted

    def _chain_trusts_heartbeats(self, resource: str) -> bool:
        """`_trusts_heartbeats`, found from the validator and the admission chain."""
        if self.validator is not None and type(self.validator) is not APIValidator:
            return False
        admission = self.admission
        if admission is None:
            return True
        plain = plain_resource(resource)
        return not any(
            (plugin.resources is None or plain in plugin.resources)
            and plugin.handles(UPDATE)
            and not checks_namespace(plugin)  # _namespace_admits reads what it reads
            for plugin in admission.plugins
        )

    def _namespace_admits(self, resource: str, namespace: str) -> bool:
        """Whether NamespaceLifecycle, when in the chain, admits an update in `namespace`
        (cluster-scoped objects have none; a namespaced one's namespace must exist)."""
        admission = self.admission
        if not namespace or admission is None or not any(checks_namespace(p) for p in admission.plugins):
            return True
        return namespace_exists(self.store, namespace)

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        """The `status` subresource: only status (and metadata) changes; spec stays as stored."""
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        check_update_preconditions(resource, obj, old)
        merged = {**obj, "spec": old["spec"]} if "spec" in old else dict(obj)
        attrs = Attributes(UPDATE, plain_resource(resource), merged, old, namespace, name, "status", dry_run)
        admitted = self._admit(attrs, old)
        return self.store.update(resource, admitted, dry_run=dry_run)

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON:
        """The namespace `finalize` subresource: `obj`'s spec.finalizers replace the stored ones
        (status stays); with none left on a namespace being deleted, the namespace is removed
        (kubetaint.core.namespaces)."""
        obj = with_type_meta(NAMESPACES, obj)
        _, name = object_key(obj)
        old = self.store.get(NAMESPACES, "", name)
        check_update_preconditions(NAMESPACES, obj, old)
        obj = keep_deletion_fields(namespaces.prepare_for_finalize(obj, old), old)
        if isinstance(self.store, FinalizesNamespaces):  # the server applies its own finalize
            return self.store.finalize_namespace(obj, dry_run=dry_run)
        attrs = Attributes(UPDATE, NAMESPACES, obj, old, "", name, "finalize", dry_run)
        admitted = self._admit(attrs, old)
        if namespaces.should_delete_during_update(admitted, old):
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete(NAMESPACES, "", name, uid=uid, dry_run=dry_run)
        return self.store.update(NAMESPACES, admitted, dry_run=dry_run)

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
        if resource == "pods":
            self._pods.forget((namespace, name))
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
        if resource == NAMESPACES and not (old.get("metadata") or {}).get("deletionTimestamp"):
            # the namespace REST Delete's first request: Terminating, removed once finalized
            check_delete_preconditions(resource, name, old, resource_version, uid)
            options = {"propagationPolicy": propagation_policy} if propagation_policy else {}
            return self.store.update(resource, namespaces.first_delete(old, now, options), dry_run=dry_run)
        if resource == NAMESPACES and namespaces.spec_finalizers(old):
            return old  # prior to final deletion, spec.finalizers must be empty
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
            obj = self._pod_memo.default_requests(obj)  # decoding a v1.Pod body runs SetDefaults_Pod
        meta = dict(obj.get("metadata") or {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(str(meta["generateName"]), self._rng)
        info = resource_info(resource)
        if info is None or info.namespaced:
            if not meta.get("namespace"):
                meta["namespace"] = "default"
        elif "namespace" in meta:
            del meta["namespace"]  # BeforeCreate: a cluster-scoped object's namespace is dropped
        if resource == NAMESPACES:
            return namespaces.prepare_for_create({**obj, "metadata": meta})
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


def _deletes_during_update(resource: str, obj: JSON, old: JSON) -> bool:
    """ShouldDeleteDuringUpdate, with the namespaces' spec.finalizers rule."""
    if resource == NAMESPACES:
        return namespaces.should_delete_during_update(obj, old)
    return should_delete_during_update(obj, old)
