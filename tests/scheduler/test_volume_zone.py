"""VolumeZone, ported from upstream's volumezone/volume_zone_test.go (TestSingleZone, TestMultiZone,
TestWithBinding and the queueing hint tables) as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.volume_zone import (
    ERR_REASON_CONFLICT,
    after_pv_change,
    after_pvc_change,
    after_storage_class_added,
)
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.status import Code
from scheduler.volume_builders import node, pod, pv, pvc, run_plugin, scheduler_with, storage_class

PLUGIN = "VolumeZone"
JSON = dict[str, Any]
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

VOLUMES = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pv("Vol_Multi_1", labels={BETA_ZONE: "us-west1-a__us-west1-b"}),
    pv("Vol_Multi_2", labels={ZONE: "us-west1-a__us-west1-b"}),
]
CLAIMS = [
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
    pvc("PVC_Multi_1", volume_name="Vol_Multi_1"),
    pvc("PVC_Multi_2", volume_name="Vol_Multi_2"),
    pvc("PVC_NoSC", class_name=""),
    pvc("PVC_EmptySC", class_name="Class_0"),
    pvc("PVC_WaitSC", class_name="Class_Wait"),
    pvc("PVC_ImmediateSC", class_name="Class_Immediate"),
]
CLASSES = [
    storage_class("Class_0", mode=None),
    storage_class("Class_Wait", mode="WaitForFirstConsumer"),
    storage_class("Class_Immediate", mode="Immediate"),
]

ZONE_CASES = [
    pytest.param(pod("p"), {BETA_ZONE: "us-west1-a"}, Code.Skip, "", id="pod without volume"),
    pytest.param(pod("p", claims=("PVC_1",)), {}, Code.Success, "", id="node without labels"),
    pytest.param(
        pod("p", claims=("PVC_1",)),
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        Code.Success,
        "",
        id="beta zone label matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_2",)),
        {BETA_REGION: "us-west1", "uselessLabel": "none"},
        Code.Success,
        "",
        id="beta region label matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_2",)),
        {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="beta region label doesn't match",
    ),
    pytest.param(
        pod("p", claims=("PVC_1",)),
        {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="beta zone label doesn't match",
    ),
    pytest.param(
        pod("p", claims=("PVC_Stable_1",)),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        Code.Success,
        "",
        id="zone label matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_Stable_2",)),
        {REGION: "us-west1", "uselessLabel": "none"},
        Code.Success,
        "",
        id="region label matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_Stable_2",)),
        {REGION: "no_us-west1", "uselessLabel": "none"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="region label doesn't match",
    ),
    pytest.param(
        pod("p", claims=("PVC_Stable_1",)),
        {ZONE: "no_us-west1-a", "uselessLabel": "none"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="zone label doesn't match",
    ),
    pytest.param(
        pod("p", claims=("PVC_Stable_3",)),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="pv with zone and region, node with only zone",
    ),
    pytest.param(
        pod("p", claims=("PVC_1",)),
        {ZONE: "us-west1-a", "uselessLabel": "none"},
        Code.Success,
        "",
        id="pv with beta zone label, node with ga zone label",
    ),
    pytest.param(
        pod("p", claims=("PVC_Multi_1",)),
        {BETA_ZONE: "us-west1-b"},
        Code.Success,
        "",
        id="multi-zone beta label matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_Multi_2",)),
        {ZONE: "us-west1-c"},
        Code.Success,
        ERR_REASON_CONFLICT,
        id="multi-zone label doesn't match",
    ),
]


@pytest.mark.parametrize(("p", "labels", "pre_filter", "reason"), ZONE_CASES)
def test_zone(p: JSON, labels: dict[str, str], pre_filter: Code, reason: str) -> None:
    sched = scheduler_with([node("host1", labels)], [], [*VOLUMES, *CLAIMS, *CLASSES])
    pre, verdicts = run_plugin(sched, PLUGIN, p)
    assert pre.code == pre_filter
    if pre_filter == Code.Success:
        status = verdicts["host1"]
        if reason:
            assert status.code == Code.UnschedulableAndUnresolvable and status.reasons == (reason,)
        else:
            assert status.is_success()


BINDING_CASES = [
    pytest.param(
        pod("p", claims=("PVC_NoSC",)),
        "PersistentVolumeClaim had no pv name and storageClass name",
        id="label zone failure domain matched",
    ),
    pytest.param(
        pod("p", claims=("PVC_EmptySC",)),
        'VolumeBindingMode not set for StorageClass "Class_0"',
        id="unbound volume empty storage class",
    ),
    pytest.param(pod("p", claims=("PVC_WaitSC",)), "", id="unbound volume wait binding mode"),
    pytest.param(
        pod("p", claims=("PVC_ImmediateSC",)),
        "PersistentVolume had no name",
        id="unbound volume immediate binding mode",
    ),
    pytest.param(
        pod("p", claims=("PVC_4",)), 'persistentvolume "Vol_not_exist" not found', id="volume not exist"
    ),
    pytest.param(
        pod("p", claims=("PVC_NoSuch",)), 'persistentvolumeclaim "PVC_NoSuch" not found', id="claim not exist"
    ),
]


@pytest.mark.parametrize(("p", "message"), BINDING_CASES)
def test_with_binding(p: JSON, message: str) -> None:
    """TestWithBinding: a claim whose PV cannot be told (an unbound WaitForFirstConsumer claim is
    left to VolumeBinding: the plugin skips)."""
    sched = scheduler_with([node("host1", {BETA_ZONE: "us-west1-a"})], [], [*VOLUMES, *CLAIMS, *CLASSES])
    pre, _ = run_plugin(sched, PLUGIN, p)
    if message:
        assert pre.code == Code.UnschedulableAndUnresolvable and pre.message() == message
    else:
        assert pre.code == Code.Skip


@pytest.mark.parametrize(
    ("p", "claim", "queued"),
    [
        pytest.param(
            pod("p", claims=("claim-1",)), pvc("claim-1"), True, id="pvc-was-added-and-referenced-by-pod"
        ),
        pytest.param(pod("p", claims=("claim-1",)), pvc("claim-2"), False, id="pvc-irrelevant-to-pod"),
        pytest.param(
            pod("p", claims=("claim-1",)),
            pvc("claim-1", namespace="other"),
            False,
            id="pvc-in-another-namespace",
        ),
    ],
)
def test_hint_after_pvc_change(p: JSON, claim: JSON, queued: bool) -> None:
    assert after_pvc_change(make_pod_info(p), None, claim) is queued


@pytest.mark.parametrize(
    ("added", "queued"),
    [
        pytest.param(
            storage_class("sc", mode="WaitForFirstConsumer"), True, id="sc-with-wait-for-first-consumer"
        ),
        pytest.param(storage_class("sc", mode="Immediate"), False, id="sc-with-immediate"),
        pytest.param(storage_class("sc", mode=None), False, id="sc-without-binding-mode"),
    ],
)
def test_hint_after_storage_class_added(added: JSON, queued: bool) -> None:
    assert after_storage_class_added(make_pod_info(pod("p")), None, added) is queued


@pytest.mark.parametrize(
    ("old", "new", "queued"),
    [
        pytest.param(None, pv("v", labels={ZONE: "a"}), True, id="pv-was-created"),
        pytest.param(
            pv("v", labels={ZONE: "a"}), pv("v", labels={ZONE: "b"}), True, id="pv-zone-label-updated"
        ),
        pytest.param(
            pv("v", labels={ZONE: "a"}),
            pv("v", labels={ZONE: "a", "other": "x"}),
            False,
            id="pv-updated-without-topology-change",
        ),
    ],
)
def test_hint_after_pv_change(old: JSON | None, new: JSON, queued: bool) -> None:
    assert after_pv_change(make_pod_info(pod("p")), old, new) is queued
