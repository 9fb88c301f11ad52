"""VolumeBinding: a pod's PersistentVolumeClaims against each node (mirrors
pkg/scheduler/framework/plugins/volumebinding/volume_binding.go; the binder is
`volume_binder`).

PreFilter rejects a pod whose claims are missing, lost or being deleted, or that has unbound
claims of Immediate binding; it skips pods without claims. Filter: a bound claim's PV must accept
the node by its node affinity (pods with claims bound to local PVs keep their node), a delayed
(WaitForFirstConsumer) claim needs a matching available PV there or dynamic provisioning allowed
there. Reserve assumes the chosen bindings so that the next pods do not take the same PVs.
Score: StorageCapacityScoring is off in 1.35, so PreScore skips it, as upstream's.

PreBind's API updates (the PV's claimRef, the claim's selected-node annotation:
`prebind_writes`) are made by the scheduler's host before the pod's binding, and the persistent
volume controller completes the binding; no provisioner runs: a pod whose claim would be
provisioned gets a NotModelled warning (`binding_warnings`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.scheduler.events import (
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Update,
)
from kubetaint.scheduler.extension_points import (
    CycleState,
    EnqueueExtensions,
    FilterBatch,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
    UsesHandle,
)
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.plugins.volume_binder import (
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    assume_pod_volumes,
    find_pod_volumes,
    get_pod_volume_claims,
    revert_assumed_pod_volumes,
)
from kubetaint.scheduler.plugins.volume_helpers import (
    SKIP,
    VolumePlugin,
    annotations_of,
    claim_name,
    ephemeral_claim_name,
    has_volumes,
    meta,
    pod_volumes,
    spec,
    volume_is_for_pod,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status
from kubetaint.scheduler.storage_listers import (
    CSI_NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
)

ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
_STATE_KEY = names.VOLUME_BINDING

Obj = Mapping[str, Any]


@dataclass
class _State:
    claims: PodVolumeClaims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = True
    has_static_bindings: bool = False
    #: the bindings Reserve assumed (for the warning and Unreserve)
    assumed: PodVolumes | None = None


class VolumeBinding(
    VolumePlugin,
    UsesHandle,
    EnqueueExtensions,
    PreFilterPlugin,
    FilterPlugin,
    FilterBatch,
    PreScorePlugin,
    ScorePlugin,
    ReservePlugin,
):
    name = names.VOLUME_BINDING

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(STORAGE_CLASS, ActionType.Add | Update), after_storage_class_change
            ),
            ClusterEventWithHint(
                ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.Add | Update), after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(PERSISTENT_VOLUME, ActionType.Add | Update)),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(CSI_NODE, ActionType.Add | Update), after_csi_node_change),
        ]

    def _pod_has_pvcs(self, pi: PodInfo) -> tuple[bool, str | None]:
        """podHasPVCs: whether the pod uses claims, and the error of the first unusable one."""
        assert self.handle is not None
        storage = self.handle.storage
        has = False
        for volume in pod_volumes(pi.pod):
            name = claim_name(volume)
            ephemeral = False
            if name is None:
                if not isinstance(volume.get("ephemeral"), Mapping):
                    continue
                name, ephemeral = ephemeral_claim_name(pi.pod, volume), True
            has = True
            pvc = storage.api_pvc(pi.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, (
                        "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                        f'"{name}"'
                    )
                return has, f'persistentvolumeclaim "{name}" not found'
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return has, (
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{spec(pvc).get("volumeName") or ""}"'
                )
            if meta(pvc).get("deletionTimestamp"):
                return has, f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral:
                problem = volume_is_for_pod(pi.pod, pvc)
                if problem is not None:
                    return has, problem
        return has, None

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not has_volumes(pi.pod):
            return SKIP
        has, problem = self._pod_has_pvcs(pi)
        if problem is not None:
            return Status(Code.UnschedulableAndUnresolvable, problem)
        if not has:
            return Status(Code.Skip)
        assert self.handle is not None
        try:
            claims = get_pod_volume_claims(self.handle.storage, pi.pod)
        except BinderError as exc:
            return Status(Code.Error, str(exc))
        if claims.unbound_immediate:
            return Status(Code.UnschedulableAndUnresolvable, ERR_UNBOUND_IMMEDIATE)
        state.data[_STATE_KEY] = _State(claims)
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        s: _State | None = state.data.get(_STATE_KEY)
        if s is None:  # (a Filter without this cycle's PreFilter: worked out now)
            status = self.pre_filter(state, pi, ())
            if not status.is_success():
                return SUCCESS if status.code == Code.Skip else status
            s = state.data[_STATE_KEY]
        assert self.handle is not None
        try:
            volumes, reasons = find_pod_volumes(self.handle.storage, s.claims, ni.name, ni.labels)
        except BinderError as exc:
            return Status(Code.Error, str(exc))
        if reasons:
            return Status(Code.UnschedulableAndUnresolvable, *reasons)
        s.by_node[ni.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return SUCCESS

    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        # no scorer: StorageCapacityScoring (alpha) is off in 1.35
        return SKIP

    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int:
        return 0

    def reserve(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        s: _State | None = state.data.get(_STATE_KEY)
        if s is None:
            return SUCCESS  # PreFilter skipped: the pod has no claims
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True
            return SUCCESS
        assert self.handle is not None
        s.all_bound = assume_pod_volumes(self.handle.storage, pi.pod, node_name, volumes)
        s.assumed = None if s.all_bound else volumes
        return SUCCESS

    def unreserve(self, state: CycleState, pi: PodInfo, node_name: str) -> None:
        s: _State | None = state.data.get(_STATE_KEY)
        if s is None or s.assumed is None:
            return
        assert self.handle is not None
        revert_assumed_pod_volumes(self.handle.storage, s.assumed)
        s.assumed = None


def prebind_writes(state: CycleState) -> list[tuple[str, dict[str, Any]]]:
    """PreBind's API updates (bindAPIUpdate) of the bindings Reserve assumed, as (resource,
    object): each chosen PV with its claimRef, each claim to provision with its
    `volume.kubernetes.io/selected-node`. The host writes them before the pod's binding."""
    s: _State | None = state.data.get(_STATE_KEY)
    if s is None or s.assumed is None:
        return []
    writes: list[tuple[str, dict[str, Any]]] = [
        ("persistentvolumes", dict(pv)) for _, pv in s.assumed.static_bindings
    ]
    writes += [("persistentvolumeclaims", dict(pvc)) for pvc in s.assumed.dynamic_provisions]
    return writes


