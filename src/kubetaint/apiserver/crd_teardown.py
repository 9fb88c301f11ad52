"""The end of custom resource watches when kube-apiserver tears down a CRD's storage
(apiextensions-apiserver pkg/apiserver/customresource_handler.go): its crdHandler serves a CRD's
resources from a storage built from the CRD's uid, spec and accepted names, and removes that
storage when the CRD is deleted (removeDeadStorage) or when one of them changes
(updateCustomResourceDefinition): a served version removed or no longer served, a schema or
subresource changed, the CRD deleted and created again. `tearDown` waits a second for requests
holding the old storage, then destroys it: the watch cache stops and every open watch on the
CRD's resources ends, its response closed. Clients see the watch close; a client that watches
again gets the new storage, or 404 when the CRD or the version is gone.

`StorageTeardowns` follows the CRDs in the store (a subscription, on every replica) and ends the
watches of a storage that is torn down.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from kubetaint.api import errors
from kubetaint.api.crd import CRDS, CustomResource, storage_key
from kubetaint.store.interface import Store, WatchEvent

#: tearDown's wait before destroying a storage (time.Sleep(time.Second)).
TEARDOWN_DELAY = 1.0


class WatchEnd:
    """Set once the storage a watch reads is torn down; calls the watch's waker then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._waker: Callable[[], None] | None = None

    @property
    def is_set(self) -> bool:
        return self._set

    def wake_with(self, waker: Callable[[], None] | None) -> None:
        """Call `waker` when the end comes (at once when it has come already)."""
        with self._lock:
            self._waker = waker
            fire = self._set and waker is not None
        if fire and waker is not None:
            waker()

    def set(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            waker = self._waker
        if waker is not None:
            waker()


class StorageTeardowns:
    """Ends the watches of custom resources whose CRD's storage is torn down."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        #: CRD name → {watch end: the storage key the watch was served from}
        self._watches: dict[str, dict[WatchEnd, str]] = {}
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        """Follow the store's CRDs (once)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._store.subscribe(self._on_batch, CRDS)

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def watch(self, res: CustomResource) -> tuple[WatchEnd, Callable[[], None]]:
        """The end of a watch served from `res`'s storage, and the call that forgets the watch
        (when it ends for another reason). A storage torn down since `res` was looked up ends the
        watch at once."""
        self.start()
        end = WatchEnd()
        name = f"{res.plural}.{res.group}"
        served = storage_key(res.definition) if res.definition is not None else ""
        with self._lock:
            self._watches.setdefault(name, {})[end] = served
        if self._current_key(name) != served:
            self._end(name, None)

        def forget() -> None:
            with self._lock:
                watches = self._watches.get(name)
                if watches is not None:
                    watches.pop(end, None)
                    if not watches:
                        del self._watches[name]

        return end, forget

    def _current_key(self, name: str) -> str | None:
        try:
            return storage_key(self._store.get(CRDS, "", name))
        except errors.StatusError:
            return None

    def _on_batch(self, batch: Iterable[WatchEvent]) -> None:
        for event in batch:
            if event.type == "BOOKMARK":
                continue
            name = str((event.object.get("metadata") or {}).get("name") or "")
            if name not in self._watches:
                continue
            self._end(name, None if event.type == "DELETED" else storage_key(event.object))

    def _end(self, name: str, key: str | None) -> None:
        """End the watches on `name`'s resources not served from the storage `key` (None: the
        CRD is gone)."""
        with self._lock:
            watches = self._watches.get(name, {})
            ended = [end for end, served in watches.items() if served != key]
            for end in ended:
                del watches[end]
            if not watches:
                self._watches.pop(name, None)
        for end in ended:
            end.set()
