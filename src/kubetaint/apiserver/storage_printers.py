"""Table columns and cells of the storage kinds, as kube-apiserver prints them (mirrors
printPersistentVolume, printPersistentVolumeClaim, printStorageClass, printCSINode and
printCSIDriver of pkg/printers/internalversion/printers.go, with VolumeAttributesClass on as in
1.35). Column descriptions are the SwaggerDoc of the fields they show."""

from __future__ import annotations

from typing import Any

from kubetaint.api.jsonview import as_list, meta_of
from kubetaint.api.quantity import QuantityError, format_quantity
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    age_of,
    as_dict,
    col,
    swagger_doc,
)

_CORE = "io.k8s.api.core.v1."
_STORAGE = "io.k8s.api.storage.v1."
_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_DEFAULT_CLASS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def access_modes_string(modes: Any) -> str:
    """helper.GetAccessModesAsString: RWO, ROX, RWX, RWOP, in that order, once each."""
    present = set(as_list(modes))
    shown = (
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    )
    return ",".join(short for mode, short in shown if mode in present)


def _quantity(raw: Any) -> str:
    if raw is None:
        return "0"
    try:
        return format_quantity(raw)
    except (QuantityError, TypeError):
        return str(raw)


def _class(obj: JSON, spec: JSON) -> str:
    annotations = as_dict(meta_of(obj).get("annotations"))
    if _BETA_CLASS in annotations:
        return str(annotations[_BETA_CLASS])
    return str(spec.get("storageClassName") or "")


def _phase(obj: JSON) -> str:
    if meta_of(obj).get("deletionTimestamp"):
        return "Terminating"
    return str(as_dict(obj.get("status")).get("phase") or "")


