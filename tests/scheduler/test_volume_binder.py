"""The volume binder's FindPodVolumes and AssumePodVolumes, ported from upstream's
volumebinding/binder_test.go (TestFindPodVolumesWithoutProvisioning,
TestFindPodVolumesWithProvisioning without capacity tracking, TestAssumePodVolumes) as data: the
reasons per scenario, the static bindings (claim → PV) and the claims to provision."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.volume_binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    assume_pod_volumes,
    find_pod_volumes,
    get_pod_volume_claims,
)
from scheduler.volume_builders import pod, pv, pvc, storage_class
from scheduler.volume_builders import scheduler_with as _scheduler

JSON = dict[str, Any]
KEY = "kubernetes.io/hostname"
NS = "testns"
WAIT = storage_class("wait", mode="WaitForFirstConsumer", provisioner="")
IMMEDIATE = storage_class("immediate", mode="Immediate")
WAIT_PROVISIONER = storage_class(
    "wait-provisioner", mode="WaitForFirstConsumer", provisioner="test-provisioner"
)
NO_PROVISIONER = storage_class(
    "no-provisioner", mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"
)
TOPO_MISMATCH = storage_class(
    "topomismatch",
    mode="WaitForFirstConsumer",
    provisioner="test-provisioner",
    topologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["zone1"]}]}],
)
CLASSES = [WAIT, IMMEDIATE, WAIT_PROVISIONER, NO_PROVISIONER, TOPO_MISMATCH]


def _claim(
    name: str, size: str, class_name: str, volume: str = "", bound: bool = False, **extra: Any
) -> JSON:
    return pvc(
        name, namespace=NS, storage=size, class_name=class_name, volume_name=volume, bound=bound, **extra
    )


def _pv(name: str, node: str, size: str, class_name: str = "wait", claim: str | None = None) -> JSON:
    return pv(
        name,
        storage=size,
        class_name=class_name,
        node_affinity={KEY: [node]},
        claim=(NS, claim) if claim else None,
        phase="Bound" if claim else "Available",
    )


UNBOUND = _claim("unbound-pvc", "1G", "wait")
UNBOUND_2 = _claim("unbound-pvc2", "5G", "wait")
PREBOUND = _claim("prebound-pvc", "1G", "wait", volume="pv-node1a")
BOUND = _claim("bound-pvc", "1G", "wait", volume="pv-bound", bound=True)
IMMEDIATE_UNBOUND = _claim("immediate-unbound-pvc", "1G", "immediate")
IMMEDIATE_BOUND = _claim("immediate-bound-pvc", "1G", "immediate", volume="pv-bound-immediate", bound=True)
PROVISIONED = _claim("provisioned-pvc", "1Gi", "wait-provisioner")
SELECTED_NODE = _claim(
    "provisioned-pvc2", "1Gi", "wait-provisioner", annotations={"volume.kubernetes.io/selected-node": "node1"}
)
NO_PROVISIONER_PVC = _claim("no-provisioner-pvc", "1Gi", "no-provisioner")
TOPO_MISMATCH_PVC = _claim("topo-mismatch-pvc", "1Gi", "topomismatch")

PV_NODE_1A = _pv("pv-node1a", "node1", "5G")
PV_NODE_1B = _pv("pv-node1b", "node1", "10G")
PV_NODE_2 = _pv("pv-node2", "node2", "1G")
PV_BOUND = _pv("pv-bound", "node1", "1G", claim="bound-pvc")
PV_NODE_1A_BOUND = _pv("pv-node1a", "node1", "5G", claim="unbound-pvc")
PV_BOUND_IMMEDIATE = _pv("pv-bound-immediate", "node1", "1G", "immediate", claim="immediate-bound-pvc")
PV_BOUND_IMMEDIATE_NODE_2 = _pv("pv-bound-immediate", "node2", "1G", "immediate", claim="immediate-bound-pvc")

NODE_LABELS = {KEY: "node1"}


def _run(claims: list[JSON], pvs: list[JSON]) -> tuple[Any, list[str]]:
    sched = _scheduler([], [], [*CLASSES, *claims, *pvs])
    p = pod("test-pod", namespace=NS, claims=tuple(c["metadata"]["name"] for c in claims))
    found = get_pod_volume_claims(sched.storage, p)
    if found.unbound_immediate:
        raise BinderError("pod has unbound immediate PersistentVolumeClaims")
    return find_pod_volumes(sched.storage, found, "node1", NODE_LABELS)


WITHOUT_PROVISIONING = [
    pytest.param([], [], False, [], [], id="no-volumes"),
    pytest.param([BOUND], [PV_BOUND], False, [], [], id="bound-pvc"),
    pytest.param([BOUND], [], False, [ERR_REASON_PV_NOT_EXIST], [], id="bound-pvc,pv-not-exists"),
    pytest.param([PREBOUND], [PV_NODE_1A_BOUND], True, [], [], id="prebound-pvc"),
    pytest.param(
        [UNBOUND],
        [PV_NODE_2, PV_NODE_1A, PV_NODE_1B],
        False,
        [],
        [("unbound-pvc", "pv-node1a")],
        id="unbound-pvc,pv-same-node",
    ),
    pytest.param(
        [UNBOUND], [PV_NODE_2], False, [ERR_REASON_BIND_CONFLICT], [], id="unbound-pvc,pv-different-node"
    ),
    pytest.param(
        [UNBOUND, UNBOUND_2],
        [PV_NODE_1A, PV_NODE_1B],
        False,
        [],
        [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")],
        id="two-unbound-pvcs",
    ),
    pytest.param(
        [UNBOUND_2, UNBOUND],
        [PV_NODE_1A, PV_NODE_1B],
        False,
        [],
        [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")],
        id="two-unbound-pvcs,order-by-size",
    ),
    pytest.param(
        [UNBOUND, UNBOUND_2],
        [PV_NODE_1A],
        False,
        [ERR_REASON_BIND_CONFLICT],
        [("unbound-pvc", "pv-node1a")],
        id="two-unbound-pvcs,partial-match",
    ),
    pytest.param(
        [UNBOUND, BOUND],
        [PV_BOUND, PV_NODE_1A],
        False,
        [],
        [("unbound-pvc", "pv-node1a")],
        id="one-bound,one-unbound",
    ),
    pytest.param(
        [UNBOUND, BOUND],
        [PV_BOUND, PV_NODE_2],
        False,
        [ERR_REASON_BIND_CONFLICT],
        [],
        id="one-bound,one-unbound,no-match",
    ),
    pytest.param([UNBOUND, PREBOUND], [PV_NODE_1A, PV_NODE_1B], True, [], [], id="one-prebound,one-unbound"),
    pytest.param([IMMEDIATE_BOUND], [PV_BOUND_IMMEDIATE], False, [], [], id="immediate-bound-pvc"),
    pytest.param(
        [IMMEDIATE_BOUND],
        [PV_BOUND_IMMEDIATE_NODE_2],
        False,
        [ERR_REASON_NODE_CONFLICT],
        [],
        id="immediate-bound-pvc-wrong-node",
    ),
    pytest.param([IMMEDIATE_UNBOUND], [], True, [], [], id="immediate-unbound-pvc"),
    pytest.param(
        [IMMEDIATE_UNBOUND, BOUND], [PV_BOUND], True, [], [], id="immediate-unbound-pvc,delayed-mode-bound"
    ),
    pytest.param(
        [IMMEDIATE_UNBOUND, UNBOUND], [], True, [], [], id="immediate-unbound-pvc,delayed-mode-unbound"
    ),
]


@pytest.mark.parametrize(("claims", "pvs", "fails", "reasons", "bindings"), WITHOUT_PROVISIONING)
def test_find_pod_volumes_without_provisioning(
    claims: list[JSON], pvs: list[JSON], fails: bool, reasons: list[str], bindings: list[tuple[str, str]]
) -> None:
    if fails:
        with pytest.raises(BinderError):
            _run(claims, pvs)
        return
    volumes, got = _run(claims, pvs)
    assert got == reasons
    assert [(c["metadata"]["name"], v["metadata"]["name"]) for c, v in volumes.static_bindings] == bindings


WITH_PROVISIONING = [
    pytest.param([PROVISIONED], [], [], [], ["provisioned-pvc"], id="one-provisioned"),
    pytest.param(
        [UNBOUND, PROVISIONED],
        [PV_NODE_1A],
        [],
        [("unbound-pvc", "pv-node1a")],
        ["provisioned-pvc"],
        id="two-unbound-pvcs,one-matched,one-provisioned",
    ),
    pytest.param(
        [BOUND, PROVISIONED], [PV_BOUND], [], [], ["provisioned-pvc"], id="one-bound,one-provisioned"
    ),
    pytest.param(
        [BOUND, SELECTED_NODE], [PV_BOUND], [], [], ["provisioned-pvc2"], id="one-binding,one-selected-node"
    ),
    pytest.param(
        [IMMEDIATE_BOUND, PROVISIONED],
        [PV_BOUND_IMMEDIATE],
        [],
        [],
        ["provisioned-pvc"],
        id="one-immediate-bound,one-provisioned",
    ),
    pytest.param([NO_PROVISIONER_PVC], [], [ERR_REASON_BIND_CONFLICT], [], [], id="invalid-provisioner"),
    pytest.param(
        [TOPO_MISMATCH_PVC], [], [ERR_REASON_BIND_CONFLICT], [], [], id="volume-topology-unsatisfied"
    ),
]


@pytest.mark.parametrize(("claims", "pvs", "reasons", "bindings", "provisions"), WITH_PROVISIONING)
def test_find_pod_volumes_with_provisioning(
    claims: list[JSON],
    pvs: list[JSON],
    reasons: list[str],
    bindings: list[tuple[str, str]],
    provisions: list[str],
) -> None:
    volumes, got = _run(claims, pvs)
    assert got == reasons
    assert [(c["metadata"]["name"], v["metadata"]["name"]) for c, v in volumes.static_bindings] == bindings
    assert [c["metadata"]["name"] for c in volumes.dynamic_provisions] == provisions


@pytest.mark.parametrize(
    ("claims", "pvs", "all_bound", "claim_refs"),
    [
        pytest.param([BOUND], [PV_BOUND], True, {}, id="all-bound"),
        pytest.param([UNBOUND], [PV_NODE_1A], False, {"pv-node1a": "unbound-pvc"}, id="one-binding"),
        pytest.param(
            [UNBOUND, UNBOUND_2],
            [PV_NODE_1A, PV_NODE_1B],
            False,
            {"pv-node1a": "unbound-pvc", "pv-node1b": "unbound-pvc2"},
            id="two-bindings",
        ),
    ],
)
def test_assume_pod_volumes(
    claims: list[JSON], pvs: list[JSON], all_bound: bool, claim_refs: dict[str, str]
) -> None:
    sched = _scheduler([], [], [*CLASSES, *claims, *pvs])
    p = pod("test-pod", namespace=NS, claims=tuple(c["metadata"]["name"] for c in claims))
    volumes, reasons = find_pod_volumes(
        sched.storage, get_pod_volume_claims(sched.storage, p), "node1", NODE_LABELS
    )
    assert reasons == []
    assert assume_pod_volumes(sched.storage, p, "node1", volumes) is all_bound
    assumed = {name: v["spec"]["claimRef"]["name"] for name, v in sched.storage.assumed_pvs.items()}
    assert assumed == claim_refs
    for name in claim_refs:
        assert (
            sched.storage.assumed_pvs[name]["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"]
            == "yes"
        )
