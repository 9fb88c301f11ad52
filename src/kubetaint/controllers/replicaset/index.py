"""An index of pods by owning controller UID and of orphan pods by namespace, kept from a pod
informer's handlers, so a controller's sync costs O(its pods) rather than O(all pods)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.controllers.replicaset.podutil import controller_of, key_of
from kubetaint.store.informer import EventHandlers, Informer

JSON = dict[str, Any]
Key = tuple[str, str]


class PodOwnerIndex:
    """pods by controller UID (`owned`) and orphans by namespace; `on_change(old, new)` after each event."""

    def __init__(self, informer: Informer, on_change: Callable[[JSON | None, JSON | None], None]) -> None:
        self.informer = informer
        self._on_change = on_change
        self.owned: dict[str, set[Key]] = {}
        self.orphans: dict[str, set[Key]] = {}
        self._owner_of: dict[Key, str] = {}
        informer.add_handlers(EventHandlers(on_add=self._add, on_update=self._update, on_delete=self._delete))

    def _unindex(self, key: Key) -> None:
        owner = self._owner_of.pop(key, None)
        if owner is None:
            return
        bucket = self.owned if owner.startswith("uid:") else self.orphans
        members = bucket.get(owner[4:])
        if members is not None:
            members.discard(key)
            if not members:
                del bucket[owner[4:]]

    def _index(self, pod: JSON) -> None:
        key = key_of(pod)
        self._unindex(key)
        ref = controller_of(pod)
        if ref is not None:
            tag = "uid:" + str(ref.get("uid") or "")
            self.owned.setdefault(tag[4:], set()).add(key)
        else:
            tag = "ns::" + key[0]
            self.orphans.setdefault(key[0], set()).add(key)
        self._owner_of[key] = tag

    def _add(self, pod: JSON) -> None:
        self._index(pod)
        self._on_change(None, pod)

    def _update(self, old: JSON, new: JSON) -> None:
        self._index(new)
        self._on_change(old, new)

    def _delete(self, pod: JSON) -> None:
        self._unindex(key_of(pod))
        self._on_change(pod, None)

    def pods_owned_by(self, uid: str) -> list[JSON]:
        return self._get(self.owned.get(uid, set()))

    def orphans_in(self, namespace: str) -> list[JSON]:
        return self._get(self.orphans.get(namespace, set()))

    def _get(self, keys: set[Key]) -> list[JSON]:
        result = []
        for namespace, name in sorted(keys):
            pod = self.informer.get(namespace, name)
            if pod is not None:
                result.append(pod)
        return result
