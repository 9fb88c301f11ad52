"""Owners (ReplicaSets) indexed by their label selectors, kept from the owners' informer, so the
owners that may adopt an orphan pod are found without testing every owner's selector (upstream's
getPodReplicaSets lists every ReplicaSet of the namespace; the outcome here is the same list, in
the informer cache's order, found through an index).

An owner whose selector has an equality (or `in`) requirement is indexed under that requirement's
(namespace, key, value) pairs; the others are checked for every pod of their namespace.

`matching` remembers which owners it found per (namespace, label set): many pods carry the same
labels (one template's), and the answer depends only on the owners' selectors and their order, so
it is forgotten whenever an owner is added, deleted or changes its selector.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import LabelSelector, label_selector_from_dict
from kubetaint.controllers.replicaset.podutil import key_of
from kubetaint.speed.memo import Memo
from kubetaint.store.informer import EventHandlers, Informer

JSON = dict[str, Any]
Key = tuple[str, str]
#: What a nil or unparsable selector becomes: it matches no pod (`!x` and `x` together).
NOTHING = LabelSelector((("", "!", ()), ("", "exists", ())))
#: Label sets remembered by `matching` before the memo starts afresh (bounds its memory).
MATCH_MEMO_SIZE = 4096


class SelectorCache:
    """Parsed selectors per owner, reparsed only when the selector dict changes."""

    def __init__(self) -> None:
        self._parsed: dict[Key, tuple[Any, LabelSelector | None]] = {}

    def parsed(self, owner: Mapping[str, Any]) -> LabelSelector | None:
        """label_selector_from_dict of spec.selector (None for nil; StatusError when invalid)."""
        raw = (owner.get("spec") or {}).get("selector")
        key = key_of(owner)
        cached = self._parsed.get(key)
        if cached is not None and (cached[0] is raw or cached[0] == raw):
            return cached[1]
        result = label_selector_from_dict(raw)
        self._parsed[key] = (raw, result)
        return result

    def matching(self, owner: Mapping[str, Any]) -> LabelSelector:
        """The selector used to match pods: nil or invalid selects nothing."""
        try:
            parsed = self.parsed(owner)
        except StatusError:
            parsed = None
        return parsed if parsed is not None else NOTHING

    def forget(self, key: Key) -> None:
        self._parsed.pop(key, None)


class OwnerSelectorIndex:
    """Owners of one informer, found by the labels of a pod they may select."""

    def __init__(self, informer: Informer) -> None:
        self.informer = informer
        self.selectors = SelectorCache()
        self._order: dict[Key, int] = {}  # the informer cache's insertion order
        self._tick = itertools.count()
        self._anchors: dict[Key, tuple[tuple[str, str, str], ...]] = {}
        self._by_anchor: dict[tuple[str, str, str], set[Key]] = {}
        self._unanchored: dict[str, set[Key]] = {}
        # (namespace, label items) -> the keys of the owners matching them, in informer order
        self._matched: Memo[tuple[str, tuple[tuple[str, Any], ...]], tuple[Key, ...]] = Memo(
            "controllers.replicaset.owners.matching", MATCH_MEMO_SIZE
        )
        # matching_keys' last answer: (namespace, the very labels object, the owner keys)
        #: id(labels) -> (namespace, labels, keys) of the last `matching_keys` answer
        self._last: Memo[int, tuple[str, Mapping[str, str], tuple[Key, ...]]] = Memo(
            "controllers.replicaset.owners.matching_keys", limit=1
        )
        informer.add_handlers(EventHandlers(on_add=self._add, on_update=self._update, on_delete=self._delete))

    def _add(self, owner: JSON) -> None:
        key = key_of(owner)
        self._order[key] = next(self._tick)
        self._forget_matches()
        self._index(key, owner)

    def _update(self, old: JSON, owner: JSON) -> None:
        key = key_of(owner)
        if _same_selector_object(old, owner) and key_of(old) == key:
            # the very selector object (read-only) under the same key: re-indexing would file
            # the owner where it is, under the very parsed selector (a status write)
            return
        before = self.selectors.matching(old)
        self._unindex(key)
        self._index(key, owner)
        if self.selectors.matching(owner) is not before:
            self._forget_matches()  # a new selector (an equal one is the very same cached object)

    def _delete(self, owner: JSON) -> None:
        key = key_of(owner)
        self._forget_matches()
        self._unindex(key)
        self._order.pop(key, None)
        self.selectors.forget(key)

    def _forget_matches(self) -> None:
        self._matched.clear()
        self._last.clear()

    def _index(self, key: Key, owner: JSON) -> None:
        selector = self.selectors.matching(owner)
        anchors: tuple[tuple[str, str, str], ...] = ()
        for label_key, op, values in selector.requirements:
            if op in ("=", "==", "in"):
                anchors = tuple((key[0], label_key, v) for v in values)
                break
        if selector is NOTHING:
            return  # selects no pod: never a candidate
        if not anchors:
            self._unanchored.setdefault(key[0], set()).add(key)
            return
        self._anchors[key] = anchors
        for anchor in anchors:
            self._by_anchor.setdefault(anchor, set()).add(key)

    def _unindex(self, key: Key) -> None:
        for anchor in self._anchors.pop(key, ()):
            members = self._by_anchor.get(anchor)
            if members is not None:
                members.discard(key)
                if not members:
                    del self._by_anchor[anchor]
        members = self._unanchored.get(key[0])
        if members is not None:
            members.discard(key)
            if not members:
                del self._unanchored[key[0]]

    def matching(self, namespace: str, labels: Mapping[str, str]) -> list[JSON]:
        """Owners in `namespace` whose selector matches `labels`, in informer cache order."""
        try:
            memo_key = (namespace, tuple(labels.items()))
            keys = self._matched.get(memo_key)
        except TypeError:  # an unhashable label value (never stored): no memo
            return self.matching_uncached(namespace, labels)
        if keys is None:
            found = self.matching_uncached(namespace, labels)
            self._matched.put(memo_key, tuple(key_of(owner) for owner in found))
            return found
        result: list[JSON] = []
        for key in keys:
            owner = self.informer.get(*key)
            if owner is not None:
                result.append(owner)
        return result

    def matching_keys(self, namespace: str, labels: Mapping[str, str]) -> list[Key]:
        """The keys of `matching(namespace, labels)`, in its order (for a caller that only queues
        the owners). The last answer is kept for the very same labels object (stored labels are
        read-only, so the same object means the same labels: one template's pods share theirs)
        until an owner is added, deleted or changes its selector, as `matching`'s memo is."""
        last = self._last.get(id(labels))
        if last is not None and last[1] is labels and last[0] == namespace:
            get = self.informer.get
            return [key for key in last[2] if get(*key) is not None]
        keys = [key_of(owner) for owner in self.matching(namespace, labels)]
        self._last.put(id(labels), (namespace, labels, tuple(keys)))
        return keys

    def matching_uncached(self, namespace: str, labels: Mapping[str, str]) -> list[JSON]:
        """`matching` worked out from the index (what the memo remembers)."""
        unanchored = self._unanchored.get(namespace)
        candidates: set[Key] | None = set(unanchored) if unanchored else None
        only: set[Key] | None = None  # the one posting list found, while it is the only one
        for label_key, value in labels.items():
            found = self._by_anchor.get((namespace, label_key, value if type(value) is str else str(value)))
            if not found:
                continue
            if candidates is None and only is None:
                only = found  # usually the only one: used as it is, without a copy
                continue
            if candidates is None:
                candidates = set(only or ())
            candidates |= found
        keys = candidates if candidates is not None else only
        if not keys:
            return []
        ordered = sorted(keys, key=self._order.__getitem__) if len(keys) > 1 else list(keys)
        result: list[JSON] = []
        for key in ordered:
            owner = self.informer.get(*key)
            if owner is not None and self.selectors.matching(owner).matches(labels):
                result.append(owner)
        return result


def _same_selector_object(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether both owners carry the very same spec.selector object (never absent)."""
    old_spec, new_spec = old.get("spec"), new.get("spec")
    if type(old_spec) is not dict or type(new_spec) is not dict:
        return False
    selector = new_spec.get("selector")
    return selector is not None and selector is old_spec.get("selector")
