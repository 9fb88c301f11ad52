"""An index of pods by owning controller UID and of orphan pods by namespace and by label, kept
from a pod informer's handlers, so a controller's sync costs O(its pods) rather than O(all pods)
(upstream keeps the same through informer indexers: the controllerUID index and the namespace
index that ClaimPods filters).

Orphans are also indexed by each (namespace, label key, label value) they carry: a selector with
an equality (or `in`) requirement finds its adoption candidates from the smallest of those posting
lists instead of scanning every orphan in the namespace. Results always come in key order, the
order a full scan would give. A controller that keeps no orphans here (the DaemonSet controller) indexes
owned pods only (`orphans=False`), and a controller whose owners are of one kind may index only
the pods whose controller reference names that kind (`owner_kind`): an adoption of 150,000 pods by
ReplicaSets then costs the DaemonSet controller's index nothing but the look at each reference.

`version(uid)` counts the changes to an owner's pods, so a caller may keep what it derived from
them until the next change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubetaint.api.selectors import LabelSelector
from kubetaint.controllers.replicaset.podutil import controller_ref_of, key_of
from kubetaint.store.informer import Changes, Informer

JSON = dict[str, Any]
Key = tuple[str, str]
LabelKey = tuple[str, str, str]  # (namespace, label key, label value)
_NONE: frozenset[Key] = frozenset()
_ABSENT = object()


class PodOwnerIndex:
    """pods by controller UID (`owned`) and orphans by namespace; `on_change(old, new)` after each event."""

    def __init__(
        self,
        informer: Informer,
        on_change: Callable[[JSON | None, JSON | None], None],
        *,
        orphans: bool = True,
        owner_kind: str | None = None,
        on_changes: Callable[[list[tuple[JSON, JSON]], list[Key]], None] | None = None,
        on_adds: Callable[[list[tuple[Key, JSON]]], None] | None = None,
    ) -> None:
        """`on_changes(pairs, keys)`, optional: `on_change(old, new)` of each update of a group at
        once, after the group is indexed (so the callbacks must only record work, never read the
        index); `keys[i]` is key_of of the new pod of `pairs[i]`. `on_adds(items)`, optional, the
        same for a replay: `on_change(None, pod)` of each (key, pod) of `items` (key: key_of(pod))
        at once, after every pod is indexed. `owner_kind`, optional: a controller reference of
        another kind is taken as none (with `orphans=False` the pod is not indexed; the callbacks
        are told of it still)."""
        self.informer = informer
        self._on_change = on_change
        self._on_changes = on_changes
        self._on_adds = on_adds
        self._track_orphans = orphans
        self._owner_kind = owner_kind
        self._versions: dict[str, int] = {}
        self.owned: dict[str, set[Key]] = {}
        self.orphans: dict[str, set[Key]] = {}
        self._orphan_labels: dict[LabelKey, set[Key]] = {}
        # key -> the owner UID it is indexed under, or None for an orphan (with its labels)
        self._owner_of: dict[Key, str | None] = {}
        self._labels_of: dict[Key, tuple[LabelKey, ...]] = {}
        informer.add_handlers(self._changed)

    def _changed(self, changes: Changes) -> None:
        """The pod informer's handler: each run of adds, updates or deletes indexed in turn (a
        change alone, most writes, by the per-object steps the runs' loops repeat)."""
        if len(changes) == 1:
            kind, _, old, pod = changes[0]
            if kind == "MODIFIED":
                self._update(old, pod)  # type: ignore[arg-type]  # (a MODIFIED change has its old)
            elif kind == "DELETED":
                self._delete(pod)
            else:
                self._replay([(changes[0][1], pod)])
            return
        only = changes.only
        for kind, run in ((only, changes),) if only is not None else changes.runs():
            if kind == "ADDED":
                self._replay([(key, pod) for _, key, _, pod in run])
            elif kind == "MODIFIED":
                self._update_many([(old, new) for _, _, old, new in run])  # type: ignore[misc]
            else:
                for _, _, _, pod in run:
                    self._delete(pod)

    def _controller_ref(self, pod: JSON) -> Any:
        """The pod's controller reference when it is of the indexed kind (`owner_kind`), else None."""
        ref = controller_ref_of(pod)
        kind = self._owner_kind
        return ref if ref is None or kind is None or ref.get("kind") == kind else None

    def _bump(self, owner: str) -> None:
        self._versions[owner] = self._versions.get(owner, 0) + 1

    def _unindex(self, key: Key) -> None:
        if key not in self._owner_of:
            return
        owner = self._owner_of.pop(key)
        if owner is not None:
            _discard(self.owned, owner, key)
            self._bump(owner)
            return
        _discard(self.orphans, key[0], key)
        for label in self._labels_of.pop(key, ()):
            _discard(self._orphan_labels, label, key)

    def _index(self, pod: JSON) -> None:
        key = key_of(pod)
        ref = self._controller_ref(pod)
        owner = None if ref is None else str(ref.get("uid") or "")
        if owner is not None and self._owner_of.get(key, _ABSENT) == owner:
            self._bump(owner)  # still owned by the same owner (a status change): nothing moves
            return
        tags = self._orphan_tags(key, pod) if owner is None and self._track_orphans else ()
        orphaned = owner is None and key in self._owner_of and self._owner_of[key] is None
        if orphaned and self._labels_of.get(key, ()) == tags:
            return  # an orphan still, with the same labels
        self._unindex(key)
        if owner is not None:
            owned = self.owned.get(owner)
            if owned is None:  # (setdefault would build a set for every call)
                owned = self.owned[owner] = set()
            owned.add(key)
            self._owner_of[key] = owner
            self._versions[owner] = self._versions.get(owner, 0) + 1  # _bump
            return
        if not self._track_orphans:
            return
        self.orphans.setdefault(key[0], set()).add(key)
        self._owner_of[key] = None
        for tag in tags:
            self._orphan_labels.setdefault(tag, set()).add(key)
        if tags:
            self._labels_of[key] = tags

    @staticmethod
    def _orphan_tags(key: Key, pod: JSON) -> tuple[LabelKey, ...]:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        namespace = key[0]
        return tuple([(namespace, str(k), str(v)) for k, v in labels.items()])

    def _add(self, pod: JSON) -> None:
        key = key_of(pod)
        if key in self._owner_of:
            self._index(pod)
        else:
            self._index_new(key, pod)
        self._on_change(None, pod)

    def _replay(self, items: list[tuple[Key, JSON]]) -> None:
        """`_add` of each added pod, with the informer's cache key (its key_of) at hand (the
        changes told at once with `on_adds`)."""
        owner_of, on_change, on_adds = self._owner_of, self._on_change, self._on_adds
        if not owner_of and on_adds is not None:
            self._index_fresh(items)
            on_adds(items)
            return
        for key, pod in items:
            if key in owner_of:
                self._index(pod)
            else:
                self._index_new(key, pod)
            if on_adds is None:
                on_change(None, pod)
        if on_adds is not None:
            on_adds(items)

    def _index_fresh(self, items: list[tuple[Key, JSON]]) -> None:
        """`_index_new` of each (key, pod) of a replay into an empty index (no key indexed: the
        replay at start), inlined: the informer's keys are distinct, so every key is new.
        Consecutive orphans of one namespace whose labels are the same string pairs in the same
        order (one template's pods) share their label tags and the posting lists they join."""
        owner_of, owned, versions = self._owner_of, self.owned, self._versions
        kind = self._owner_kind
        track, orphans, by_label, labels_of = (
            self._track_orphans,
            self.orphans,
            self._orphan_labels,
            self._labels_of,
        )
        last_pairs: object = _ABSENT  # the string-only label pairs whose tags are `tags`
        last_space: object = _ABSENT
        tags: tuple[LabelKey, ...] = ()
        postings: list[set[Key]] = []  # the posting lists of `tags`
        in_namespace: set[Key] = set()
        for key, pod in items:
            meta = pod.get("metadata") or {}
            ref = None
            for candidate in meta.get("ownerReferences") or ():  # _controller_ref
                if candidate.get("controller"):
                    if kind is None or candidate.get("kind") == kind:
                        ref = candidate
                    break
            if ref is not None:
                owner = str(ref.get("uid") or "")
                members = owned.get(owner)
                if members is None:
                    members = owned[owner] = set()
                members.add(key)
                owner_of[key] = owner
                versions[owner] = versions.get(owner, 0) + 1  # _bump
                continue
            if not track:
                continue
            namespace = key[0]
            labels = meta.get("labels") or {}
            # (pairs equal to string-only ones are string-only: no other JSON value equals a string)
            pairs = tuple(labels.items())
            if namespace != last_space or pairs != last_pairs:
                # _orphan_tags, first: what it raises leaves no trace
                tags = tuple([(namespace, str(k), str(v)) for k, v in pairs])
                plain = all(type(k) is str and type(v) is str for k, v in pairs)
                last_pairs, last_space = (pairs, namespace) if plain else (_ABSENT, _ABSENT)
                found = orphans.get(namespace)
                if found is None:
                    found = orphans[namespace] = set()
                in_namespace = found
                postings = []
                for tag in tags:
                    members = by_label.get(tag)
                    if members is None:
                        members = by_label[tag] = set()
                    postings.append(members)
            in_namespace.add(key)
            owner_of[key] = None
            if tags:
                for members in postings:
                    members.add(key)
                labels_of[key] = tags

    def _index_new(self, key: Key, pod: JSON) -> None:
        """`_index` of a pod whose key is not indexed (an informer's listing or replay: every
        pod once): nothing to compare or unindex first."""
        ref = self._controller_ref(pod)
        if ref is not None:
            owner = str(ref.get("uid") or "")
            owned = self.owned.get(owner)
            if owned is None:
                owned = self.owned[owner] = set()
            owned.add(key)
            self._owner_of[key] = owner
            self._bump(owner)
            return
        if not self._track_orphans:
            return
        tags = self._orphan_tags(key, pod)  # first, as in _index: what it raises leaves no trace
        orphans = self.orphans.get(key[0])
        if orphans is None:
            orphans = self.orphans[key[0]] = set()
        orphans.add(key)
        self._owner_of[key] = None
        if tags:
            by_label = self._orphan_labels
            for tag in tags:
                members = by_label.get(tag)
                if members is None:
                    members = by_label[tag] = set()
                members.add(key)
            self._labels_of[key] = tags

    def _update(self, old: JSON, new: JSON) -> None:
        self._reindex(old, new)
        self._on_change(old, new)

    def _reindex(self, old: JSON, new: JSON) -> None:
        unmoved, owner = self._unmoved_owner(old, new)
        if not unmoved:
            self._index(new)
        elif owner is not None:
            self._bump(owner)  # what `_index` does for a pod its owner keeps

    def _update_many(self, pairs: list[tuple[JSON, JSON]]) -> None:
        """`_update` of each pair in turn. With `on_changes`, every pod is indexed first and the
        changes are told at once (the same calls: the callbacks never read the index).

        A group of pods taking one owner reference list (an adoption: a ReplicaSet's one
        commit of updates) finds the controller reference once for the list: `_index` would find
        the same in each pod's (read-only) copy of it."""
        on_changes = self._on_changes
        if on_changes is None:
            for old, new in pairs:
                self._update(old, new)
            return
        owner_of, owned_sets, versions = self._owner_of, self.owned, self._versions
        orphans, labels_of, by_label = self.orphans, self._labels_of, self._orphan_labels
        track = self._track_orphans
        last_refs: object = _ABSENT
        owner: str | None = None
        keys: list[Key] = []
        bumps = 0  # `_bump(owner)`s not yet made (nothing reads the versions while a group is told)
        for old, new in pairs:
            old_meta, new_meta = old.get("metadata"), new.get("metadata")
            if type(old_meta) is not dict or type(new_meta) is not dict:
                keys.append(key_of(new))
                self._reindex(old, new)
                continue
            space, name = new_meta.get("namespace"), new_meta.get("name")
            key = (space, name) if type(space) is str and type(name) is str else key_of(new)  # key_of(new)
            keys.append(key)
            refs = new_meta.get("ownerReferences")
            if refs is old_meta.get("ownerReferences") and new_meta.get("labels") is old_meta.get("labels"):
                # nothing indexed changed (a status or binding change): `_reindex`, inline for a
                # key kept, indexed or (orphans untracked) left out
                if old_meta.get("name") is name and old_meta.get("namespace") is space:
                    kept = owner_of.get(key, _ABSENT)
                    if kept is not _ABSENT or not track:
                        if type(kept) is str:  # an owned pod (not an orphan nor left out)
                            versions[kept] = versions.get(kept, 0) + 1  # _bump
                        continue
                self._reindex(old, new)
                continue
            if refs is not last_refs:
                last_refs = refs
                if bumps and owner is not None:
                    versions[owner] = versions.get(owner, 0) + bumps
                bumps = 0
                ref = self._controller_ref(new)
                owner = None if ref is None else str(ref.get("uid") or "")
            if owner is None:
                if track or key in owner_of:  # (else: neither indexed nor to be)
                    self._index(new)
                continue
            # `_index` of an owned pod, its owner known
            prior = owner_of.get(key, _ABSENT)
            if prior != owner:
                if prior is None:  # the usual case: an orphan adopted (what `_unindex` does to it,
                    # but for the key's entry in owner_of, replaced below: a delete and an insert
                    # would leave a dummy slot for each adoption)
                    in_namespace = orphans.get(key[0])
                    if in_namespace is not None:
                        in_namespace.discard(key)
                        if not in_namespace:
                            del orphans[key[0]]
                    for tag in labels_of.pop(key, ()):
                        members = by_label.get(tag)
                        if members is not None:
                            members.discard(key)
                            if not members:
                                del by_label[tag]
                elif prior is not _ABSENT:  # (`_unindex` of a key not indexed does nothing)
                    self._unindex(key)
                owned = owned_sets.get(owner)
                if owned is None:
                    owned = owned_sets[owner] = set()
                owned.add(key)
                owner_of[key] = owner
            bumps += 1
        if bumps and owner is not None:
            versions[owner] = versions.get(owner, 0) + bumps
        on_changes(pairs, keys)

    def _unmoved_owner(self, old: JSON, new: JSON) -> tuple[bool, str | None]:
        """For a pod whose owner references and labels are the very objects it had (a status,
        binding or other change not touching what is indexed), indexed or (orphans untracked)
        not: (True, its owner UID, or None for an orphan or a pod left out); nothing moves.
        (False, None) when `_index` has to look."""
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("ownerReferences") is not new_meta.get("ownerReferences") or (
            old_meta.get("labels") is not new_meta.get("labels")
        ):
            return False, None
        key = key_of(new)
        if key != key_of(old):
            return False, None
        owner = self._owner_of.get(key, _ABSENT)
        if owner is _ABSENT:
            # not indexed: unless orphans are, the very references leave it out again
            return not self._track_orphans, None
        return True, owner  # type: ignore[return-value]  # (a str or None once indexed)

    def _delete(self, pod: JSON) -> None:
        self._unindex(key_of(pod))
        self._on_change(pod, None)

    def version(self, uid: str) -> int:
        """Changes so far to the pods `uid` owns (a pod added, changed or removed)."""
        return self._versions.get(uid, 0)

    def pods_owned_by(self, uid: str) -> list[JSON]:
        return self._get(self.owned.get(uid, _NONE))

    def owned_pod(self, uid: str, key: Key) -> JSON | None:
        """The pod under `key` when `uid` owns it, else None."""
        return self.informer.get(*key) if key in self.owned.get(uid, _NONE) else None

    def owned_pod_lookup(self, uid: str) -> Callable[[Key], JSON | None]:
        """`owned_pod(uid, key)` as a function of the key, for lookups between two changes to
        the index (it reads the owner's key set as it is now)."""
        owned = self.owned.get(uid, _NONE)
        get = self.informer.get_keyed
        return lambda key: get(key) if key in owned else None

    def orphan_candidates(self, namespace: str, selector: LabelSelector) -> list[JSON]:
        """Orphans in `namespace` that may match `selector` (a superset of the matching ones, in
        key order): those carrying a value one of its equality requirements demands."""
        every = self.orphans.get(namespace, _NONE)
        best: Iterable[Key] = every
        best_size = len(every)
        for label_key, op, values in selector.requirements:
            if op not in ("=", "==", "in") or best_size == 0:
                continue
            posting = [self._orphan_labels.get((namespace, label_key, v), _NONE) for v in values]
            size = sum(len(p) for p in posting)
            if size < best_size:
                best_size = size
                best = posting[0] if len(posting) == 1 else set().union(*posting)
        return self._get(best)

    def _get(self, keys: Iterable[Key]) -> list[JSON]:
        """The cached pods of `keys`, in key order."""
        return [pod for pod in map(self.informer.get_keyed, sorted(keys)) if pod is not None]


def _discard(buckets: dict[Any, set[Key]], bucket: Any, key: Key) -> None:
    members = buckets.get(bucket)
    if members is not None:
        members.discard(key)
        if not members:
            del buckets[bucket]
