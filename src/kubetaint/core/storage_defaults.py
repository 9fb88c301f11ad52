"""Defaults of the storage kinds (mirrors SetDefaults_PersistentVolume,
SetDefaults_PersistentVolumeClaim of pkg/apis/core/v1/defaults.go and SetDefaults_StorageClass,
SetDefaults_CSIDriver of pkg/apis/storage/v1/defaults.go): what a stored object carries when its
manifest leaves the field out."""

from __future__ import annotations

from typing import Any

from kubetaint.api.jsonview import as_mapping

JSON = dict[str, Any]


def default_persistent_volume(obj: JSON) -> JSON:
    """Reclaim policy Retain, volume mode Filesystem, phase Pending."""
    spec = dict(as_mapping(obj.get("spec")))
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    status = dict(as_mapping(obj.get("status")))
    status.setdefault("phase", "Pending")
    return {**obj, "spec": spec, "status": status}


def default_persistent_volume_claim(obj: JSON) -> JSON:
    """Volume mode Filesystem, phase Pending."""
    spec = dict(as_mapping(obj.get("spec")))
    spec.setdefault("volumeMode", "Filesystem")
    status = dict(as_mapping(obj.get("status")))
    status.setdefault("phase", "Pending")
    return {**obj, "spec": spec, "status": status}


def default_storage_class(obj: JSON) -> JSON:
    """Reclaim policy Delete, binding mode Immediate."""
    out = dict(obj)
    out.setdefault("reclaimPolicy", "Delete")
    out.setdefault("volumeBindingMode", "Immediate")
    return out


def default_csi_driver(obj: JSON) -> JSON:
    """attachRequired true; podInfoOnMount, storageCapacity, requiresRepublish and seLinuxMount
    false; fsGroupPolicy ReadWriteOnceWithFSType; volumeLifecycleModes [Persistent]."""
    spec = dict(as_mapping(obj.get("spec")))
    spec.setdefault("attachRequired", True)
    spec.setdefault("podInfoOnMount", False)
    spec.setdefault("storageCapacity", False)
    spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
    spec.setdefault("requiresRepublish", False)
    spec.setdefault("seLinuxMount", False)
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    return {**obj, "spec": spec}


STORAGE_DEFAULTERS = {
    ("", "PersistentVolume"): default_persistent_volume,
    ("", "PersistentVolumeClaim"): default_persistent_volume_claim,
    ("storage.k8s.io", "StorageClass"): default_storage_class,
    ("storage.k8s.io", "CSIDriver"): default_csi_driver,
}


def with_storage_defaults(obj: JSON) -> JSON:
    """`obj` with its kind's defaults when it is a storage kind (by apiVersion and kind)."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    defaulter = STORAGE_DEFAULTERS.get((group, str(obj.get("kind") or "")))
    return defaulter(obj) if defaulter is not None else obj
