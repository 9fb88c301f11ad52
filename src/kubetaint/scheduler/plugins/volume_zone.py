"""VolumeZone: the zone and region labels of the PVs bound to the pod's claims against the node's
topology labels (mirrors pkg/scheduler/framework/plugins/volumezone/volume_zone.go).

A PV label lists its zones separated by `__`; the node must carry one of them under the same
key (a beta key also matches the node's GA key). A node without any zone or region label
accepts every pod (a single-zone cluster). Claims not yet bound of a WaitForFirstConsumer class
are left to VolumeBinding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.scheduler.events import NODE, ActionType, ClusterEvent, ClusterEventWithHint, Update
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
    WAIT_FOR_FIRST_CONSUMER,
    VolumePlugin,
    claim_name,
    has_volumes,
    label_zones_to_set,
    persistent_volume_claim_class,
    pod_volumes,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status
from kubetaint.scheduler.storage_listers import PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, STORAGE_CLASS

ERR_REASON_CONFLICT = "node(s) had no available volume zone"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
_STATE_KEY = "PreFilter" + names.VOLUME_ZONE

Obj = Mapping[str, Any]


def translate_to_ga_label(label: str) -> str:
    if label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        return LABEL_TOPOLOGY_REGION
    if label == LABEL_FAILURE_DOMAIN_BETA_ZONE:
        return LABEL_TOPOLOGY_ZONE
    return label


@dataclass(frozen=True)
class PVTopology:
    key: str
    values: frozenset[str]


def pv_topologies(pv: Obj) -> list[PVTopology]:
    """getPVTopologies: the PV's zone and region labels (a malformed one is ignored)."""
    meta = pv.get("metadata") or {}
    labels = meta.get("labels") or {}
    out: list[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones_to_set(str(labels[key]))
            if zones is not None:
                out.append(PVTopology(key, zones))
    return out


def _claim_names(pod: Obj) -> list[str]:
    return [name for name in map(claim_name, pod_volumes(pod)) if name is not None]


class VolumeZone(VolumePlugin, UsesHandle, EnqueueExtensions, PreFilterPlugin, FilterPlugin, FilterBatch):
    name = names.VOLUME_ZONE

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(STORAGE_CLASS, ActionType.Add), after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.Add | Update), after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(PERSISTENT_VOLUME, ActionType.Add | Update), after_pv_change),
        ]

    def _pv_by_pod(self, pi: PodInfo) -> tuple[list[PVTopology], Status]:
        """getPVbyPod."""
        assert self.handle is not None
        storage = self.handle.storage
        out: list[PVTopology] = []
        for name in _claim_names(pi.pod):
            if not name:
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
            pvc = storage.api_pvc(pi.namespace, name)
            if pvc is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, f'persistentvolumeclaim "{name}" not found'
                )
            pv_name = str((pvc.get("spec") or {}).get("volumeName") or "")
            if not pv_name:
                sc_name = persistent_volume_claim_class(pvc)
                if not sc_name:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc = storage.storage_class(sc_name)
                if sc is None:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        f'storageclass.storage.k8s.io "{sc_name}" not found',
                    )
                mode = sc.get("volumeBindingMode")
                if mode is None:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        f'VolumeBindingMode not set for StorageClass "{sc_name}"',
                    )
                if mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolume had no name")
            pv = storage.pvs.get(pv_name)
            if pv is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, f'persistentvolume "{pv_name}" not found'
                )
            out.extend(pv_topologies(pv))
        return out, SUCCESS

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not has_volumes(pi.pod):
            return SKIP
        topologies, status = self._pv_by_pod(pi)
        if not status.is_success():
            return status
        if not topologies:
            return Status(Code.Skip)
        state.data[_STATE_KEY] = topologies
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        if not pod_volumes(pi.pod):
            return SUCCESS
        topologies: list[PVTopology] | None = state.data.get(_STATE_KEY)
        if topologies is None:
            topologies, status = self._pv_by_pod(pi)
            if not status.is_success():
                return status
        labels = ni.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return SUCCESS
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(translate_to_ga_label(topology.key))
            if value is None or value not in topology.values:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return SUCCESS


def after_pvc_change(pi: PodInfo, _old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterPersistentVolumeClaimChange: a claim of the pod's namespace it uses."""
    if new is None:
        return False
    meta = new.get("metadata") or {}
    if (meta.get("namespace") or "default") != pi.namespace:
        return False
    return meta.get("name") in _claim_names(pi.pod)


def after_storage_class_added(_pi: PodInfo, _old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterStorageClassAdded: a class with WaitForFirstConsumer binding."""
    return new is not None and new.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER


def after_pv_change(_pi: PodInfo, old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterPersistentVolumeChange: a new PV, or one whose zone labels changed."""
    if old is None:
        return True
    if new is None:
        return False
    return pv_topologies(old) != pv_topologies(new)
