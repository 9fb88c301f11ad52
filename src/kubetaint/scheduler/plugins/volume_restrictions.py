"""VolumeRestrictions: the legacy disk conflicts (GCE PD, AWS EBS, Ceph RBD, iSCSI) with the pods
on the node, and the ReadWriteOncePod access mode (mirrors pkg/scheduler/framework/plugins/
volumerestrictions/volume_restrictions.go).

A pod whose claims have the ReadWriteOncePod access mode is Unschedulable on every node while a
scheduled pod uses one of them (upstream counts the snapshot's users once in PreFilter and adjusts
the count as preemption removes and adds pods; here the count of the node being judged is taken
from its pods, which preemption's dry runs change)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.scheduler.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint
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
    READ_WRITE_ONCE_POD,
    SKIP,
    VolumePlugin,
    claim_name,
    has_volumes,
    pod_volumes,
)
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Code, Status
from kubetaint.scheduler.storage_listers import PERSISTENT_VOLUME_CLAIM

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
_STATE_KEY = "PreFilter" + names.VOLUME_RESTRICTIONS
_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")

Obj = Mapping[str, Any]


def _source(volume: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    value = volume.get(name)
    return value if isinstance(value, Mapping) else None


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    return any(_source(volume, s) is not None for s in _CONFLICT_SOURCES)


def _have_overlap(a: Any, b: Any) -> bool:
    first = set(a) if isinstance(a, list) else set()
    return any(v in first for v in (b if isinstance(b, list) else ()))


def _both_read_only(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(a.get("readOnly") and b.get("readOnly"))


def _same_gce(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same GCE disk, not read-only in both."""
    return a.get("pdName", "") == b.get("pdName", "") and not _both_read_only(a, b)


def _same_aws(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same EBS volume ID."""
    return bool(a.get("volumeID", "") == b.get("volumeID", ""))


def _same_iscsi(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same IQN, not read-only in both."""
    return a.get("iqn", "") == b.get("iqn", "") and not _both_read_only(a, b)


def _same_rbd(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """A shared Ceph monitor, the same pool and image, not read-only in both."""
    return (
        _have_overlap(a.get("monitors"), b.get("monitors"))
        and a.get("pool", "rbd") == b.get("pool", "rbd")
        and a.get("image", "") == b.get("image", "")
        and not _both_read_only(a, b)
    )


_SAME = (
    ("gcePersistentDisk", _same_gce),
    ("awsElasticBlockStore", _same_aws),
    ("iscsi", _same_iscsi),
    ("rbd", _same_rbd),
)


def is_volume_conflict(volume: Mapping[str, Any], pod: Obj) -> bool:
    """isVolumeConflict: `volume` against each of the existing pod's volumes."""
    for existing in pod_volumes(pod):
        for source, same in _SAME:
            mine, theirs = _source(volume, source), _source(existing, source)
            if mine is not None and theirs is not None and same(mine, theirs):
                return True
    return False


def satisfy_volume_conflicts(pod: Obj, pods: Sequence[Obj]) -> bool:
    """satisfyVolumeConflicts: none of the pod's conflict-checked volumes clashes with `pods`."""
    for volume in pod_volumes(pod):
        if not needs_restrictions_check(volume):
            continue
        for existing in pods:
            if is_volume_conflict(volume, existing):
                return False
    return True


def _uses(pod: Obj, namespace: str, claims: frozenset[str]) -> int:
    """How many of the pod's claim volumes name one of `claims` in `namespace`."""
    if ((pod.get("metadata") or {}).get("namespace") or "default") != namespace:
        return 0
    return sum(1 for v in pod_volumes(pod) if claim_name(v) in claims)


@dataclass
class _State:
    """preFilterState: the pod's ReadWriteOncePod claims and the scheduled pods that use them
    (in all, and per node as the cache has them)."""

    namespace: str
    claims: frozenset[str]
    conflicting: int
    per_node: dict[str, int]
    check_disks: bool


class VolumeRestrictions(
    VolumePlugin, UsesHandle, EnqueueExtensions, PreFilterPlugin, FilterPlugin, FilterBatch
):
    name = names.VOLUME_RESTRICTIONS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(POD, ActionType.Delete), after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(PERSISTENT_VOLUME_CLAIM, ActionType.Add), after_pvc_added),
        ]

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status:
        if not has_volumes(pi.pod):
            return SKIP
        volumes = pod_volumes(pi.pod)
        assert self.handle is not None
        storage = self.handle.storage
        check_disks = any(needs_restrictions_check(v) for v in volumes)
        claims: set[str] = set()
        for volume in volumes:
            name = claim_name(volume)
            if name is None:
                continue
            pvc = storage.api_pvc(pi.namespace, name)
            if pvc is None:
                return Status(Code.UnschedulableAndUnresolvable, f'persistentvolumeclaim "{name}" not found')
            modes = (pvc.get("spec") or {}).get("accessModes") or ()
            if READ_WRITE_ONCE_POD in modes:
                claims.add(name)
        per_node: dict[str, int] = {}
        used: set[str] = set()
        if claims:
            frozen = frozenset(claims)
            for ni in self.handle.cache.node_list():
                for p in ni.pods.values():
                    if _uses(p.pod, pi.namespace, frozen):
                        per_node[ni.name] = per_node.get(ni.name, 0) + _uses(p.pod, pi.namespace, frozen)
                        used.update(n for n in map(claim_name, pod_volumes(p.pod)) if n in frozen)
        # IsPVCUsedByPods: each claim a scheduled pod uses counts once
        conflicting = len(used)
        if not check_disks and conflicting == 0:
            return Status(Code.Skip)
        state.data[_STATE_KEY] = _State(pi.namespace, frozenset(claims), conflicting, per_node, check_disks)
        return SUCCESS

    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status:
        s: _State | None = state.data.get(_STATE_KEY)
        if s is None:  # (a Filter without this cycle's PreFilter: worked out now)
            status = self.pre_filter(state, pi, ())
            if not status.is_success():
                return SUCCESS if status.code == Code.Skip else status
            s = state.data[_STATE_KEY]
        if s.check_disks and not satisfy_volume_conflicts(pi.pod, [p.pod for p in ni.pods.values()]):
            return Status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
        if s.claims:
            # AddPod/RemovePod: the count with this node's pods as the node (or preemption's copy
            # of it, without its victims) has them
            here = sum(_uses(p.pod, s.namespace, s.claims) for p in ni.pods.values())
            if s.conflicting - s.per_node.get(ni.name, 0) + here > 0:
                return Status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return SUCCESS


def after_pod_deleted(pi: PodInfo, old: Obj | None, _new: Obj | None) -> bool:
    """isSchedulableAfterPodDeleted: a deleted pod of the namespace whose disks conflicted with the
    pending pod's, or that used one of its claims."""
    if old is None:
        return False
    if ((old.get("metadata") or {}).get("namespace") or "default") != pi.namespace:
        return False
    if not satisfy_volume_conflicts(pi.pod, [old]):
        return True
    claims = {claim_name(v) for v in pod_volumes(pi.pod)} - {None}
    return any(claim_name(v) in claims for v in pod_volumes(old))


def after_pvc_added(pi: PodInfo, _old: Obj | None, new: Obj | None) -> bool:
    """isSchedulableAfterPersistentVolumeClaimAdded: a claim of the pod's namespace it uses."""
    if new is None:
        return False
    meta = new.get("metadata") or {}
    if (meta.get("namespace") or "default") != pi.namespace:
        return False
    return any(claim_name(v) == meta.get("name") for v in pod_volumes(pi.pod))
