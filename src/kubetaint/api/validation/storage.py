"""Validation of the storage kinds (mirrors ValidatePersistentVolume, ValidatePersistentVolumeClaim
and their updates in pkg/apis/core/validation/validation.go, and ValidateStorageClass,
ValidateCSINode, ValidateCSIDriver and their updates in pkg/apis/storage/validation/
validation.go), for the fields the scheduler reads and the rules every object meets: names,
access modes, capacity and requests, one volume source, policies and modes, node affinity and
allowed topologies, CSINode drivers, and what an update may change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.affinity import validate_node_selector
from kubetaint.api.validation.labelselector import validate_label_selector
from kubetaint.api.validation.metaupdate import validate_metadata
from kubetaint.api.validation.names import is_dns1123_subdomain, is_qualified_name, name_is_dns_subdomain
from kubetaint.api.validation.quantities import parse_or_error

Obj = Mapping[str, Any]

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
PV_RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
SC_RECLAIM_POLICIES = ("Delete", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
#: the PersistentVolumeSource members (one must be given)
PV_SOURCES = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
PVC_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)


def _path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """ValidatePersistentVolumeName (path.IsValidPathSegmentName)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    out = []
    for bad in ("/", "%"):
        if bad in name:
            out.append(f"may not contain '{bad}'")
    return out


