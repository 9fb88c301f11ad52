"""The pods a controller of one kind owns, by its uid, kept from the pod informer: a controller
that never adopts (StatefulSet, Job) finds its pods in O(its pods), and a pod event costs one
owner-reference look for every other pod (upstream's controllerUID informer index).

`OwnerPresence` lets such an index stop following pod events while no controller of its kind
exists: with no StatefulSet, no pod event can matter to the StatefulSet controller's indexes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.speed.reference import reference_mode
from kubetaint.store.informer import Changes, Informer

JSON = dict[str, Any]
Key = tuple[str, str]


class OwnerPresence:
    """Speeds up the pod indexes of a controller while no object of its kind exists (a
    simulation without StatefulSets or Jobs): the index's pod handler returns at once instead of
    looking at each pod event, and the index is rebuilt from the pod informer's cache when an
    owner appears or when it is read. Off in reference mode (the index follows every event).

    `following`: whether the index follows the pod events (an owner exists); `stale`: whether
    a pod event went by unseen since the index was last built. The index calls `skipped()` from
    its pod handler when not following, and `rebuild()` before a read while `stale`."""

    __slots__ = ("_owners", "_rebuild", "following", "stale")

    def __init__(self, owners: Informer | None, rebuild: Callable[[], None]) -> None:
        """`owners`: the informer of the owner kind (None: always following); `rebuild()`: the
        index built afresh from the pod informer's cache."""
        self._rebuild = rebuild
        self.following = True
        self.stale = False
        self._owners = owners
        if owners is not None and not reference_mode():
            self.following = False
            owners.add_handlers(self._owners_changed)

    def _owners_changed(self, changes: Changes) -> None:
        assert self._owners is not None
        self.following = len(self._owners) > 0
        if self.following and self.stale:
            self.rebuild()

    def skipped(self) -> None:
        """A pod batch went by while not following."""
        self.stale = True

    def rebuild(self) -> None:
        """The index built afresh from the cache (a read of a stale index calls this first)."""
        self.stale = False
        self._rebuild()


def _controller_of_kind(pod: JSON | None, kind: str) -> tuple[str, str] | None:
    """(uid, name) of the pod's controller reference when it is of `kind`."""
    if pod is None:
        return None
    return _controller_in((pod.get("metadata") or {}).get("ownerReferences"), kind)


def _controller_in(refs: Any, kind: str) -> tuple[str, str] | None:
    """(uid, name) of the controller reference among `refs` (a pod's ownerReferences) when it is
    of `kind`."""
    if not refs:
        return None
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller"):
            if ref.get("kind") != kind:
                return None
            return str(ref.get("uid") or ""), str(ref.get("name") or "")
    return None


_UNSET: Any = object()


class KindOwnedPods:
    """Pod keys by the uid of their controller of `kind`; `on_change(namespace, owner name, old,
    new)` for every change of such a pod (old None: added; new None: deleted).

    With `owners` (the informer of `kind`), the index stops following the pod events while no owner exists
    (`OwnerPresence`): then `on_change` is told only the changes whose new pod passes
    `told_alone` (None: none), for the owner references of the old and the new pod."""

    def __init__(
        self,
        informer: Informer,
        kind: str,
        on_change: Callable[[str, str, JSON | None, JSON | None], None],
        *,
        owners: Informer | None = None,
        told_alone: Callable[[JSON], bool] | None = None,
    ) -> None:
        self.informer = informer
        self.kind = kind
        self._on_change = on_change
        self._told_alone = told_alone
        self._owned: dict[str, set[Key]] = {}
        self._owner_of: dict[Key, str] = {}
        self.presence = OwnerPresence(owners, self._rebuild)
        informer.add_handlers(self._changed)

    def _changed(self, changes: Changes) -> None:
        kind = self.kind
        if not self.presence.following:
            self.presence.skipped()
            told_alone = self._told_alone
            if told_alone is not None:
                for change, key, old, new in changes:
                    if change != "DELETED" and told_alone(new):
                        for ref in {_controller_of_kind(old, kind), _controller_of_kind(new, kind)}:
                            if ref is not None:
                                self._on_change(key[0], ref[1], old, new)
            return
        # pods sharing one ownerReferences list object (read-only: one template's pods, or one
        # adoption's) share its controller reference, worked out once; a pod that has none of
        # `kind`, had none and is not indexed is passed over
        owner_of = self._owner_of
        last_refs: Any = _UNSET
        last_after: tuple[str, str] | None = None
        for change, key, old, new in changes:
            if change == "DELETED":
                after = None
            else:
                refs = (new.get("metadata") or {}).get("ownerReferences")
                if refs is not last_refs:
                    last_refs, last_after = refs, _controller_in(refs, kind)
                after = last_after
            if after is None and key not in owner_of:
                if old is None:
                    continue
                old_refs = (old.get("metadata") or {}).get("ownerReferences")
                if not old_refs or _controller_in(old_refs, kind) is None:
                    continue
            before = _controller_of_kind(old, kind)
            previous = self._owner_of.pop(key, None)
            if previous is not None:
                keys = self._owned.get(previous)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._owned[previous]
            if after is not None:
                self._owner_of[key] = after[0]
                self._owned.setdefault(after[0], set()).add(key)
            for ref in {before, after}:
                if ref is not None:
                    self._on_change(key[0], ref[1], old, None if change == "DELETED" else new)

    def _rebuild(self) -> None:
        owned, owner_of, kind = self._owned, self._owner_of, self.kind
        owned.clear()
        owner_of.clear()
        for key, pod in self.informer.keyed_items():
            ref = _controller_of_kind(pod, kind)
            if ref is not None:
                owner_of[key] = ref[0]
                owned.setdefault(ref[0], set()).add(key)

    def pods(self, uid: str) -> list[JSON]:
        """The cached pods controlled by `uid`, in key order (read-only)."""
        if self.presence.stale:
            self.presence.rebuild()
        result = []
        for key in sorted(self._owned.get(uid, ())):
            pod = self.informer.get(*key)
            if pod is not None:
                result.append(pod)
        return result
