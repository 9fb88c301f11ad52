"""VolumeRestrictions, ported from upstream's volumerestrictions/volume_restrictions_test.go
(TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts,
TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted,
Test_isSchedulableAfterPersistentVolumeClaimChange) as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    after_pod_deleted,
    after_pvc_added,
)
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.status import Code
from scheduler.volume_builders import node, pod, pvc, run_plugin, scheduler_with

PLUGIN = "VolumeRestrictions"
JSON = dict[str, Any]

GCE = {"name": "v", "gcePersistentDisk": {"pdName": "foo"}}
GCE_2 = {"name": "v", "gcePersistentDisk": {"pdName": "bar"}}
AWS = {"name": "v", "awsElasticBlockStore": {"volumeID": "foo"}}
AWS_2 = {"name": "v", "awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"name": "v", "rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_2 = {"name": "v", "rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {
    "name": "v",
    "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0},
}
ISCSI_2 = {
    "name": "v",
    "iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0},
}
NO_RESTRICTION = {"name": "volume with no restriction", "emptyDir": {}}


def _disk_cases(kind: str, same: JSON, other: JSON) -> list[Any]:
    return [
        pytest.param(pod("p"), [], Code.Skip, None, id=f"{kind}: nothing"),
        pytest.param(pod("p"), [pod("e", same, node_name="n")], Code.Skip, None, id=f"{kind}: one state"),
        pytest.param(
            pod("p", same),
            [pod("e", same, node_name="n")],
            Code.Success,
            ERR_REASON_DISK_CONFLICT,
            id=f"{kind}: same state",
        ),
        pytest.param(
            pod("p", other),
            [pod("e", same, node_name="n")],
            Code.Success,
            None,
            id=f"{kind}: different state",
        ),
    ]


DISK_CASES = [
    *_disk_cases("GCE", GCE, GCE_2),
    pytest.param(
        pod("p", NO_RESTRICTION),
        [],
        Code.Skip,
        None,
        id="GCE: pod with a volume that doesn't have restrictions",
    ),
    *_disk_cases("AWS", AWS, AWS_2),
    *_disk_cases("RBD", RBD, RBD_2),
    *_disk_cases("ISCSI", ISCSI, ISCSI_2),
]


@pytest.mark.parametrize(("p", "existing", "pre_filter", "reason"), DISK_CASES)
def test_disk_conflicts(p: JSON, existing: list[JSON], pre_filter: Code, reason: str | None) -> None:
    sched = scheduler_with([node("n")], existing)
    pre, verdicts = run_plugin(sched, PLUGIN, p)
    assert pre.code == pre_filter
    if pre_filter == Code.Success:
        status = verdicts["n"]
        if reason is None:
            assert status.is_success()
        else:
            assert status.code == Code.Unschedulable and status.reasons == (reason,)


RWOP_1 = pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",))
RWOP_2 = pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",))
RWX = pvc("claim-with-rwx", modes=("ReadWriteMany",))
WITH_ONE_PVC = pod("pod-with-one-pvc", claims=("claim-with-rwop-1",), node_name="node-1")
WITH_TWO_PVCS = pod(
    "pod-with-two-pvcs", claims=("claim-with-rwop-1", "claim-with-rwop-2"), node_name="node-1"
)
ONE_CONFLICT = pod("pod-with-one-conflict", claims=("claim-with-rwop-1",))
TWO_CONFLICTS = pod("pod-with-two-conflicts", claims=("claim-with-rwop-1", "claim-with-rwop-2"))
WITH_RWX = pod("pod-with-rwx", claims=("claim-with-rwx",), node_name="node-1")

ACCESS_MODE_CASES = [
    pytest.param(pod("p"), [], [], Code.Skip, "", None, id="nothing"),
    pytest.param(
        pod("pod-with-one-pvc", claims=("claim-with-rwop-1",)),
        [],
        [],
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "claim-with-rwop-1" not found',
        None,
        id="failed to get PVC",
    ),
    pytest.param(
        pod("pod-with-one-pvc", claims=("claim-with-rwop-1",)),
        [WITH_RWX],
        [RWOP_1, RWX],
        Code.Skip,
        "",
        None,
        id="no access mode conflict",
    ),
    pytest.param(
        ONE_CONFLICT,
        [WITH_ONE_PVC, WITH_RWX],
        [RWOP_1, RWX],
        Code.Success,
        "",
        ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
        id="access mode conflict, unschedulable",
    ),
    pytest.param(
        TWO_CONFLICTS,
        [WITH_TWO_PVCS, WITH_RWX],
        [RWOP_1, RWOP_2, RWX],
        Code.Success,
        "",
        ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
        id="two conflicts, unschedulable",
    ),
]


@pytest.mark.parametrize(("p", "existing", "claims", "pre_filter", "message", "reason"), ACCESS_MODE_CASES)
def test_access_mode_conflicts(
    p: JSON, existing: list[JSON], claims: list[JSON], pre_filter: Code, message: str, reason: str | None
) -> None:
    sched = scheduler_with([node("node-1")], existing, claims)
    pre, verdicts = run_plugin(sched, PLUGIN, p)
    assert pre.code == pre_filter
    if message:
        assert pre.message() == message
    if pre_filter == Code.Success:
        status = verdicts["node-1"]
        assert status.code == Code.Unschedulable and status.reasons == (reason,)


def test_a_read_write_once_pod_conflict_goes_when_preemption_removes_the_user() -> None:
    """RemovePod: the dry run's copy of the node without the claim's user lets the pod in."""
    sched = scheduler_with([node("node-1")], [WITH_ONE_PVC], [RWOP_1])
    pi = make_pod_info(ONE_CONFLICT)
    pl = sched.framework_for(pi).plugins[PLUGIN]
    state = CycleState()
    assert pl.pre_filter(state, pi, sched.cache.node_list()).is_success()
    copy = sched.cache.nodes["node-1"].clone()
    assert not pl.filter(state, pi, copy).is_success()
    copy.remove_pod(next(iter(copy.pods.values())))
    assert pl.filter(state, pi, copy).is_success()


POD_DELETED_CASES = [
    pytest.param(pod("p", GCE), pod("d", GCE), True, id="queue-new-object-gcedisk-conflict"),
    pytest.param(pod("p", GCE), pod("d", GCE_2), False, id="skip-new-object-gcedisk-no-conflict"),
    pytest.param(pod("p", AWS), pod("d", AWS), True, id="queue-new-object-awsdisk-conflict"),
    pytest.param(pod("p", AWS), pod("d", AWS_2), False, id="skip-new-object-awsdisk-no-conflict"),
    pytest.param(pod("p", RBD), pod("d", RBD), True, id="queue-new-object-rbddisk-conflict"),
    pytest.param(pod("p", RBD), pod("d", RBD_2), False, id="skip-new-object-rbddisk-no-conflict"),
    pytest.param(pod("p", ISCSI), pod("d", ISCSI), True, id="queue-new-object-iscsidisk-conflict"),
    pytest.param(pod("p", ISCSI), pod("d", ISCSI_2), False, id="skip-new-object-iscsidisk-no-conflict"),
    pytest.param(
        pod("pod1", claims=("claim-rwop",)),
        pod("pod2", claims=("claim-rwop",)),
        True,
        id="queue-has-same-claim",
    ),
    pytest.param(
        pod("pod1", claims=("claim-1-rwop",)),
        pod("pod2", claims=("claim-2-rwop",)),
        False,
        id="skip-no-same-claim",
    ),
]


@pytest.mark.parametrize(("p", "deleted", "queued"), POD_DELETED_CASES)
def test_hint_after_pod_deleted(p: JSON, deleted: JSON, queued: bool) -> None:
    assert after_pod_deleted(make_pod_info(p), deleted, None) is queued


PVC_1 = pvc("claim-with-rwx-1", modes=("ReadWriteMany",))
PVC_2 = pvc("claim-with-rwx-2", modes=("ReadWriteMany",))
PVC_ADDED_CASES = [
    pytest.param(
        pod("pod-with-two-pvcs", claims=("claim-with-rwx-1", "claim-with-rwx-2")),
        PVC_1,
        True,
        id="queue-new-object-pvc-belong-pod",
    ),
    pytest.param(
        pod("pod-with-one-pvc", claims=("claim-with-rwx-1",)), PVC_2, False, id="skip-new-object-unused"
    ),
    pytest.param(
        pod("pod-with-one-pvc", claims=("claim-with-rwx-1",), namespace="kube-system"),
        PVC_1,
        False,
        id="skip-new-object-namespace-not-equal-pod",
    ),
]


@pytest.mark.parametrize(("p", "added", "queued"), PVC_ADDED_CASES)
def test_hint_after_pvc_added(p: JSON, added: JSON, queued: bool) -> None:
    assert after_pvc_added(make_pod_info(p), None, added) is queued
