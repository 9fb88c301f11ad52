"""The garbage collector (mirrors pkg/controller/garbagecollector/garbagecollector.go
attemptToDeleteItem, processDeletingDependentsItem, orphanDependents and the graph builder's
event handling): deletes objects whose owners are gone, orphans the dependents of an owner deleted
with the `orphan` finalizer, and deletes an owner with the `foregroundDeletion` finalizer only
after its blocking dependents are gone.

Owners' existence is confirmed with a live read before anything is deleted (isDangling). Writes go
through the given client (the registry): removing the last finalizer of an object marked for
deletion deletes it there, as kube-apiserver does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock
from kubetaint.controllers.garbagecollector.graph import (
    CLUSTER_SCOPED,
    OWNER_RESOURCES,
    DependencyGraph,
    Identity,
    followed_refs,
    identity_of,
    owner_resource,
    uid_of,
)
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.core.deletion import (
    BACKGROUND,
    FINALIZER_FOREGROUND,
    FINALIZER_ORPHAN,
    FOREGROUND,
    ORPHAN,
    being_deleted,
    has_finalizer,
)
from kubetaint.store.changes import FieldWriteGroup
from kubetaint.store.informer import Changes, ChangesHandler, Informer
from kubetaint.store.interface import object_key

JSON = dict[str, Any]
#: An item of the attemptToDelete / attemptToOrphan queues: identity and uid.
Item = tuple[str, str, str, str]
log = logging.getLogger(__name__)


class Client(Protocol):
    """The writes the collector makes (the registry's signatures)."""

    def get(self, resource: str, namespace: str, name: str) -> JSON: ...

    def update(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON: ...

    def delete(
        self,
        resource: str,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        propagation_policy: str | None = None,
    ) -> JSON: ...


_NO_REFS = object()


def _item(ident: Identity, uid: str) -> Item:
    return (*ident, uid)


def _deleting_dependents(obj: Mapping[str, Any]) -> bool:
    return being_deleted(obj) and has_finalizer(obj, FINALIZER_FOREGROUND)


class GarbageCollector:
    """Follows the owner references of every object of the given informers' resources (every
    built-in kind but Events, `FOLLOWED`, in a control plane)."""

    def __init__(self, client: Client, clock: Clock, informers: Mapping[str, Informer]) -> None:
        self.client = client
        self.clock = clock
        self.informers = dict(informers)
        self.graph = DependencyGraph()
        #: uids of owners waiting for their dependents (foregroundDeletion).
        self.foreground: set[str] = set()
        self.synced = False
        self.attempt_to_delete: WorkQueue[Item] = WorkQueue(clock, self.attempt_delete, "garbagecollector")
        self.attempt_to_orphan: WorkQueue[Item] = WorkQueue(clock, self.orphan, "garbagecollector-orphan")
        for resource, informer in self.informers.items():
            informer.add_handlers(self._handler(resource))

    def _handler(self, resource: str) -> ChangesHandler:
        """The informer handler of `resource`: the graph follows each change and the objects
        whose owner references moved (or that are being deleted) are examined."""

        def on_update(old: JSON, new: JSON) -> None:
            old_meta, new_meta = old.get("metadata"), new.get("metadata")
            if (
                type(old_meta) is dict
                and type(new_meta) is dict
                and old_meta.get("ownerReferences") is new_meta.get("ownerReferences")
                and not new_meta.get("deletionTimestamp")
            ):
                return  # the very reference list, not being deleted: no edge moves, nothing to examine
            refs = self.graph.update_refs(resource, old, new)
            self._examine(resource, old, new, refs_changed=refs is not None, refs=refs)

        #: the cache keys of the objects seen being deleted (until their deletion)
        deleting: set[tuple[str, str]] = set()

        def changed(changes: Changes) -> None:
            graph, examine = self.graph, self._examine
            group = changes.field_write
            if group is not None and group.path[0] != "metadata":
                _outside_metadata(group, deleting, on_update)
                return
            if changes.only == "ADDED":  # a listing or a replay
                for obj, _ in graph.add_each_keyed(resource, [(key, obj) for _, key, _, obj in changes]):
                    _note_deleting(obj, deleting)
                    examine(resource, None, obj, refs_changed=True)
                return
            # Two kinds of update not being deleted need no look: one keeping its
            # ownerReferences object (no edge moves, nothing to examine), and an orphan taking the
            # very list the orphan before took when none of its owners is absent (an adoption:
            # only the edges to add).
            adopted: object = _NO_REFS  # the list the last orphan examined took, its owners present
            followed: list[JSON] = []
            for kind, key, old, new in changes:
                if kind == "ADDED":
                    for obj, _ in graph.add_each_keyed(resource, ((key, new),)):
                        _note_deleting(obj, deleting)
                        examine(resource, None, obj, refs_changed=True)
                    adopted = _NO_REFS
                    continue
                if kind == "DELETED":
                    deleting.discard(key)
                    self._on_delete(new)
                    adopted = _NO_REFS
                    continue
                assert old is not None
                old_meta, new_meta = old.get("metadata"), new.get("metadata")
                if (
                    type(old_meta) is dict
                    and type(new_meta) is dict
                    and not new_meta.get("deletionTimestamp")
                ):
                    refs, old_refs = new_meta.get("ownerReferences"), old_meta.get("ownerReferences")
                    if refs is old_refs:
                        continue
                    if not old_refs and refs is adopted:
                        graph.link_followed(resource, new, followed)
                        continue
                    on_update(old, new)
                    if not old_refs and refs:
                        followed = followed_refs(new)
                        present = graph.present
                        dangling = self.synced and any(str(r["uid"]) not in present for r in followed)
                        adopted = refs if followed and not dangling else _NO_REFS
                    continue
                if being_deleted(new):
                    deleting.add(key)
                on_update(old, new)

        return changed

    def start(self) -> None:
        # Once the informers have listed (they start after the controllers): the graph rebuild
        # collects dependents whose owners never existed or went away while nobody watched.
        self.clock.call_soon(self._after_sync)

    def stop(self) -> None:
        """Cancel the queued deletions and orphanings."""
        self.attempt_to_delete.stop()
        self.attempt_to_orphan.stop()

    def _after_sync(self) -> None:
        self.synced = True
        for owner in self.graph.absent_owners():
            self._enqueue_dependents(owner)

    # graph changes (processGraphChanges) -----------------------------------------------------

    def _examine(
        self,
        resource: str,
        old: JSON | None,
        obj: JSON,
        *,
        refs_changed: bool,
        refs: tuple[list[JSON], list[JSON]] | None = None,
    ) -> None:
        """`refs`, when given: the followed references of `old` and of `obj`."""
        if not (refs_changed and self.synced) and not being_deleted(obj):
            return  # the usual update: the same references, not being deleted
        uid = uid_of(obj)
        if refs_changed and self.synced:
            present = self.graph.present
            if any(str(r["uid"]) not in present for r in (followed_refs(obj) if refs is None else refs[1])):
                self.attempt_to_delete.add(_item(identity_of(resource, obj), uid))
            if old is not None:
                self._owners_lost_dependent(old, obj, refs)
        if not being_deleted(obj):
            return
        if _deletion_starts_with(old, obj, FINALIZER_ORPHAN):  # startsWaitingForDependentsOrphaned
            self.attempt_to_orphan.add(_item(identity_of(resource, obj), uid))
            return
        if has_finalizer(obj, FINALIZER_FOREGROUND) and uid not in self.foreground:
            self.foreground.add(uid)
            self._enqueue_dependents(uid)
            self.attempt_to_delete.add(_item(identity_of(resource, obj), uid))

    def _on_delete(self, obj: JSON) -> None:
        uid = uid_of(obj)
        self.graph.remove(obj)
        self.foreground.discard(uid)
        self._enqueue_dependents(uid)
        self._owners_lost_dependent(obj, None)

    def _owners_lost_dependent(
        self, old: JSON, new: JSON | None, refs: tuple[list[JSON], list[JSON]] | None = None
    ) -> None:
        """An owner waiting in the foreground looks again when a dependent goes or lets go
        (`refs`, when given: the followed references of `old` and of `new`)."""
        if not self.foreground:
            return  # no owner waits
        old_refs = followed_refs(old) if refs is None else refs[0]
        if not old_refs:
            return  # no owner to lose
        kept: set[str] = set()
        if new is not None:
            kept = {str(r["uid"]) for r in (followed_refs(new) if refs is None else refs[1])}
        for ref in old_refs:
            owner = str(ref["uid"])
            if owner in self.foreground and owner not in kept:
                ident = self.graph.present.get(owner)
                if ident is not None:
                    self.attempt_to_delete.add(_item(ident, owner))

    def _enqueue_dependents(self, owner_uid: str) -> None:
        for dep_uid, ident in self.graph.dependents(owner_uid):
            self.attempt_to_delete.add(_item(ident, dep_uid))

    # reads -----------------------------------------------------------------------------------

    def _cached(self, resource: str, namespace: str, name: str, uid: str) -> JSON | None:
        informer = self.informers.get(resource)
        obj = informer.get(namespace, name) if informer is not None else None
        return obj if obj is not None and uid_of(obj) == uid else None

    def _live(self, resource: str, namespace: str, name: str, uid: str) -> JSON | None:
        """The owner as the API has it now (isDangling's live lookup), None when absent."""
        cached = self._cached(resource, namespace, name, uid)
        if cached is not None:
            return cached
        try:
            obj = self.client.get(resource, namespace, name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise
        return obj if uid_of(obj) == uid else None

    # attemptToDeleteItem ---------------------------------------------------------------------

    def attempt_delete(self, item: Item) -> None:
        resource, namespace, name, uid = item
        obj = self._cached(resource, namespace, name, uid)
        if obj is None:
            return
        if _deleting_dependents(obj):
            self._process_deleting_dependents(item, obj)
            return
        if being_deleted(obj):
            return
        refs = followed_refs(obj)
        if not refs:
            return
        solid, gone = [], set()
        waiting = False
        for ref in refs:
            owner_res = owner_resource(ref)
            assert owner_res is not None
            # a namespaced owner is in the dependent's namespace, a cluster-scoped one in none
            owner_ns = "" if owner_res in CLUSTER_SCOPED else namespace
            owner = self._live(owner_res, owner_ns, str(ref.get("name") or ""), str(ref["uid"]))
            if owner is None:
                gone.add(str(ref["uid"]))
            elif _deleting_dependents(owner):
                gone.add(str(ref["uid"]))
                waiting = True
            else:
                solid.append(ref)
        if solid:
            if gone:  # keep the object, drop its references to owners that are gone or going
                self._remove_owner_refs(resource, obj, gone)
            return
        if waiting and self.graph.has_dependents(uid):
            policy = FOREGROUND
        elif has_finalizer(obj, FINALIZER_ORPHAN):
            policy = ORPHAN
        elif has_finalizer(obj, FINALIZER_FOREGROUND):
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        self._delete(item, policy)

    def _process_deleting_dependents(self, item: Item, owner: JSON) -> None:
        uid = item[3]
        blocking = []
        for dep_uid, (res, ns, name) in self.graph.dependents(uid):
            dep = self._cached(res, ns, name, dep_uid)
            if dep is not None and _blocks(dep, uid):
                blocking.append((dep_uid, (res, ns, name), dep))
        if not blocking:
            self._remove_finalizer(item[0], owner, FINALIZER_FOREGROUND)
            return
        for dep_uid, ident, dep in blocking:
            if not _deleting_dependents(dep):
                self.attempt_to_delete.add(_item(ident, dep_uid))

    # orphanDependents ------------------------------------------------------------------------

    def orphan(self, item: Item) -> None:
        resource, namespace, name, uid = item
        owner = self._cached(resource, namespace, name, uid)
        if owner is None or not being_deleted(owner) or not has_finalizer(owner, FINALIZER_ORPHAN):
            return
        for dep_uid, (res, ns, dep_name) in self.graph.dependents(uid):
            dep = self._cached(res, ns, dep_name, dep_uid)
            if dep is not None:
                self._remove_owner_refs(res, dep, {uid})
        self._remove_finalizer(resource, owner, FINALIZER_ORPHAN)

    # writes ----------------------------------------------------------------------------------

    def _remove_owner_refs(self, resource: str, obj: JSON, owners: set[str]) -> None:
        meta = dict(obj["metadata"])
        refs = [r for r in meta.get("ownerReferences") or [] if str(r.get("uid")) not in owners]
        if refs:
            meta["ownerReferences"] = refs
        else:
            meta.pop("ownerReferences", None)
        self._write(lambda: self.client.update(resource, {**obj, "metadata": meta}))

    def _remove_finalizer(self, resource: str, obj: JSON, finalizer: str) -> None:
        meta = dict(obj["metadata"])
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        self._write(lambda: self.client.update(resource, {**obj, "metadata": meta}))

    def _delete(self, item: Item, policy: str) -> None:
        resource, namespace, name, uid = item
        log.info(
            "garbagecollector: deleting %s %s/%s (propagationPolicy %s)", resource, namespace, name, policy
        )
        self._write(lambda: self.client.delete(resource, namespace, name, uid=uid, propagation_policy=policy))

    @staticmethod
    def _write(call: Any) -> None:
        """Make a write; an object already gone is done (a conflict raises: the queue retries)."""
        try:
            call()
        except StatusError as err:
            if err.code != 404:
                raise


def _deletion_starts_with(old: Mapping[str, Any] | None, new: Mapping[str, Any], finalizer: str) -> bool:
    """deletionStartsWithFinalizer: `new` is being deleted with `finalizer`, and `old` (None for
    an object listed) was not being deleted or did not have it."""
    if not (being_deleted(new) and has_finalizer(new, finalizer)):
        return False
    return old is None or not being_deleted(old) or not has_finalizer(old, finalizer)


def _note_deleting(obj: JSON, deleting: set[tuple[str, str]]) -> None:
    """Note `obj`'s cache key in `deleting` when it is being deleted."""
    if being_deleted(obj):
        deleting.add(object_key(obj))


def _outside_metadata(
    group: FieldWriteGroup, deleting: set[tuple[str, str]], on_update: Callable[[JSON, JSON], None]
) -> None:
    """Speeds up a field write outside metadata (a heartbeat round's lease renewals, a round of
    node status posts): each object keeps its ownerReferences and deletionTimestamp, so only
    those seen being deleted (`deleting`: none, usually) go to `on_update`, which leaves every
    other one alone. Off in reference mode, where a field write is committed as its updates one
    by one (no compact view)."""
    if not deleting:
        return
    for key, old, new in zip(group.keys, group.olds, group.news, strict=True):
        if key in deleting:
            on_update(old, new)


def _blocks(dependent: Mapping[str, Any], owner_uid: str) -> bool:
    refs = (dependent.get("metadata") or {}).get("ownerReferences") or ()
    return any(str(r.get("uid")) == owner_uid and r.get("blockOwnerDeletion") for r in refs)


__all__ = ["OWNER_RESOURCES", "Client", "GarbageCollector"]
