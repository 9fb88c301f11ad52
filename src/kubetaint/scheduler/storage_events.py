"""The scheduler's informer handlers of the storage kinds (pkg/scheduler/eventhandlers.go
addAllEventHandlers for PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes and
CSIDrivers): each change goes into the storage listers, then moves the unschedulable pods whose
rejecting plugins' hints accept it. `Scheduler` takes them as its own methods."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.scheduler.events import ActionType, ClusterEvent
from kubetaint.scheduler.queue import SchedulingQueue
from kubetaint.scheduler.storage_listers import (
    CSI_DRIVER,
    CSI_NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    StorageListers,
)

Obj = Mapping[str, Any]


class StorageInformerEvents:
    """Informer handlers over the scheduler's storage listers and queue."""

    queue: SchedulingQueue
    storage: StorageListers

    def _storage_event(
        self, resource: str, action: ActionType, label: str, old: Obj | None, new: Obj | None
    ) -> None:
        if self.queue.has_unschedulable():
            self.queue.move_on_event(ClusterEvent(resource, action, label), old, new)

    def _changed(
        self, resource: str, kind: str, store: Callable[[Obj], None], new: Obj, old: Obj | None
    ) -> None:
        store(new)
        if old is None:
            self._storage_event(resource, ActionType.Add, f"{kind}Add", None, new)
        else:
            self._storage_event(resource, ActionType.UpdateOther, f"{kind}Update", old, new)

    # PersistentVolumeClaims
    def add_pvc(self, pvc: Obj) -> None:
        self._changed(PERSISTENT_VOLUME_CLAIM, "PersistentVolumeClaim", self.storage.set_pvc, pvc, None)

    def update_pvc(self, pvc: Obj, old: Obj | None = None) -> None:
        if old is None:
            old = self.storage.api_pvc(*_key(pvc))
        self._changed(PERSISTENT_VOLUME_CLAIM, "PersistentVolumeClaim", self.storage.set_pvc, pvc, old)

    def remove_pvc(self, pvc: Obj) -> None:
        self.storage.remove_pvc(pvc)

    # PersistentVolumes
    def add_pv(self, pv: Obj) -> None:
        self._changed(PERSISTENT_VOLUME, "PersistentVolume", self.storage.set_pv, pv, None)

    def update_pv(self, pv: Obj, old: Obj | None = None) -> None:
        if old is None:
            old = self.storage.pvs.get(_name(pv))
        self._changed(PERSISTENT_VOLUME, "PersistentVolume", self.storage.set_pv, pv, old)

    def remove_pv(self, pv: Obj) -> None:
        self.storage.remove_pv(pv)

    # StorageClasses
    def add_storage_class(self, sc: Obj) -> None:
        self._changed(STORAGE_CLASS, "StorageClass", self.storage.set_storage_class, sc, None)

    def update_storage_class(self, sc: Obj, old: Obj | None = None) -> None:
        if old is None:
            old = self.storage.storage_classes.get(_name(sc))
        self._changed(STORAGE_CLASS, "StorageClass", self.storage.set_storage_class, sc, old)

    def remove_storage_class(self, sc: Obj) -> None:
        self.storage.remove_storage_class(sc)

    # CSINodes
    def add_csi_node(self, csi_node: Obj) -> None:
        self._changed(CSI_NODE, "CSINode", self.storage.set_csi_node, csi_node, None)

    def update_csi_node(self, csi_node: Obj, old: Obj | None = None) -> None:
        if old is None:
            old = self.storage.csi_nodes.get(_name(csi_node))
        self._changed(CSI_NODE, "CSINode", self.storage.set_csi_node, csi_node, old)

    def remove_csi_node(self, csi_node: Obj) -> None:
        self.storage.remove_csi_node(csi_node)

    # CSIDrivers
    def add_csi_driver(self, driver: Obj) -> None:
        self._changed(CSI_DRIVER, "CSIDriver", self.storage.set_csi_driver, driver, None)

    def update_csi_driver(self, driver: Obj, old: Obj | None = None) -> None:
        if old is None:
            old = self.storage.csi_drivers.get(_name(driver))
        self._changed(CSI_DRIVER, "CSIDriver", self.storage.set_csi_driver, driver, old)

    def remove_csi_driver(self, driver: Obj) -> None:
        self.storage.remove_csi_driver(driver)

    def add_storage_object(self, obj: Obj) -> bool:
        """The add handler of `obj`'s kind, when it is a storage kind the scheduler reads
        (True), else False."""
        handler = {
            "PersistentVolumeClaim": self.add_pvc,
            "PersistentVolume": self.add_pv,
            "StorageClass": self.add_storage_class,
            "CSINode": self.add_csi_node,
            "CSIDriver": self.add_csi_driver,
        }.get(str(obj.get("kind") or ""))
        if handler is None:
            return False
        handler(obj)
        return True


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")
