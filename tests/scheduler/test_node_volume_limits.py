"""NodeVolumeLimits, ported from upstream's nodevolumelimits/csi_test.go (TestCSILimits: limits from
CSINode and from the node's allocatable, volumes shared between pods counted once, claims not yet
bound counted by their class's provisioner, missing claims; TestCSILimitsQHint,
TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedPodQHint) as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.node_volume_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    after_csi_node_updated,
    after_pod_deleted,
    after_pvc_added,
    csi_attach_limit_key,
)
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.status import Code
from scheduler.volume_builders import csi_node, node, pod, pv, pvc, run_plugin, scheduler_with, storage_class

PLUGIN = "NodeVolumeLimits"
JSON = dict[str, Any]
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def _bound(name: str, driver: str, handle: str) -> list[JSON]:
    """A claim bound to a CSI PV of `driver`."""
    return [
        pvc(name, volume_name=f"pv-{name}", bound=True),
        pv(f"pv-{name}", csi=(driver, handle), claim=("default", name), phase="Bound"),
    ]


OBJECTS = [
    *_bound("csi-ebs-0", EBS, "vol-0"),
    *_bound("csi-ebs-1", EBS, "vol-1"),
    *_bound("csi-ebs-2", EBS, "vol-2"),
    *_bound("csi-gce-0", GCE, "gce-0"),
    pvc("unbound-ebs", class_name="ebs-sc"),
    storage_class("ebs-sc", mode="WaitForFirstConsumer", provisioner=EBS),
]

CASES = [
    pytest.param(pod("p"), [], {"ebs_csi_aws_com": 2}, None, Code.Skip, "", id="pod without claims skips"),
    pytest.param(
        pod("p", claims=("csi-ebs-0",)),
        [pod("e", claims=("csi-ebs-1",), node_name="n")],
        {"ebs_csi_aws_com": 2},
        None,
        Code.Success,
        "",
        id="fits when limits are bigger than volumes",
    ),
    pytest.param(
        pod("p", claims=("csi-ebs-0",)),
        [pod("e", claims=("csi-ebs-1", "csi-ebs-2"), node_name="n")],
        {"ebs_csi_aws_com": 2},
        None,
        Code.Unschedulable,
        ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
        id="doesn't when node volume limit <= pods CSI volume",
    ),
    pytest.param(
        pod("p", claims=("csi-ebs-1",)),
        [pod("e", claims=("csi-ebs-1",), node_name="n")],
        {"ebs_csi_aws_com": 1},
        None,
        Code.Success,
        "",
        id="volume used by another pod on the node counts once",
    ),
    pytest.param(
        pod("p", claims=("csi-ebs-0",)),
        [pod("e", claims=("csi-ebs-1", "csi-ebs-2"), node_name="n")],
        None,
        None,
        Code.Success,
        "",
        id="should fit without a CSINode",
    ),
    pytest.param(
        pod("p", claims=("csi-gce-0",)),
        [pod("e", claims=("csi-ebs-1", "csi-ebs-2"), node_name="n")],
        {"ebs_csi_aws_com": 2},
        None,
        Code.Success,
        "",
        id="fits when the limit is another driver's",
    ),
    pytest.param(
        pod("p", claims=("unbound-ebs",)),
        [pod("e", claims=("csi-ebs-1",), node_name="n")],
        {"ebs_csi_aws_com": 1},
        None,
        Code.Unschedulable,
        ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
        id="unbound claim counted by its class's provisioner",
    ),
    pytest.param(
        pod("p", claims=("missing",)),
        [],
        {"ebs_csi_aws_com": 1},
        None,
        Code.UnschedulableAndUnresolvable,
        'looking up PVC default/missing: persistentvolumeclaim "missing" not found',
        id="missing claim",
    ),
    pytest.param(
        pod("p", claims=("csi-ebs-0",)),
        [pod("e", claims=("csi-ebs-1",), node_name="n")],
        None,
        {csi_attach_limit_key(EBS): "1"},
        Code.Unschedulable,
        ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
        id="limit from the node's allocatable",
    ),
    pytest.param(
        pod("p", claims=("csi-ebs-0",)),
        [pod("e", claims=("csi-ebs-1",), node_name="n")],
        {"ebs_csi_aws_com": 2},
        {csi_attach_limit_key(EBS): "1"},
        Code.Success,
        "",
        id="the CSINode's count overrides the node's allocatable",
    ),
]


@pytest.mark.parametrize(("p", "existing", "limits", "allocatable", "code", "reason"), CASES)
def test_csi_limits(
    p: JSON,
    existing: list[JSON],
    limits: dict[str, int] | None,
    allocatable: dict[str, str] | None,
    code: Code,
    reason: str,
) -> None:
    objects = list(OBJECTS)
    if limits is not None:
        objects.append(csi_node("n", **limits))
    sched = scheduler_with([node("n", allocatable=allocatable)], existing, objects)
    pre, verdicts = run_plugin(sched, PLUGIN, p)
    if code == Code.Skip:
        assert pre.code == Code.Skip
        return
    assert pre.is_success()
    status = verdicts["n"]
    assert status.code == code, status
    if reason:
        assert status.message() == reason


def test_attach_limit_key_of_a_long_driver_name_is_hashed() -> None:
    """GetCSIAttachLimitKey: 23 characters of the name and 16 of its SHA-1."""
    key = csi_attach_limit_key("a" * 50)
    assert (
        key.startswith("attachable-volumes-csi-" + "a" * 23)
        and len(key) == len("attachable-volumes-csi-") + 39
    )


@pytest.mark.parametrize(
    ("p", "added", "queued"),
    [
        pytest.param(pod("p", claims=("pvc1",)), pvc("pvc1"), True, id="a pvc the pod uses was added"),
        pytest.param(pod("p", claims=("pvc1",)), pvc("pvc2"), False, id="an unrelated pvc was added"),
        pytest.param(
            pod("p", claims=("pvc1",)), pvc("pvc1", namespace="ns2"), False, id="a pvc of another namespace"
        ),
        pytest.param(
            pod("p", {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}),
            pvc("p-eph"),
            True,
            id="the ephemeral volume's claim was added",
        ),
    ],
)
def test_hint_after_pvc_added(p: JSON, added: JSON, queued: bool) -> None:
    assert after_pvc_added(make_pod_info(p), None, added) is queued


@pytest.mark.parametrize(
    ("deleted", "queued"),
    [
        pytest.param(pod("d", claims=("pvc1",), node_name="n"), True, id="a bound pod with a pvc"),
        pytest.param(pod("d", claims=("pvc1",)), False, id="an unbound pod"),
        pytest.param(pod("d", node_name="n"), False, id="a pod without volumes"),
        pytest.param(
            pod("d", {"name": "e", "emptyDir": {}}, node_name="n"), False, id="a pod without claims"
        ),
    ],
)
def test_hint_after_pod_deleted(deleted: JSON, queued: bool) -> None:
    assert after_pod_deleted(make_pod_info(pod("p", claims=("pvc1",))), deleted, None) is queued


@pytest.mark.parametrize(
    ("old", "new", "queued"),
    [
        pytest.param(
            csi_node("n", ebs_csi_aws_com=1), csi_node("n", ebs_csi_aws_com=2), True, id="a count grew"
        ),
        pytest.param(
            csi_node("n", ebs_csi_aws_com=2), csi_node("n", ebs_csi_aws_com=1), False, id="a count shrank"
        ),
        pytest.param(
            csi_node("n", ebs_csi_aws_com=2), csi_node("n", ebs_csi_aws_com=2), False, id="no change"
        ),
        pytest.param(
            csi_node("n", ebs_csi_aws_com=2),
            csi_node("n", ebs_csi_aws_com=2, pd_csi_storage_gke_io=1),
            True,
            id="a driver with a count appeared",
        ),
    ],
)
def test_hint_after_csi_node_updated(old: JSON, new: JSON, queued: bool) -> None:
    assert after_csi_node_updated(make_pod_info(pod("p", claims=("pvc1",))), old, new) is queued
