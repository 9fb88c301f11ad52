"""`Registry`: a Store that runs admission and validation before every write: the one write
path of the simulator's components and of the API server's handlers.

Mirrors the generic registry store's Create/Update/Delete flow: the kind's defaults
(registry.defaulting: the decoder's SetDefaults_*), BeforeCreate (generateName), the mutating
admission chain, the resource's user-dependent storage check (`WriteCheck`: RBAC's
privilege-escalation check), object validation, the validating admission chain, then storage.
A write on behalf of a user (an HTTP request) names it (`user=`): admission sees it
(`Attributes.user`) and the registry's memos are not used for it (registry.trust covers the
control plane's own writes). With `graceful_pod_deletion` (and a clock), pod deletes are graceful
as kube-apiserver's (registry.graceful).

The class holds the steps every write shares (admission, validation, trust); each kind of commit
has its own module: a run of pod creates (registry.podbatch), of pod updates (registry.podruns),
of Events (registry.eventbatch), field writes (registry.fieldwrites), BeforeCreate
(registry.before_create), what a delete keeps (registry.deletion) and the namespace finalize
subresource (registry.namespace_finalize).
"""

from __future__ import annotations

import builtins
import contextlib
import random
from collections.abc import Iterator, Sequence

from kubetaint.admission import (
    CREATE,
    DELETE,
    UPDATE,
    AdmissionChain,
    AdmissionError,
    Attributes,
    ObjectLookup,
)
from kubetaint.api.errors import StatusError
from kubetaint.api.user import UserInfo
from kubetaint.clock.base import Clock, format_time
from kubetaint.core import namespaces
from kubetaint.core.defaults import default_pod_requests
from kubetaint.core.deletion import keep_deletion_fields, should_delete_during_update
from kubetaint.registry import eventbatch, fieldwrites, namespace_finalize, podbatch, podruns
from kubetaint.registry.before_create import PodDefaults, before_create
from kubetaint.registry.bulk import PodAdmissionMemo, RecordingLookup
from kubetaint.registry.defaulting import defaulted_for_update
from kubetaint.registry.deletion import NAMESPACES, delete_or_keep, deletes_during_update
from kubetaint.registry.graceful import delete_pod
from kubetaint.registry.heartbeats import HeartbeatTrust
from kubetaint.registry.podtrust import PodTrust
from kubetaint.registry.reads import ReadsPassThrough
from kubetaint.registry.strategy import RequestStrategy, WriteCheck
from kubetaint.registry.trust import Configuration
from kubetaint.registry.trusting import TrustKeeping
from kubetaint.registry.validator import (
    APIValidator,
    StoreLookup,
    Validator,
    api_validator,
    check_namespace_status_update,
    resource_info,
    with_type_meta,
)
from kubetaint.speed.reference import reference_mode
from kubetaint.store.interface import (
    JSON,
    Create,
    Delete,
    Result,
    SetField,
    Store,
    Update,
    WriteOp,
    object_key,
    until_failure,
    with_field,
)
from kubetaint.store.mutation import check_update_preconditions

EVENTS = "events"

__all__ = [
    "APIValidator",
    "Registry",
    "RequestStrategy",
    "StoreLookup",
    "Validator",
    "api_validator",
    "resource_info",
    "with_type_meta",
]


