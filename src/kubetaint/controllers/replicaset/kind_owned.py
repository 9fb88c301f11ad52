"""The pods a controller of one kind owns, by its uid, kept from the pod informer: a controller
that never adopts (StatefulSet, Job) finds its pods in O(its pods), and a pod event costs one
owner-reference look for every other pod (upstream's controllerUID informer index).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.store.informer import Changes, Informer

JSON = dict[str, Any]
Key = tuple[str, str]


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
    new)` for every change of such a pod (old None: added; new None: deleted)."""

    def __init__(
        self,
        informer: Informer,
        kind: str,
        on_change: Callable[[str, str, JSON | None, JSON | None], None],
    ) -> None:
        self.informer = informer
        self.kind = kind
        self._on_change = on_change
        self._owned: dict[str, set[Key]] = {}
        self._owner_of: dict[Key, str] = {}
        informer.add_handlers(self._changed)

    def _changed(self, changes: Changes) -> None:
        """The pod informer's handler. Pods sharing one ownerReferences list object (read-only:
        the pods of one template, or of one adoption) share its controller reference, worked out
        once; a pod that has none of `kind`, had none before and is not indexed is passed over."""
        kind, owner_of = self.kind, self._owner_of
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
            previous = owner_of.pop(key, None)
            if previous is not None:
                keys = self._owned.get(previous)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._owned[previous]
            if after is not None:
                owner_of[key] = after[0]
                self._owned.setdefault(after[0], set()).add(key)
            for ref in {before, after}:
                if ref is not None:
                    self._on_change(key[0], ref[1], old, None if change == "DELETED" else new)

    def pods(self, uid: str) -> list[JSON]:
        """The cached pods controlled by `uid`, in key order (read-only)."""
        result = []
        for key in sorted(self._owned.get(uid, ())):
            pod = self.informer.get(*key)
            if pod is not None:
                result.append(pod)
        return result
