"""`ManagerWrites`: the registry as one in-process component's client, whose creates and updates
carry the managedFields entry kube-apiserver's field manager records for that component's
requests (apiserver/pkg/endpoints/handlers: create.go, update.go, patch.go with
`managerOrUserAgent`; the manager is the product of the component's User-Agent:
`kube-scheduler`, `kube-controller-manager`, `kubelet`).

A component's write is what its upstream counterpart sends: an update that changes a kind's
`status` subresource is a status write (`subresource: status`, as `UpdateStatus` and the
status patches of the kubelet, the scheduler and the controllers are), one that changes the rest
a main-resource write (the strategies' reset fields: no status ownership); one changing both
is the two requests in a row. A create records everything but such a status.

What is not recorded, as upstream: the pods/binding subresource (BindingREST writes the pod
through storage), deletes and the deletion marks of graceful deletion and finalizers. What is
not recorded, unlike upstream: a field write (`SetField`: the kubelets' lease renewals and
node-condition heartbeats) on objects whose manager entry exists already leaves the entry's
`time` as it was (docs/differences-from-upstream.md); the namespace `finalize` subresource
(which removes a finalizer, and so owns nothing) passes through; Events carry none (the
components write many, best effort: the scheduler's and the controllers' go straight to the store).

The simulator does not use this view (its components write through the registry itself, with no
managedFields): `ControlPlane(managed_fields=True)` does, for `kubetaint up`.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, format_time
from kubetaint.core.fieldmanager import manager as fm
from kubetaint.core.fieldmanager.entries import UPDATE
from kubetaint.registry.reads import ReadsPassThrough
from kubetaint.registry.registry import Registry
from kubetaint.registry.validator import resource_info, with_type_meta
from kubetaint.store.interface import (
    JSON,
    Create,
    Result,
    SetField,
    Update,
    WriteOp,
    object_key,
    with_field,
)

#: The field managers of kubetaint's in-process components (the product of their User-Agents).
KUBE_SCHEDULER = "kube-scheduler"
KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBELET = "kubelet"
#: kube-apiserver itself (the system namespaces controller's writes).
KUBE_APISERVER = "kube-apiserver"

_IGNORED_META = ("resourceVersion", "managedFields")
EVENTS = "events"


def _meta(obj: JSON) -> JSON:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _without_status(obj: JSON) -> JSON:
    """`obj` but its status and the metadata a client does not write."""
    meta = {k: v for k, v in _meta(obj).items() if k not in _IGNORED_META}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def _with_managed(obj: JSON, entries: Any) -> JSON:
    meta = {k: v for k, v in _meta(obj).items() if k != "managedFields"}
    if entries:
        meta["managedFields"] = entries
    return {**obj, "metadata": meta}


def record_create(obj: JSON, resource: str, manager: str, now: str) -> JSON:
    """`obj`, a create request of `resource`, with `manager`'s entry (a status subresource's
    status is not owned: the create strategy's reset fields)."""
    obj = with_type_meta(resource, obj)
    info = resource_info(resource)
    if info is None:
        return obj
    who = fm.Request(manager, info.api_version, "", now)
    if info.has_status and "status" in obj:
        status = obj["status"]
        recorded = fm.update(None, {k: v for k, v in obj.items() if k != "status"}, who)
        return {**recorded, "status": status}
    return fm.update(None, obj, who)


def record_update(
    obj: JSON, old: JSON, resource: str, manager: str, now: str, *, status: bool = False
) -> JSON:
    """`obj`, an update of `old`, with `manager`'s entries: a main-resource write of what changed
    outside the status, then (a kind with a status subresource) a status write of a changed
    status. `status`: the write is a status subresource request (only the status is recorded).
    The stored managedFields are the ones recorded over (a component's copy may be older)."""
    obj = with_type_meta(resource, obj)
    info = resource_info(resource)
    if info is None:
        return obj
    live = _meta(old).get("managedFields")
    obj = _with_managed(obj, live)
    if not info.has_status:
        return fm.update(old, obj, fm.Request(manager, info.api_version, "", now))
    status_changed = obj.get("status") != old.get("status")
    out, base = obj, old
    if not status and (not status_changed or _without_status(obj) != _without_status(old)):
        main = {k: v for k, v in obj.items() if k != "status"}
        if "status" in old:
            main["status"] = old["status"]
        recorded = fm.update(old, main, fm.Request(manager, info.api_version, "", now))
        base = recorded
        out = _with_managed(obj, _meta(recorded).get("managedFields"))
    if status_changed:
        out = fm.update(base, out, fm.Request(manager, info.api_version, "status", now))
    return out


