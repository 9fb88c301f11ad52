"""The garbage collector's dependency graph (mirrors pkg/controller/garbagecollector/graph.go and
graph_builder.go at the level the collector needs): for every owner uid, the objects whose
metadata.ownerReferences name it, kept current incrementally from informer events.

References to every built-in kind the server serves (as upstream, whose graph covers every
deletable resource) are indexed; custom resources' dependents are collected by
controllers/crd/owners. Nothing is scanned per event: an add
or delete touches the object's own references, an update only when they changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kubetaint.api.resources import RESOURCES, REVIEW_GROUPS, Resource

JSON = dict[str, Any]
#: (resource, namespace, name): where an object lives in the store.
Identity = tuple[str, str, str]

#: Resources the collector leaves alone, as upstream's default `ignoredResources` (Events).
IGNORED_RESOURCES = frozenset({"events", "events.events.k8s.io"})

#: Every built-in resource the collector follows, as owner and as dependent: each one served that
#: can be listed, watched and deleted (upstream's GetDeletableResources), but the ignored ones.
FOLLOWED: tuple[Resource, ...] = tuple(
    r
    for r in RESOURCES
    if r.served
    and r.group not in REVIEW_GROUPS
    and {"list", "watch", "delete"} <= set(r.verbs)
    and r.store_resource not in IGNORED_RESOURCES
)

#: The owner kinds the collector follows, by (API group, kind), and their store resources.
OWNER_RESOURCES: dict[tuple[str, str], str] = {(r.group, r.kind): r.store_resource for r in FOLLOWED}

#: The store resources of cluster-scoped followed kinds (their owners have no namespace).
CLUSTER_SCOPED: frozenset[str] = frozenset(r.store_resource for r in FOLLOWED if not r.namespaced)

#: The same by (apiVersion, kind), the fast path for the served versions.
_BY_VERSION: dict[tuple[str, str], str] = {(r.api_version, r.kind): r.store_resource for r in FOLLOWED}


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def owner_resource(ref: Mapping[str, Any]) -> str | None:
    """The store resource of the owner `ref` names, or None for kinds not followed."""
    fast = _BY_VERSION.get((ref.get("apiVersion") or "", ref.get("kind") or ""))
    if fast is not None:
        return fast
    return OWNER_RESOURCES.get((_group(str(ref.get("apiVersion") or "")), str(ref.get("kind") or "")))


def followed_refs(obj: Mapping[str, Any]) -> list[JSON]:
    """The object's owner references to followed kinds (with a uid)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences")
    if not refs:
        return []
    return [r for r in refs if r.get("uid") and owner_resource(r) is not None]


def uid_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def identity_of(resource: str, obj: Mapping[str, Any]) -> Identity:
    meta = obj.get("metadata") or {}
    return (resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class DependencyGraph:
    """Owner uid → {dependent uid: dependent identity}, and the uids of objects present."""

    def __init__(self) -> None:
        self.present: dict[str, Identity] = {}
        self._dependents: dict[str, dict[str, Identity]] = {}

    def add(self, resource: str, obj: Mapping[str, Any]) -> list[JSON]:
        """Record `obj`; returns its followed owner references."""
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        ident = (resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self.present[uid] = ident
        refs = followed_refs(obj)
        if refs:
            self._link(uid, ident, refs)
        return refs

    def add_keyed(self, resource: str, key: tuple[str, str], obj: Mapping[str, Any]) -> list[JSON]:
        """`add` of an object whose (namespace, name) as strings is `key` (an informer's cache key)."""
        uid = (obj.get("metadata") or {}).get("uid")
        uid = uid if type(uid) is str else str(uid or "")
        ident = (resource, key[0], key[1])
        self.present[uid] = ident
        refs = followed_refs(obj)
        if refs:
            self._link(uid, ident, refs)
        return refs

    def add_each_keyed(
        self, resource: str, items: Sequence[tuple[tuple[str, str], JSON]]
    ) -> Iterator[tuple[JSON, list[JSON]]]:
        """`add_keyed` of each (key, object) in turn (an informer's replay), yielding right after
        adding it each object that has followed owner references or is being deleted, with
        those references (what the replay handler examines, in the same order)."""
        present = self.present
        for key, obj in items:
            meta = obj.get("metadata") or {}
            uid = meta.get("uid")
            uid = uid if type(uid) is str else str(uid or "")
            ident = (resource, key[0], key[1])
            present[uid] = ident
            if not meta.get("ownerReferences"):  # followed_refs finds none
                if meta.get("deletionTimestamp"):
                    yield obj, []
                continue
            refs = followed_refs(obj)
            if refs:
                self._link(uid, ident, refs)
            if refs or meta.get("deletionTimestamp"):
                yield obj, refs

    def update(self, resource: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Refresh the edges; True when the owner references changed."""
        return self.update_refs(resource, old, new) is not None

    def update_refs(
        self, resource: str, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> tuple[list[JSON], list[JSON]] | None:
        """`update`: None when the owner references did not change, else the followed references
        of `old` and of `new` (read-only)."""
        old_refs = (old.get("metadata") or {}).get("ownerReferences")
        new_refs = (new.get("metadata") or {}).get("ownerReferences")
        if old_refs is new_refs or old_refs == new_refs:
            return None
        uid = uid_of(new)
        old_followed, new_followed = followed_refs(old), followed_refs(new)
        self._unlink(uid, old_followed)
        self._link(uid, identity_of(resource, new), new_followed)
        return old_followed, new_followed

    def link_followed(self, resource: str, obj: Mapping[str, Any], followed: list[JSON]) -> None:
        """`update_refs` of an update to `obj` from an object without owner references, when
        `followed` is followed_refs(obj) (non-empty): its edges are added (`_link` of its uid
        and identity, inline: every pod of an adoption asks)."""
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")  # uid_of
        ident = (resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""))  # identity_of
        every = self._dependents
        for ref in followed:
            owner = str(ref["uid"])
            dependents = every.get(owner)
            if dependents is None:
                dependents = every[owner] = {}
            dependents[uid] = ident

    def remove(self, obj: Mapping[str, Any]) -> None:
        uid = uid_of(obj)
        self.present.pop(uid, None)
        self._unlink(uid, followed_refs(obj))

    def _link(self, uid: str, ident: Identity, refs: Sequence[Mapping[str, Any]]) -> None:
        for ref in refs:
            self._dependents.setdefault(str(ref["uid"]), {})[uid] = ident

    def _unlink(self, uid: str, refs: Sequence[Mapping[str, Any]]) -> None:
        for ref in refs:
            owner = str(ref["uid"])
            dependents = self._dependents.get(owner)
            if dependents is not None:
                dependents.pop(uid, None)
                if not dependents:
                    del self._dependents[owner]

    def dependents(self, owner_uid: str) -> list[tuple[str, Identity]]:
        return list((self._dependents.get(owner_uid) or {}).items())

    def has_dependents(self, owner_uid: str) -> bool:
        return bool(self._dependents.get(owner_uid))

    def absent_owners(self) -> Iterator[str]:
        """Owner uids with dependents but not present (the start-up rebuild's virtual nodes)."""
        return iter([owner for owner in self._dependents if owner not in self.present])