_PV_SPEC, _PV_STATUS = _CORE + "PersistentVolumeSpec", _CORE + "PersistentVolumeStatus"
PERSISTENT_VOLUME_COLUMNS = [
    NAME_COLUMN,
    col("Capacity", swagger_doc(_PV_SPEC, "capacity")),
    col("Access Modes", swagger_doc(_PV_SPEC, "accessModes")),
    col("Reclaim Policy", swagger_doc(_PV_SPEC, "persistentVolumeReclaimPolicy")),
    col("Status", swagger_doc(_PV_STATUS, "phase")),
    col("Claim", swagger_doc(_PV_SPEC, "claimRef")),
    col("StorageClass", "StorageClass of the pv"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    col("Reason", swagger_doc(_PV_STATUS, "reason")),
    AGE_COLUMN,
    col("VolumeMode", swagger_doc(_PV_SPEC, "volumeMode"), priority=1),
]


def print_persistent_volume(obj: JSON, now: float) -> Cells:
    spec = as_dict(obj.get("spec"))
    ref = as_dict(spec.get("claimRef"))
    claim = (
        f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if spec.get("claimRef") is not None else ""
    )
    return [
        meta_of(obj).get("name", ""),
        _quantity(as_dict(spec.get("capacity")).get("storage")),
        access_modes_string(spec.get("accessModes")),
        str(spec.get("persistentVolumeReclaimPolicy") or ""),
        _phase(obj),
        claim,
        _class(obj, spec),
        str(spec["volumeAttributesClassName"])
        if spec.get("volumeAttributesClassName") is not None
        else "<unset>",
        str(as_dict(obj.get("status")).get("reason") or ""),
        age_of(obj, now),
        str(spec["volumeMode"]) if spec.get("volumeMode") is not None else "<unset>",
    ]


_PVC_SPEC, _PVC_STATUS = _CORE + "PersistentVolumeClaimSpec", _CORE + "PersistentVolumeClaimStatus"
PERSISTENT_VOLUME_CLAIM_COLUMNS = [
    NAME_COLUMN,
    col("Status", swagger_doc(_PVC_STATUS, "phase")),
    col("Volume", swagger_doc(_PVC_SPEC, "volumeName")),
    col("Capacity", swagger_doc(_PVC_STATUS, "capacity")),
    col("Access Modes", swagger_doc(_PVC_STATUS, "accessModes")),
    col("StorageClass", "StorageClass of the pvc"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    AGE_COLUMN,
    col("VolumeMode", swagger_doc(_PVC_SPEC, "volumeMode"), priority=1),
]


def print_persistent_volume_claim(obj: JSON, now: float) -> Cells:
    spec, status = as_dict(obj.get("spec")), as_dict(obj.get("status"))
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_string(status.get("accessModes"))
        capacity = _quantity(as_dict(status.get("capacity")).get("storage"))
    return [
        meta_of(obj).get("name", ""),
        _phase(obj),
        str(spec.get("volumeName") or ""),
        capacity,
        modes,
        _class(obj, spec),
        str(spec["volumeAttributesClassName"])
        if spec.get("volumeAttributesClassName") is not None
        else "<unset>",
        age_of(obj, now),
        str(spec["volumeMode"]) if spec.get("volumeMode") is not None else "<unset>",
    ]


_SC = _STORAGE + "StorageClass"
STORAGE_CLASS_COLUMNS = [
    NAME_COLUMN,
    col("Provisioner", swagger_doc(_SC, "provisioner")),
    col("ReclaimPolicy", swagger_doc(_SC, "reclaimPolicy")),
    col("VolumeBindingMode", swagger_doc(_SC, "volumeBindingMode")),
    col("AllowVolumeExpansion", swagger_doc(_SC, "allowVolumeExpansion")),
    AGE_COLUMN,
]


def print_storage_class(obj: JSON, now: float) -> Cells:
    meta = meta_of(obj)
    name = str(meta.get("name", ""))
    annotations = as_dict(meta.get("annotations"))
    if any(annotations.get(key) == "true" for key in _DEFAULT_CLASS):
        name += " (default)"
    return [
        name,
        str(obj.get("provisioner") or ""),
        str(obj.get("reclaimPolicy") or "Delete"),
        str(obj.get("volumeBindingMode") or "Immediate"),
        obj.get("allowVolumeExpansion") is True,
        age_of(obj, now),
    ]


CSI_NODE_COLUMNS = [
    NAME_COLUMN,
    col("Drivers", "Drivers indicates the number of CSI drivers registered on the node", type_="integer"),
    AGE_COLUMN,
]


def print_csi_node(obj: JSON, now: float) -> Cells:
    drivers = as_list(as_dict(obj.get("spec")).get("drivers"))
    return [meta_of(obj).get("name", ""), len(drivers), age_of(obj, now)]


_CSI_SPEC = _STORAGE + "CSIDriverSpec"
CSI_DRIVER_COLUMNS = [
    NAME_COLUMN,
    col("AttachRequired", swagger_doc(_CSI_SPEC, "attachRequired"), type_="boolean"),
    col("PodInfoOnMount", swagger_doc(_CSI_SPEC, "podInfoOnMount"), type_="boolean"),
    col("StorageCapacity", swagger_doc(_CSI_SPEC, "storageCapacity"), type_="boolean"),
    col("TokenRequests", swagger_doc(_CSI_SPEC, "tokenRequests")),
    col("RequiresRepublish", swagger_doc(_CSI_SPEC, "requiresRepublish"), type_="boolean"),
    col("Modes", swagger_doc(_CSI_SPEC, "volumeLifecycleModes")),
    AGE_COLUMN,
]


def print_csi_driver(obj: JSON, now: float) -> Cells:
    spec = as_dict(obj.get("spec"))
    tokens = spec.get("tokenRequests")
    token_text = (
        ",".join(str(as_dict(t).get("audience") or "") for t in as_list(tokens))
        if tokens is not None
        else "<unset>"
    )
    modes = ",".join(str(m) for m in as_list(spec.get("volumeLifecycleModes"))) or "<none>"
    return [
        meta_of(obj).get("name", ""),
        spec.get("attachRequired") is not False,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        token_text,
        spec.get("requiresRepublish") is True,
        modes,
        age_of(obj, now),
    ]


STORAGE_PRINTERS = {
    "persistentvolumes": (PERSISTENT_VOLUME_COLUMNS, print_persistent_volume),
    "persistentvolumeclaims": (PERSISTENT_VOLUME_CLAIM_COLUMNS, print_persistent_volume_claim),
    "storageclasses.storage.k8s.io": (STORAGE_CLASS_COLUMNS, print_storage_class),
    "csinodes.storage.k8s.io": (CSI_NODE_COLUMNS, print_csi_node),
    "csidrivers.storage.k8s.io": (CSI_DRIVER_COLUMNS, print_csi_driver),
}
