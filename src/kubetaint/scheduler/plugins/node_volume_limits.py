"""NodeVolumeLimits: a node's CSI attach limits, per driver, against the unique CSI volumes of the
pods on it plus the pod's new ones (mirrors pkg/scheduler/framework/plugins/nodevolumelimits/
csi.go).

A node's limits are its CSINode's `spec.drivers[].allocatable.count` (and `attachable-volumes-*`
allocatable quantities of the node). A volume counts by `<driver>/<volume handle>`: the bound
PV's CSI source, or for a claim not yet bound the driver its StorageClass provisions with and a
handle made from the claim's name. In-tree volumes migrated to CSI are not counted
(`unmodelled.pod_warnings` says so for the pods that have them)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.scheduler.events import POD, ActionType, ClusterEvent, ClusterEventWithHint
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    PreFilterPlugin,
    UsesHandle,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.volume_helpers import (
    SKIP,
    VolumePlugin,
    claim_name,
    ephemeral_claim_name,
    has_volumes,
    persistent_volume_claim_class,
    pod_volumes,
    volume_is_for_pod,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status
from kubetaint.scheduler.storage_listers import CSI_NODE, PERSISTENT_VOLUME_CLAIM, StorageListers

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
RESOURCE_NAME_LENGTH_LIMIT = 63
#: the prefix of the handles given to claims not yet bound (upstream: 32 random characters)
UNBOUND_HANDLE_PREFIX = "kubetaint-unbound"

Obj = Mapping[str, Any]


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: `attachable-volumes-csi-<driver>`, shortened with a hash when long."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        hashed = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashed
    return CSI_ATTACH_LIMIT_PREFIX + driver


class PVCNotFoundError(LookupError):
    """A claim the new pod needs is missing (UnschedulableAndUnresolvable)."""


def _driver_info_from_class(storage: StorageListers, pvc: Obj) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: the class's provisioner and a handle made from the claim's name."""
    class_name = persistent_volume_claim_class(pvc)
    if not class_name:
        return "", ""
    sc = storage.storage_class(class_name)
    if sc is None:
        return "", ""
    meta = pvc.get("metadata") or {}
    handle = f"{UNBOUND_HANDLE_PREFIX}-{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    provisioner = str(sc.get("provisioner") or "")
    if provisioner.startswith("kubernetes.io/"):
        return "", ""  # an in-tree provisioner: counted only through CSI migration (not modelled)
    return provisioner, handle


def _driver_info(storage: StorageListers, pvc: Obj) -> tuple[str, str]:
    """getCSIDriverInfo: the bound PV's CSI driver and volume handle, else the class's."""
    pv_name = str((pvc.get("spec") or {}).get("volumeName") or "")
    if not pv_name:
        return _driver_info_from_class(storage, pvc)
    pv = storage.pvs.get(pv_name)
    if pv is None:
        return _driver_info_from_class(storage, pvc)
    csi = (pv.get("spec") or {}).get("csi")
    if not isinstance(csi, Mapping):
        return "", ""  # in-tree: counted only through CSI migration (not modelled)
    return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")


def attachable_volumes(storage: StorageListers, pod: Obj, new_pod: bool, result: dict[str, str]) -> None:
    """filterAttachableVolumes: the pod's CSI volumes into `result` (unique name → limit key).
    Raises PVCNotFoundError (new pod, missing claim) or ValueError (an ephemeral claim the pod does
    not own)."""
    meta = pod.get("metadata") or {}
    namespace = str(meta.get("namespace") or "default")
    for volume in pod_volumes(pod):
        name = claim_name(volume)
        ephemeral = False
        if name is None:
            if not isinstance(volume.get("ephemeral"), Mapping):
                continue  # inline volumes: in-tree ones count only through CSI migration
            name, ephemeral = ephemeral_claim_name(pod, volume), True
        if not name:
            raise ValueError("PersistentVolumeClaim had no name")
        pvc = storage.api_pvc(namespace, name)
        if pvc is None:
            if new_pod:
                raise PVCNotFoundError(
                    f'looking up PVC {namespace}/{name}: persistentvolumeclaim "{name}" not found'
                )
            continue
        if ephemeral:
            problem = volume_is_for_pod(pod, pvc)
            if problem is not None:
                raise ValueError(problem)
        driver, handle = _driver_info(storage, pvc)
        if not driver or not handle:
            continue
        result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)