def _passes_through(obj: JSON, manager: str, subresource: str) -> bool:
    """Whether a field write on `obj` leaves its managedFields as they are: the manager has its
    entry for the subresource already, or the object is untracked (no managedFields: an update
    would record none either)."""
    entries = _meta(obj).get("managedFields")
    if not isinstance(entries, list) or not entries:
        return True
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("manager") == manager
            and entry.get("operation") == UPDATE
            and (entry.get("subresource") or "") == subresource
        ):
            return True
    return False


class ManagerWrites(ReadsPassThrough):
    """`registry` as `manager`'s client: reads pass through; creates and updates carry the
    managedFields entries kube-apiserver records for `manager` at `clock`'s time."""

    def __init__(self, registry: Registry, manager: str, clock: Clock) -> None:
        self.registry = registry
        self._reads = registry
        self.manager = manager
        self.clock = clock

    # writes --------------------------------------------------------------------------------

    def _now(self) -> str:
        return format_time(self.clock.now())

    def _old(self, resource: str, obj: JSON) -> JSON | None:
        namespace, name = object_key(obj)
        try:
            return self.registry.get(resource, namespace, name)
        except StatusError:
            return None  # the registry answers the write's own 404

    def _updated(self, resource: str, obj: JSON, *, status: bool = False) -> JSON:
        old = self._old(resource, obj)
        if old is None:
            return obj
        return record_update(obj, old, resource, self.manager, self._now(), status=status)

    def _recorded(self, op: WriteOp) -> builtins.list[WriteOp]:
        if op.resource == EVENTS:
            return [op]  # Events carry no managedFields (best effort, written in bulk)
        if type(op) is Create:
            return [
                Create(
                    op.resource, record_create(op.object, op.resource, self.manager, self._now()), op.dry_run
                )
            ]
        if type(op) is Update:
            return [Update(op.resource, self._updated(op.resource, op.object), op.dry_run)]
        if type(op) is SetField:
            subresource = "status" if op.path[0] == "status" else ""
            if all(_passes_through(obj, self.manager, subresource) for obj in op.objects):
                return [op]  # a heartbeat on fields the manager owns: the entry's time stays
            return [
                Update(op.resource, self._updated(op.resource, with_field(obj, op.path, op.value)))
                for obj in op.objects
            ]
        return [op]

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        """`Registry.commit` of the ops with `manager`'s entries recorded (a field write on an
        object without the manager's entry is committed as its updates)."""
        recorded: builtins.list[WriteOp] = []
        for op in ops:
            recorded.extend(self._recorded(op))
        return self.registry.commit(recorded, stop_at_failure=stop_at_failure)

    def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        if resource == EVENTS:
            return self.registry.create(resource, obj, dry_run=dry_run)
        return self.registry.create(
            resource, record_create(obj, resource, self.manager, self._now()), dry_run=dry_run
        )

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        return self.registry.update(resource, self._updated(resource, obj), dry_run=dry_run)

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        """The status subresource (`Registry.update_status`), recorded as a status write."""
        return self.registry.update_status(
            resource, self._updated(resource, obj, status=True), dry_run=dry_run
        )

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON:
        """The namespace finalize subresource (`Registry.finalize_namespace`), as it is."""
        return self.registry.finalize_namespace(obj, dry_run=dry_run)

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
    ) -> JSON:
        """`Registry.delete` (deletes record no managedFields)."""
        return self.registry.delete(
            resource,
            namespace,
            name,
            resource_version=resource_version,
            uid=uid,
            dry_run=dry_run,
            grace_period_seconds=grace_period_seconds,
            propagation_policy=propagation_policy,
            graceful=graceful,
        )