class Registry(ReadsPassThrough, TrustKeeping):
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
        self._reads = store
        #: Stamps deletionTimestamp (objects waiting for finalizers, pods deleted gracefully).
        self.clock = clock
        #: True: pods are deleted gracefully (registry.graceful); False: at once (the simulator).
        self.graceful_pod_deletion = graceful_pod_deletion
        self.admission = admission
        self.validator = validator if validator is not None else api_validator()
        self._rng = rng or random.Random(0)
        self._lookup = StoreLookup(store)
        self._heartbeats = HeartbeatTrust()
        #: The validator and admission chain in force, which trust is recorded under (registry.trust).
        self._config = Configuration(self.validator, admission)
        #: Reference mode (read when the registry is made): one operation per store commit, and
        #: nothing trusted (every write admitted and validated afresh).
        self._reference = reference_mode()
        #: Admission results of pods stamped from one template (registry.bulk).
        self._pod_memo = PodAdmissionMemo(store, self._lookup)
        #: Pods this registry admitted, validated and stored (registry.podtrust).
        self._pods = PodTrust()
        #: Storage checks of users' writes, by resource (`add_write_check`).
        self._write_checks: dict[str, WriteCheck] = {}

    def add_write_check(self, resource: str, check: WriteCheck) -> None:
        """Run `check` on every create and update of `resource` (the store's name)."""
        self._write_checks[resource] = check

    # writes --------------------------------------------------------------------------------

    def commit(
        self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False, restore: bool = False
    ) -> builtins.list[Result]:
        """`Store.commit` with admission and validation of each object first (`create`, `update`,
        `delete`; `restore` as `create`'s). A run of pod creates is admitted pod by pod and stored
        in one commit (registry.podbatch); updates of pods keeping their stored spec are checked
        as `update` checks them and stored in runs (registry.podruns); a field write that is a
        heartbeat on objects this registry stored skips the checks that cannot fail
        (registry.heartbeats)."""
        if self._reference:
            return self._commit_one_by_one(ops, stop_at_failure, restore)
        if len(ops) == 1 and type(field_write := ops[0]) is SetField:
            fw: SetField = field_write
            return fieldwrites.set_field(
                self, fw.resource, fw.objects, fw.path, fw.value, stop_at_failure=stop_at_failure
            )
        if ops and all(type(op) is SetField for op in ops):
            return fieldwrites.set_fields(self, ops, stop_at_failure)  # type: ignore[arg-type]  # (SetFields)
        if ops and all(type(op) is Create and op.resource == "pods" and not op.dry_run for op in ops):
            objects = [op.object for op in ops]  # type: ignore[union-attr]
            stored, failure = podbatch.create_pods(self, objects, restore=restore)
            if failure is None or stop_at_failure:
                return [*stored, *([failure] if failure is not None else [])]
            rest = ops[len(stored) + 1 :]
            return [*stored, failure, *self.commit(rest, restore=restore)]
        if ops and all(type(op) is Update and not op.dry_run for op in ops):
            resource = ops[0].resource
            if all(op.resource == resource for op in ops):
                objects = [op.object for op in ops]  # type: ignore[union-attr]
                if stop_at_failure:
                    stored, failure = self._update_all(resource, objects)
                    return [*stored, *([failure] if failure is not None else [])]
                return podruns.update_each(self, resource, objects)
        if ops and all(type(op) is Create and op.resource == EVENTS and not op.dry_run for op in ops):
            return eventbatch.create_events(self, ops, stop_at_failure)  # type: ignore[arg-type]
        return self._commit_one_by_one(ops, stop_at_failure, restore)

    def create_pods(
        self, objects: builtins.list[JSON], *, restore: bool = False
    ) -> tuple[builtins.list[JSON], StatusError | None]:
        """The pods of `objects` created in order, and the failure that stopped them (None:
        none did): `commit` of their creates with `stop_at_failure`, without the operations
        built and told apart (a scenario's pods being loaded, 256 at a time)."""
        if self._reference:
            return podbatch.create_each(self, objects, restore=restore)
        return podbatch.create_pods(self, objects, restore=restore)

    def _commit_one_by_one(
        self, ops: Sequence[WriteOp], stop_at_failure: bool, restore: bool = False
    ) -> builtins.list[Result]:
        """`commit` as one `create`, `update` or `delete` after another (a field write: its
        updates): each its own store commit of one operation (the reference mode's way)."""
        results: builtins.list[Result] = []
        for op in ops:
            writes: Sequence[WriteOp] = (
                [Update(op.resource, with_field(obj, op.path, op.value)) for obj in op.objects]
                if type(op) is SetField
                else (op,)
            )
            for write in writes:
                try:
                    results.append(self._one(write, restore))
                except StatusError as err:
                    results.append(err)
                    if stop_at_failure:
                        return results
        return results

    def _one(self, op: WriteOp, restore: bool = False) -> JSON:
        if type(op) is Create:
            return self.create(op.resource, op.object, dry_run=op.dry_run, restore=restore)
        if type(op) is Update:
            return self.update(op.resource, op.object, dry_run=op.dry_run)
        assert type(op) is Delete
        return self.delete(
            op.resource,
            op.namespace,
            op.name,
            resource_version=op.resource_version,
            uid=op.uid,
            dry_run=op.dry_run,
            grace_period_seconds=op.grace_period_seconds,
        )

    def create(
        self,
        resource: str,
        obj: JSON,
        *,
        dry_run: bool = False,
        user: UserInfo | None = None,
        strategy: RequestStrategy | None = None,
        restore: bool = False,
    ) -> JSON:
        """Create `obj`: its defaults and the kind's PrepareForCreate, generateName, mutating
        admission, the request's `strategy` (prepared and validated), validation, validating
        admission, then the store. With `restore`, `obj` declares existing state (a scenario or
        snapshot being loaded, as restoring etcd brings objects back): a pod keeps the status it
        is written with instead of the pod strategy's reset (registry.defaulting)."""
        obj = self._before_create(resource, obj, restore=restore)
        if (
            strategy is None
            and resource == "pods"
            and not dry_run
            and user is None
            and self.admission is not None
            and self.admission.acts_on("pods")
        ):
            return self._create_pod(obj)
        namespace, name = object_key(obj)
        attrs = Attributes(CREATE, resource, obj, None, namespace, name, "", dry_run, user)
        admitted = self._admit(attrs, None, strategy=strategy)
        created = self.store.create(resource, admitted, dry_run=dry_run)
        if not dry_run and resource == "pods":
            self._remember_pod((namespace, name), created)
        elif not dry_run:  # admitted, validated and stored: a later heartbeat on it needs no checks
            self._heartbeats.remember(resource, (namespace, name), created, self._configuration())
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

    def update(
        self,
        resource: str,
        obj: JSON,
        *,
        dry_run: bool = False,
        user: UserInfo | None = None,
        strategy: RequestStrategy | None = None,
    ) -> JSON:
        """Replace the stored object by `obj`: preconditions, mutating admission, the request's
        `strategy` (prepared and validated), validation, validating admission, then the store."""
        obj = with_type_meta(resource, obj)
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        check_update_preconditions(resource, obj, old)  # 409 before any 422, as upstream
        key = (namespace, name)
        # the memos cover the control plane's own writes (registry.trust)
        trusting = user is None and strategy is None
        if resource == "pods":
            if not dry_run and trusting:
                config = self._pod_config()  # once: the trust check and the result's record share it
                if config is not None and self.keeps_spec(key, obj, old, config):
                    return self._update_pod_keeping_spec(key, obj, old, config)
            obj = default_pod_requests(obj)
        elif resource == NAMESPACES:
            obj = namespaces.prepare_for_update(obj, old)
        else:
            obj = defaulted_for_update(obj, old)
        obj = keep_deletion_fields(obj, old)
        if (
            trusting
            and self._trusts_heartbeats(resource)
            and self._heartbeats.beats_valid(resource, key, obj, old, self._configuration())
            and self._namespace_admits(resource, namespace)
        ):
            admitted = obj
        else:
            attrs = Attributes(UPDATE, resource, obj, old, namespace, name, "", dry_run, user)
            admitted = self._admit(attrs, old, strategy=strategy)
        if deletes_during_update(resource, admitted, old):
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete(resource, namespace, name, uid=uid, dry_run=dry_run)
        stored = self.store.update(resource, admitted, dry_run=dry_run)
        if not dry_run:
            self._heartbeats.remember(resource, key, stored, self._configuration())
            if resource == "pods":
                self._remember_pod(key, stored)
        return stored

    def _update_pod_keeping_spec(
        self, key: tuple[str, str], obj: JSON, old: JSON, config: Configuration
    ) -> JSON:
        """`update` of a pod this registry stored by an object carrying its spec object: the
        admission chain would return the object as it is and only the metadata checks can fail
        (registry.podtrust); the rest is the generic path's."""
        obj = keep_deletion_fields(obj, old)  # default_pod_requests: old's spec is defaulted already
        validator = config.validator
        assert isinstance(validator, APIValidator)  # the configuration keeps stored specs
        validator.check_pod_keeping_spec(obj, old)
        if should_delete_during_update(obj, old):
            self._pods.forget(key)
            uid = str((old.get("metadata") or {}).get("uid") or "") or None
            return self.store.delete("pods", key[0], key[1], uid=uid)
        stored = self.store.update("pods", obj)
        self._pods.remember(key, stored, config)
        return stored

    def _update_all(
        self, resource: str, objects: builtins.list[JSON]
    ) -> tuple[builtins.list[JSON], StatusError | None]:
        """A commit of the updates of `objects` stopping at the first failure, with admission and
        validation of each object first (against the store as it is before the batch: the objects
        must be distinct). An object that fails them ends the batch there, after the ones before
        it are stored.

        Heartbeats (lease renewals) on objects this registry stored skip checks that cannot
        fail (`kubetaint.registry.heartbeats`)."""
        admitted: builtins.list[JSON] = []
        refused: StatusError | None = None
        heartbeats = self._heartbeats if self._trusts_heartbeats(resource) else None
        config = self._configuration()
        keys: builtins.list[tuple[str, str]] = []
        for given in objects:
            obj = with_type_meta(resource, given)
            if resource == "pods":
                obj = default_pod_requests(obj)
            key = namespace, name = object_key(obj)
            keys.append(key)
            try:
                old = self.store.get(resource, namespace, name)
                if resource != "pods":
                    obj = defaulted_for_update(obj, old)
                check_update_preconditions(resource, obj, old)
                if (
                    heartbeats is not None
                    and heartbeats.beats_valid(resource, key, obj, old, config)
                    and self._namespace_admits(resource, namespace)
                ):
                    admitted.append(obj)
                    continue
                attrs = Attributes(UPDATE, resource, obj, old, namespace, name, "", False)
                admitted.append(self._admit(attrs, old))
            except StatusError as err:
                refused = err
                break
        stored, failure = until_failure(
            self.store.commit([Update(resource, obj) for obj in admitted], stop_at_failure=True)
        )
        self._heartbeats.remember_all(resource, keys, stored, config)
        return stored, failure if failure is not None else refused

    def update_status(
        self,
        resource: str,
        obj: JSON,
        *,
        dry_run: bool = False,
        user: UserInfo | None = None,
        strategy: RequestStrategy | None = None,
    ) -> JSON:
        """The `status` subresource: only status (and metadata) changes; spec stays as stored.
        `strategy`: the status strategy's steps, run as `update` runs them."""
        namespace, name = object_key(obj)
        old = self.store.get(resource, namespace, name)
        check_update_preconditions(resource, obj, old)
        merged = {**obj, "spec": old["spec"]} if "spec" in old else dict(obj)
        attrs = Attributes(UPDATE, resource, merged, old, namespace, name, "status", dry_run, user)
        admitted = self._admit(attrs, old, strategy=strategy)
        if resource == NAMESPACES and isinstance(self.validator, APIValidator):
            check_namespace_status_update(admitted)
        return self.store.update(resource, admitted, dry_run=dry_run)

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False, user: UserInfo | None = None) -> JSON:
        """The namespace `finalize` subresource (registry.namespace_finalize)."""
        return namespace_finalize.finalize_namespace(self, obj, dry_run=dry_run, user=user)

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
        graceful: bool | None = None,
        user: UserInfo | None = None,
    ) -> JSON:
        """Delete, or (finalizers pending, e.g. `orphan` / `foregroundDeletion` for the
        propagation policy) mark for deletion and return the marked object. A pod is deleted
        gracefully when `graceful` says so (None: as `graceful_pod_deletion` says)."""
        old = self.store.get(resource, namespace, name)
        self._heartbeats.forget(resource, (namespace, name))  # its entry would only keep it alive
        if resource == "pods":
            self._pods.forget((namespace, name))
        if self.admission is not None:
            attrs = Attributes(DELETE, resource, None, old, namespace, name, "", dry_run, user)
            try:
                if user is not None:  # NodeRestriction (the one plugin acting on deletes by users)
                    self.admission.mutate(attrs, self._lookup)
                self.admission.validate(attrs, self._lookup)
            except AdmissionError as err:
                raise StatusError.from_status(err.status) from None
        if graceful is None:
            graceful = self.graceful_pod_deletion
        if resource == "pods" and graceful and self.clock is not None:
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
        return delete_or_keep(
            self.store,
            resource,
            old,
            now=now,
            propagation_policy=propagation_policy,
            resource_version=resource_version,
            uid=uid,
            dry_run=dry_run,
        )

    # steps ---------------------------------------------------------------------------------

    def _before_create(
        self, resource: str, obj: JSON, *, restore: bool = False, defaults: PodDefaults = default_pod_requests
    ) -> JSON:
        return before_create(
            resource,
            obj,
            store=self.store,
            clock=self.clock,
            rng=self._rng,
            restore=restore,
            defaults=defaults,
        )

    def admit_subresource(self, attrs: Attributes) -> None:
        """Admission of a subresource request carrying an object of another kind (pods/binding's
        Binding, pods/eviction's Eviction): the chain without object validation. The mutating
        phase runs for users' requests (NodeRestriction; the other plugins leave subresources
        alone)."""
        if self.admission is None:
            return
        try:
            if attrs.user is not None:
                self.admission.mutate(attrs, self._lookup)
            self.admission.validate(attrs, self._lookup)
        except AdmissionError as err:
            raise StatusError.from_status(err.status) from None

    def _admit(
        self,
        attrs: Attributes,
        old: JSON | None,
        lookup: ObjectLookup | None = None,
        *,
        strategy: RequestStrategy | None = None,
    ) -> JSON:
        """Mutating admission, the storage check, the strategy (`strategy`'s steps, then the
        registry's validator), then validating admission: kube-apiserver's order, so a
        validation error answers before a validating plugin's refusal."""
        lookup = lookup if lookup is not None else self._lookup
        obj = dict(attrs.object or {})
        # a chain without a plugin for this resource would return the object and accept it
        admission = (
            self.admission if self.admission is not None and self.admission.acts_on(attrs.resource) else None
        )
        try:
            if admission is not None:
                obj = dict(admission.mutate(attrs, lookup) or obj)
            check = self._write_checks.get(attrs.resource) if attrs.user is not None else None
            if check is not None and not attrs.subresource:
                check.check(attrs.with_object(obj))
            if strategy is not None:
                obj = strategy.prepare(obj, old)
                strategy.validate(obj, old)
            if self.validator is not None:
                self.validator(attrs.resource, obj, old)
            if admission is not None:
                admission.validate(attrs.with_object(obj), lookup)
        except AdmissionError as err:
            raise StatusError.from_status(err.status) from None
        return obj