def volume_limits(ni: NodeInfo, csi_node: Obj | None) -> dict[str, int]:
    """getVolumeLimits: the node's attachable-volumes-* allocatable, overridden by its CSINode's
    drivers' allocatable counts."""
    limits = {k: int(v) for k, v in ni.allocatable.items() if k.startswith(ATTACHABLE_VOLUMES_PREFIX)}
    if csi_node is not None:
        for driver in (csi_node.get("spec") or {}).get("drivers") or ():
            if not isinstance(driver, Mapping):
                continue
            count = (driver.get("allocatable") or {}).get("count")
            if isinstance(count, int) and not isinstance(count, bool):
                limits[csi_attach_limit_key(str(driver.get("name") or ""))] = count
    return limits


class NodeVolumeLimits(
    VolumePlugin, UsesHandle, EnqueueExtensions, PreFilterPlugin, FilterPlugin, FilterBatch
):
    name = names.NODE_VOLUME_LIMITS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(CSI_NODE, ActionType.Add)),
            # (MutableCSINodeAllocatableCount, beta and on in 1.35: a driver's count can grow)
            ClusterEventWithHint(ClusterEvent(CSI_NODE, ActionType.UpdateOther), after_csi_node_updated),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.Delete), after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.Add), after_pvc_added),
        ]

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not has_volumes(pi.pod):
            return SKIP
        for volume in pod_volumes(pi.pod):
            if claim_name(volume) is not None or isinstance(volume.get("ephemeral"), Mapping):
                return SUCCESS
        return SKIP

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if not pod_volumes(pi.pod):
            return SUCCESS
        assert self.handle is not None
        storage = self.handle.storage
        csi_node = storage.csi_node(ni.name)
        new_volumes: dict[str, str] = {}
        try:
            attachable_volumes(storage, pi.pod, True, new_volumes)
        except PVCNotFoundError as exc:
            return Status(Code.UnschedulableAndUnresolvable, str(exc))
        except ValueError as exc:
            return Status(Code.Error, str(exc))
        if not new_volumes:
            return SUCCESS
        limits = volume_limits(ni, csi_node)
        if not limits:
            return SUCCESS
        attached: dict[str, str] = {}
        for existing in ni.pods.values():
            try:
                attachable_volumes(storage, existing.pod, False, attached)
            except ValueError as exc:
                return Status(Code.Error, str(exc))
        attached_count: dict[str, int] = {}
        for unique, key in attached.items():
            new_volumes.pop(unique, None)  # a volume shared with a pod on the node counts once
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return SUCCESS


def after_pod_deleted(_pi: PodInfo, old: Obj | None, _new: Obj | None) -> bool:
    """isSchedulableAfterPodDeleted: a deleted bound pod with a claim or ephemeral volume."""
    if old is None:
        return False
    volumes = pod_volumes(old)
    if not volumes or not (old.get("spec") or {}).get("nodeName"):
        return False
    return any(claim_name(v) is not None or isinstance(v.get("ephemeral"), Mapping) for v in volumes)


def after_pvc_added(pi: PodInfo, _old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterPVCAdded: a claim of the pod's namespace that one of its volumes uses."""
    if new is None:
        return False
    meta = new.get("metadata") or {}
    if (meta.get("namespace") or "default") != pi.namespace:
        return False
    for volume in pod_volumes(pi.pod):
        name = claim_name(volume)
        if name is None and isinstance(volume.get("ephemeral"), Mapping):
            name = ephemeral_claim_name(pi.pod, volume)
        if name is not None and name == meta.get("name"):
            return True
    return False


def _counts(csi_node: Obj | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for driver in ((csi_node or {}).get("spec") or {}).get("drivers") or ():
        if isinstance(driver, Mapping):
            count = (driver.get("allocatable") or {}).get("count")
            if isinstance(count, int) and not isinstance(count, bool):
                out[str(driver.get("name") or "")] = count
    return out


def after_csi_node_updated(_pi: PodInfo, old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterCSINodeUpdated: some driver's allocatable count grew (or appeared)."""
    if old is None:
        return True
    before, after = _counts(old), _counts(new)
    return any(count > before.get(name, -1) for name, count in after.items())