def _access_modes(modes: Any, path: str, required_detail: str) -> list[f.FieldError]:
    modes = as_list(modes)
    errs: list[f.FieldError] = []
    if not modes:
        errs.append(f.required(path, required_detail))
    found_rwop = found_other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(f.not_supported(path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            found_rwop = True
        else:
            found_other = True
    if found_rwop and found_other:
        errs.append(f.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _positive_quantity(raw: Any, path: str) -> list[f.FieldError]:
    amount, errs = parse_or_error(raw, path)
    if errs:
        return errs
    if amount <= 0:
        return [f.invalid(path, str(raw), "must be greater than zero")]
    return []


def _storage_class_name(name: Any, path: str) -> list[f.FieldError]:
    if not name:
        return []
    return [f.invalid(path, name, msg) for msg in is_dns1123_subdomain(str(name))]


def _volume_mode(mode: Any, path: str) -> list[f.FieldError]:
    if mode is None or mode in VOLUME_MODES:
        return []
    return [f.not_supported(path, mode, VOLUME_MODES)]


def validate_persistent_volume(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidatePersistentVolume (ValidatePersistentVolumeUpdate on update: the volume source and,
    once set, the node affinity and volume mode may not change)."""
    errs = validate_metadata(obj, old, namespaced=False, name_fn=_path_segment_name)
    spec = as_mapping(obj.get("spec"))
    errs.extend(_access_modes(spec.get("accessModes"), "spec.accessModes", ""))
    capacity = as_mapping(spec.get("capacity"))
    if not capacity:
        errs.append(f.required("spec.capacity", ""))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(f.not_supported("spec.capacity", dict(capacity), ["storage"]))
    for name in sorted(capacity):
        errs.extend(_positive_quantity(capacity[name], f.key("spec.capacity", name)))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in PV_RECLAIM_POLICIES:
        errs.append(f.not_supported("spec.persistentVolumeReclaimPolicy", policy, PV_RECLAIM_POLICIES))
    errs.extend(_storage_class_name(spec.get("storageClassName"), "spec.storageClassName"))
    errs.extend(_volume_mode(spec.get("volumeMode"), "spec.volumeMode"))
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(f.required("spec", "must specify a volume type"))
    for extra in sources[1:]:
        errs.append(f.forbidden(f.child("spec", extra), "may not specify more than 1 volume type"))
    affinity = spec.get("nodeAffinity")
    if affinity is not None:
        required = as_mapping(affinity).get("required")
        if required is None:
            errs.append(f.required("spec.nodeAffinity.required", "must specify required node constraints"))
        else:
            errs.extend(validate_node_selector(as_mapping(required), "spec.nodeAffinity.required"))
    if "local" in sources and affinity is None:
        errs.append(f.required("spec.nodeAffinity", "Local volume requires node affinity"))
    if old is not None:
        o_spec = as_mapping(old.get("spec"))
        for name in PV_SOURCES:
            if o_spec.get(name) != spec.get(name):
                errs.append(
                    f.forbidden(
                        "spec.persistentvolumesource",
                        "spec.persistentvolumesource is immutable after creation",
                    )
                )
                break
        if o_spec.get("volumeMode", "Filesystem") != spec.get("volumeMode", "Filesystem"):
            errs.append(f.invalid("spec.volumeMode", spec.get("volumeMode"), "field is immutable"))
        if o_spec.get("nodeAffinity") is not None and o_spec.get("nodeAffinity") != affinity:
            errs.append(f.invalid("spec.nodeAffinity", affinity, "field is immutable"))
    return errs


def validate_persistent_volume_claim(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidatePersistentVolumeClaim (ValidatePersistentVolumeClaimUpdate on update: only the
    requests of a bound claim, its volumeAttributesClassName, and a volumeName not set before
    may change)."""
    errs = validate_metadata(obj, old, namespaced=True, name_fn=_path_segment_name)
    spec = as_mapping(obj.get("spec"))
    errs.extend(
        _access_modes(spec.get("accessModes"), "spec.accessModes", "at least 1 access mode is required")
    )
    if spec.get("selector") is not None:
        errs.extend(validate_label_selector(spec.get("selector"), "spec.selector"))
    requests = as_mapping(as_mapping(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(f.required(f.key("spec.resources", "storage"), ""))
    else:
        errs.extend(_positive_quantity(requests["storage"], f.key("spec.resources", "storage")))
    errs.extend(_storage_class_name(spec.get("storageClassName"), "spec.storageClassName"))
    errs.extend(_volume_mode(spec.get("volumeMode"), "spec.volumeMode"))
    if old is not None:
        o_spec = dict(as_mapping(old.get("spec")))
        n_spec = dict(spec)
        if not o_spec.get("volumeName"):
            o_spec["volumeName"] = n_spec.get("volumeName")
        if (as_mapping(old.get("status")).get("phase")) == "Bound":
            o_spec["resources"] = n_spec.get("resources")
        o_spec["volumeAttributesClassName"] = n_spec.get("volumeAttributesClassName")
        if {k: v for k, v in o_spec.items() if v is not None} != {
            k: v for k, v in n_spec.items() if v is not None
        }:
            errs.append(f.forbidden("spec", PVC_IMMUTABLE))
    return errs


def _provisioner(provisioner: Any) -> list[f.FieldError]:
    if not provisioner:
        return [f.required("provisioner", "")]
    return [f.invalid("provisioner", provisioner, msg) for msg in is_qualified_name(str(provisioner).lower())]


def _allowed_topologies(terms: Any) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for i, raw in enumerate(as_list(terms)):
        path = f.index("allowedTopologies", i)
        expressions = as_list(as_mapping(raw).get("matchLabelExpressions"))
        if not expressions:
            errs.append(
                f.required(f.child(path, "matchLabelExpressions"), "must have at least one label expression")
            )
            continue
        seen: set[str] = set()
        for j, expr in enumerate(expressions):
            e_path = f.index(f.child(path, "matchLabelExpressions"), j)
            key = str(as_mapping(expr).get("key") or "")
            errs.extend(f.invalid(f.child(e_path, "key"), key, msg) for msg in is_qualified_name(key))
            if key in seen:
                errs.append(f.duplicate(f.child(e_path, "key"), key))
            seen.add(key)
            values = as_list(as_mapping(expr).get("values"))
            if not values:
                errs.append(f.required(f.child(e_path, "values"), "must specify as least one value"))
    return errs


def validate_storage_class(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateStorageClass (ValidateStorageClassUpdate on update: parameters, provisioner,
    reclaimPolicy and volumeBindingMode may not change)."""
    errs = validate_metadata(obj, old, namespaced=False, name_fn=name_is_dns_subdomain)
    errs.extend(_provisioner(obj.get("provisioner")))
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in SC_RECLAIM_POLICIES:
        errs.append(f.not_supported("reclaimPolicy", policy, SC_RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode", "Immediate")  # (SetDefaults_StorageClass)
    if mode is None:
        errs.append(f.required("volumeBindingMode", ""))
    elif mode not in BINDING_MODES:
        errs.append(f.not_supported("volumeBindingMode", mode, BINDING_MODES))
    errs.extend(_allowed_topologies(obj.get("allowedTopologies")))
    if old is not None:
        if (obj.get("parameters") or {}) != (old.get("parameters") or {}):
            errs.append(f.forbidden("parameters", "updates to parameters are forbidden."))
        if obj.get("provisioner") != old.get("provisioner"):
            errs.append(f.forbidden("provisioner", "updates to provisioner are forbidden."))
        if obj.get("reclaimPolicy", "Delete") != old.get("reclaimPolicy", "Delete"):
            errs.append(f.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        if mode != old.get("volumeBindingMode", "Immediate"):
            errs.append(f.invalid("volumeBindingMode", mode, "field is immutable"))
    return errs


def validate_csi_node(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateCSINode: each driver's name (a CSI driver name), nodeID, a non-negative allocatable
    count, and no driver twice."""
    errs = validate_metadata(obj, old, namespaced=False, name_fn=name_is_dns_subdomain)
    seen: set[str] = set()
    for i, raw in enumerate(as_list(as_mapping(obj.get("spec")).get("drivers"))):
        driver = as_mapping(raw)
        path = f.index("spec.drivers", i)
        name = str(driver.get("name") or "")
        if not name:
            errs.append(f.required(f.child(path, "name"), "CSINode driver name is required"))
        else:
            errs.extend(
                f.invalid(f.child(path, "name"), name, msg) for msg in is_dns1123_subdomain(name.lower())
            )
        if name in seen:
            errs.append(f.duplicate(f.child(path, "name"), name))
        seen.add(name)
        if not driver.get("nodeID"):
            errs.append(f.required(f.child(path, "nodeID"), "nodeID must be provided"))
        count = as_mapping(driver.get("allocatable")).get("count")
        if isinstance(count, int) and count < 0:
            errs.append(
                f.invalid(f.child(path, "allocatable", "count"), count, "must be greater than or equal to 0")
            )
    return errs


def _csi_driver_name(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_subdomain(name.lower())


def validate_csi_driver(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateCSIDriver: the name (a CSI driver name) and the defaulted spec's known values."""
    errs = validate_metadata(obj, old, namespaced=False, name_fn=_csi_driver_name)
    spec = as_mapping(obj.get("spec"))
    policy = spec.get("fsGroupPolicy")
    policies = ("File", "None", "ReadWriteOnceWithFSType")
    if policy is not None and policy not in policies:
        errs.append(f.not_supported("spec.fsGroupPolicy", policy, policies))
    for i, mode in enumerate(as_list(spec.get("volumeLifecycleModes"))):
        if mode not in ("Ephemeral", "Persistent"):
            errs.append(
                f.not_supported(f.index("spec.volumeLifecycleModes", i), mode, ("Ephemeral", "Persistent"))
            )
    return errs