def binding_warnings(state: CycleState, written: bool) -> list[str]:
    """What of VolumeBinding's PreBind and the controllers behind it kubetaint does not model:
    the bindings themselves when they are not written (`explain`), and always the dynamic
    provisioning of a claim (no provisioner creates its volume)."""
    s: _State | None = state.data.get(_STATE_KEY)
    if s is None or s.assumed is None:
        return []
    out: list[str] = []
    if not written:
        for pvc, pv in s.assumed.static_bindings:
            out.append(
                f"persistentvolumeclaim {meta(pvc).get('name') or ''}: not modelled (VolumeBinding PreBind): "
                f"the claim is assumed bound to persistentvolume {meta(pv).get('name') or ''}; the binding "
                "is not written"
            )
    for pvc in s.assumed.dynamic_provisions:
        node = annotations_of(pvc).get("volume.kubernetes.io/selected-node", "")
        out.append(
            f"persistentvolumeclaim {meta(pvc).get('name') or ''}: not modelled (dynamic provisioning): a "
            f"volume would be provisioned for node {node}; none is created and the claim stays Pending"
        )
    return out


def after_pvc_change(pi: PodInfo, _old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterPersistentVolumeClaimChange: a claim of the pod's namespace that one of
    its volumes uses."""
    if new is None:
        return False
    m = meta(new)
    if (m.get("namespace") or "default") != pi.namespace:
        return False
    for volume in pod_volumes(pi.pod):
        name = claim_name(volume)
        if name is None and isinstance(volume.get("ephemeral"), Mapping):
            name = ephemeral_claim_name(pi.pod, volume)
        if name is not None and name == m.get("name"):
            return True
    return False


def after_storage_class_change(_pi: PodInfo, old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterStorageClassChange: a new class, or a change of allowedTopologies."""
    if old is None:
        return True
    if new is None:
        return False
    return bool((old.get("allowedTopologies") or []) != (new.get("allowedTopologies") or []))


def after_csi_node_change(_pi: PodInfo, old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterCSINodeChange: a new CSINode, or a change of its migrated plugins."""
    if old is None:
        return True
    if new is None:
        return False
    return annotations_of(old).get(MIGRATED_PLUGINS_ANNOTATION) != annotations_of(new).get(
        MIGRATED_PLUGINS_ANNOTATION
    )
