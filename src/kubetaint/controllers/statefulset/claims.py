"""Which pods a StatefulSet controls, as getPodsForStatefulSet does with the ControllerRefManager
(pkg/controller/controller_ref_manager.go ClaimPods, ClaimObject, AdoptPod, ReleasePod): a pod it
controls that no longer matches its selector or its name (`<set>-<ordinal>`) is released; an
orphan pod that matches both is adopted, unless the set or the pod is being deleted."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import LabelSelector
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.kind_owned import OwnerPresence
from kubetaint.controllers.statefulset.pods import is_member
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
API_VERSION = "apps/v1"
KIND = "StatefulSet"


def _has_controller(pod: Mapping[str, Any]) -> bool:
    refs = (pod.get("metadata") or {}).get("ownerReferences")
    if not refs:
        return False
    return any(isinstance(ref, dict) and ref.get("controller") for ref in refs)


def _labels(pod: Mapping[str, Any] | None) -> Any:
    return ((pod or {}).get("metadata") or {}).get("labels")


class OrphanPods:
    """The keys of the pods without a controller, by namespace, kept from the pod informer;
    `on_orphan(pod)` for a pod that is new as an orphan or whose labels changed while it is one
    (upstream's addPod and updatePod of an orphan: the sets that may adopt it sync).

    With `owners` (the StatefulSet informer), the index stops following the pod events while no set exists
    (`OwnerPresence`): no set can adopt an orphan then, and one that appears syncs itself."""

    def __init__(
        self, informer: Informer, on_orphan: Callable[[JSON], None], *, owners: Informer | None = None
    ) -> None:
        self.informer = informer
        self._on_orphan = on_orphan
        self._keys: dict[str, set[Key]] = {}
        self.presence = OwnerPresence(owners, self._rebuild)
        informer.add_handlers(self._changed)

    def _rebuild(self) -> None:
        self._keys.clear()
        for key, pod in self.informer.keyed_items():
            if not _has_controller(pod):
                self._keys.setdefault(key[0], set()).add(key)

    def _changed(self, changes: Changes) -> None:
        if not self.presence.following:
            self.presence.skipped()
            return
        for change, key, old, new in changes:
            orphans = self._keys.get(key[0])
            if change == "DELETED" or new is None or _has_controller(new):
                if orphans is not None and key in orphans:
                    orphans.discard(key)
                continue
            if orphans is None:
                orphans = self._keys[key[0]] = set()
            newly = key not in orphans
            orphans.add(key)
            if newly or _labels(old) != _labels(new):
                self._on_orphan(new)

    def pods(self, namespace: str) -> Iterator[JSON]:
        """The orphan pods of a namespace, in key order (read-only)."""
        if self.presence.stale:
            self.presence.rebuild()
        for key in sorted(self._keys.get(namespace, ())):
            pod = self.informer.get(*key)
            if pod is not None:
                yield pod


def claim_pods(
    store: Store,
    sts: JSON,
    selector: LabelSelector,
    *,
    owned: list[JSON],
    orphans: Iterator[JSON],
    can_adopt: Callable[[], bool],
) -> list[JSON]:
    """ClaimPods with the isMemberOf filter: the pods the set keeps (adopted ones included)."""
    deleting = bool(sts["metadata"].get("deletionTimestamp"))

    def matches(pod: Mapping[str, Any]) -> bool:
        return selector.matches(_labels(pod) or {}) and is_member(sts, pod)

    claimed: list[JSON] = []
    for pod in owned:
        if matches(pod):
            claimed.append(pod)
        elif not deleting:
            release_pod(store, sts, pod)
    if deleting:
        return claimed
    checked = False
    for pod in orphans:
        if not matches(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if not checked:  # RecheckDeletionTimestamp, once, before the first adoption
            if not can_adopt():
                break
            checked = True
        adopted = adopt_pod(store, sts, pod)
        if adopted is not None:
            claimed.append(adopted)
    return claimed


def adopt_pod(store: Store, sts: JSON, pod: JSON) -> JSON | None:
    """AdoptPod: the set's controller reference added (None when the pod is gone)."""
    meta = pod.get("metadata") or {}
    owners = [*(meta.get("ownerReferences") or []), podutil.controller_ref(sts, API_VERSION, KIND)]
    try:
        return store.update("pods", {**pod, "metadata": {**meta, "ownerReferences": owners}})
    except StatusError as err:
        if err.code == 404:
            return None
        raise


def release_pod(store: Store, sts: JSON, pod: JSON) -> None:
    """ReleasePod: the set's owner reference removed (a pod gone is left as it is)."""
    meta = pod.get("metadata") or {}
    uid = sts["metadata"].get("uid")
    owners = [ref for ref in meta.get("ownerReferences") or [] if ref.get("uid") != uid]
    meta = {k: v for k, v in meta.items() if k != "ownerReferences"}  # omitted when empty
    if owners:
        meta["ownerReferences"] = owners
    try:
        store.update("pods", {**pod, "metadata": meta})
    except StatusError as err:
        if err.code not in (404, 422):
            raise
