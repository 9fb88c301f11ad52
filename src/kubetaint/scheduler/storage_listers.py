"""What the volume plugins read of the cluster (upstream's informer listers of a framework.Handle:
PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes and CSIDrivers), as a
Scheduler's informers deliver them, plus the volume binder's assumed bindings (upstream's
PV and PVC assume caches: a PV chosen for a claim in Reserve is not offered to another claim).

The objects are Kubernetes JSON dicts, read-only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.core.volumes import storage_class_name

#: upstream's framework GVK names of the storage kinds (the resources of their cluster events)
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
PERSISTENT_VOLUME = "PersistentVolume"
STORAGE_CLASS = "storage.k8s.io/StorageClass"
CSI_NODE = "storage.k8s.io/CSINode"
CSI_DRIVER = "storage.k8s.io/CSIDriver"

Obj = Mapping[str, Any]


def _meta(obj: Obj) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def name_of(obj: Obj) -> str:
    return str(_meta(obj).get("name") or "")


def namespaced_key(obj: Obj) -> tuple[str, str]:
    meta = _meta(obj)
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


class StorageListers:
    """The storage kinds by key, and the bindings assumed by VolumeBinding's Reserve."""

    def __init__(self) -> None:
        #: (namespace, name) -> PersistentVolumeClaim
        self.pvcs: dict[tuple[str, str], Obj] = {}
        #: name -> PersistentVolume (as the API has it)
        self.pvs: dict[str, Obj] = {}
        self.storage_classes: dict[str, Obj] = {}
        self.csi_nodes: dict[str, Obj] = {}
        self.csi_drivers: dict[str, Obj] = {}
        #: PV name -> the PV as assumed bound (claimRef set) by a Reserve; dropped when the API's
        #: object changes (the assume cache's newer version)
        self.assumed_pvs: dict[str, Obj] = {}
        #: (namespace, name) -> the claim as assumed (selected-node annotation set) by a Reserve
        self.assumed_pvcs: dict[tuple[str, str], Obj] = {}

    # ---- listers -----------------------------------------------------------------------------
    def pvc(self, namespace: str, name: str) -> Obj | None:
        """pvcLister.PersistentVolumeClaims(namespace).Get(name) (the assumed one first, as the
        binder's PVC assume cache answers)."""
        key = (namespace, name)
        return self.assumed_pvcs.get(key) or self.pvcs.get(key)

    def api_pvc(self, namespace: str, name: str) -> Obj | None:
        """The claim as the API has it (the plugins' own PVC lister)."""
        return self.pvcs.get((namespace, name))

    def pv(self, name: str) -> Obj | None:
        """pvCache.Get(name): the assumed PV when there is one."""
        return self.assumed_pvs.get(name) or self.pvs.get(name)

    def pvs_of_class(self, class_name: str) -> list[Obj]:
        """pvCache.ListPVs(storageClassName): the PVs (assumed versions first) of that class."""
        out: list[Obj] = []
        for name in self.pvs:
            pv = self.pv(name)
            if pv is not None and storage_class_name(pv) == class_name:
                out.append(pv)
        return out

    def storage_class(self, name: str) -> Obj | None:
        return self.storage_classes.get(name)

    def csi_node(self, name: str) -> Obj | None:
        return self.csi_nodes.get(name)

    # ---- informer deliveries -----------------------------------------------------------------
    def set_pvc(self, pvc: Obj) -> None:
        key = namespaced_key(pvc)
        self.pvcs[key] = pvc
        self.assumed_pvcs.pop(key, None)

    def remove_pvc(self, pvc: Obj) -> None:
        key = namespaced_key(pvc)
        self.pvcs.pop(key, None)
        self.assumed_pvcs.pop(key, None)

    def set_pv(self, pv: Obj) -> None:
        name = name_of(pv)
        self.pvs[name] = pv
        self.assumed_pvs.pop(name, None)

    def remove_pv(self, pv: Obj) -> None:
        name = name_of(pv)
        self.pvs.pop(name, None)
        self.assumed_pvs.pop(name, None)

    def set_storage_class(self, sc: Obj) -> None:
        self.storage_classes[name_of(sc)] = sc

    def remove_storage_class(self, sc: Obj) -> None:
        self.storage_classes.pop(name_of(sc), None)

    def set_csi_node(self, csi_node: Obj) -> None:
        self.csi_nodes[name_of(csi_node)] = csi_node

    def remove_csi_node(self, csi_node: Obj) -> None:
        self.csi_nodes.pop(name_of(csi_node), None)

    def set_csi_driver(self, driver: Obj) -> None:
        self.csi_drivers[name_of(driver)] = driver

    def remove_csi_driver(self, driver: Obj) -> None:
        self.csi_drivers.pop(name_of(driver), None)
