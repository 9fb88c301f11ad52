"""VolumeBinding, ported from upstream's volumebinding/volume_binding_test.go (TestVolumeBinding's
PreFilter and Filter statuses) and binder_test.go (FindPodVolumes: static binding, provisioning,
allowed topologies, selected node), as data; plus the cycle: a pod whose claim is bound to a
local PV keeps to its node, Reserve keeps a chosen PV from the next pod, the hints."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.plugins.volume_binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
)
from kubetaint.scheduler.plugins.volume_binding import (
    ERR_UNBOUND_IMMEDIATE,
    after_csi_node_change,
    after_pvc_change,
    after_storage_class_change,
)
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.status import Code
from scheduler.volume_builders import node, pod, pv, pvc, run_plugin, scheduler_with, storage_class

PLUGIN = "VolumeBinding"
JSON = dict[str, Any]
WAIT = storage_class("wait-sc", mode="WaitForFirstConsumer", provisioner="")
IMMEDIATE = storage_class("immediate-sc", mode="Immediate")
PROVISIONING = storage_class("provisioning-sc", mode="WaitForFirstConsumer", provisioner="csi.example.com")
TOPOLOGY = storage_class(
    "topology-sc",
    mode="WaitForFirstConsumer",
    provisioner="csi.example.com",
    topologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["zone-a"]}]}],
)
CLASSES = [WAIT, IMMEDIATE, PROVISIONING, TOPOLOGY]

CASES = [
    pytest.param(pod("pod-a"), [], Code.Skip, "", "", id="pod has not pvcs"),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", volume_name="pv-a", bound=True), pv("pv-a", claim=("default", "pvc-a"), phase="Bound")],
        Code.Success,
        "",
        "",
        id="all bound",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [],
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "pvc-a" not found',
        "",
        id="PVC does not exist",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a", "pvc-b")),
        [pvc("pvc-a", volume_name="pv-a", bound=True), pv("pv-a", claim=("default", "pvc-a"), phase="Bound")],
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "pvc-b" not found',
        "",
        id="Part of PVCs do not exist",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="immediate-sc")],
        Code.UnschedulableAndUnresolvable,
        ERR_UNBOUND_IMMEDIATE,
        "",
        id="immediate claims not bound",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="wait-sc")],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="unbound claims no matches",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a", "pvc-b")),
        [
            pvc("pvc-a", volume_name="pv-a", bound=True),
            pv("pv-a", claim=("default", "pvc-a"), phase="Bound", node_affinity={"foo": ["barbar"]}),
            pvc("pvc-b", class_name="wait-sc"),
        ],
        Code.Success,
        "",
        f"{ERR_REASON_NODE_CONFLICT}, {ERR_REASON_BIND_CONFLICT}",
        id="bound and unbound unsatisfied",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", volume_name="pv-a", bound=True)],
        Code.Success,
        "",
        ERR_REASON_PV_NOT_EXIST,
        id="pv not found",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", volume_name="pv-a", bound=True, phase="Lost")],
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',
        "",
        id="pv not found claim lost",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", volume_name="pv-a", bound=True, deleting=True)],
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "pvc-a" is being deleted',
        "",
        id="claim being deleted",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="wait-sc", storage="5Gi"), pv("pv-a", class_name="wait-sc", storage="10Gi")],
        Code.Success,
        "",
        "",
        id="unbound claim matches an available PV",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [
            pvc("pvc-a", class_name="wait-sc", storage="50Gi"),
            pv("pv-a", class_name="wait-sc", storage="10Gi"),
        ],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="unbound claim larger than every PV",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [
            pvc("pvc-a", class_name="wait-sc", modes=("ReadWriteMany",)),
            pv("pv-a", class_name="wait-sc", modes=("ReadWriteOnce",)),
        ],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="unbound claim whose access modes no PV offers",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [
            pvc("pvc-a", class_name="wait-sc", selector={"matchLabels": {"disk": "ssd"}}),
            pv("pv-a", class_name="wait-sc", labels={"disk": "hdd"}),
        ],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="unbound claim whose selector no PV matches",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="wait-sc"), pv("pv-a", class_name="wait-sc", claim=("default", "other"))],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="unbound claim and a PV claimed by another",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="provisioning-sc")],
        Code.Success,
        "",
        "",
        id="unbound claim provisioned dynamically",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [pvc("pvc-a", class_name="topology-sc")],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="provisioning not allowed in the node's topology",
    ),
    pytest.param(
        pod("pod-a", claims=("pvc-a",)),
        [
            pvc(
                "pvc-a",
                class_name="provisioning-sc",
                annotations={"volume.kubernetes.io/selected-node": "other"},
            )
        ],
        Code.Success,
        "",
        ERR_REASON_BIND_CONFLICT,
        id="claim provisioned for another node",
    ),
]


@pytest.mark.parametrize(("p", "objects", "pre_filter", "message", "reasons"), CASES)
def test_volume_binding(p: JSON, objects: list[JSON], pre_filter: Code, message: str, reasons: str) -> None:
    sched = scheduler_with(
        [node("node-a", {"foo": "bar", "topology.kubernetes.io/zone": "zone-b"})], [], [*CLASSES, *objects]
    )
    pre, verdicts = run_plugin(sched, PLUGIN, p)
    assert pre.code == pre_filter, pre
    if message:
        assert pre.message() == message
    if pre_filter == Code.Success:
        status = verdicts["node-a"]
        if reasons:
            assert status.code == Code.UnschedulableAndUnresolvable and status.message() == reasons
        else:
            assert status.is_success(), status


def _local_cluster() -> list[JSON]:
    return [
        node("a1", {"kubernetes.io/hostname": "a1"}),
        node("b1", {"kubernetes.io/hostname": "b1"}),
        node("c1", {"kubernetes.io/hostname": "c1"}),
    ]


def test_a_pod_whose_claim_is_bound_to_a_local_pv_keeps_its_node() -> None:
    local = pv(
        "pv-local", claim=("default", "data"), phase="Bound", node_affinity={"kubernetes.io/hostname": ["b1"]}
    )
    sched = scheduler_with(_local_cluster(), [], [pvc("data", volume_name="pv-local", bound=True), local])
    sched.add_pod(pod("db", claims=("data",)))
    (result,) = sched.run()
    assert result.node == "b1"


def test_reserve_keeps_a_chosen_pv_from_the_next_pod() -> None:
    """Two pods with WaitForFirstConsumer claims and one local PV on b1: the first takes it (the
    binding assumed, PreBind's write handed to the host), the second finds none left."""
    sched = scheduler_with(
        _local_cluster(),
        [],
        [
            WAIT,
            pvc("data-0", class_name="wait-sc"),
            pvc("data-1", class_name="wait-sc"),
            pv("pv-b1", class_name="wait-sc", node_affinity={"kubernetes.io/hostname": ["b1"]}),
        ],
    )
    sched.add_pod(pod("db-0", claims=("data-0",)))
    first = sched.run(limit=1)[0]
    assert first.node == "b1"
    ((resource, written),) = first.prebind_writes  # PreBind's write: the PV's claimRef
    assert resource == "persistentvolumes" and written["metadata"]["name"] == "pv-b1"
    assert written["spec"]["claimRef"]["name"] == "data-0"
    sched.add_pod(pod("db-1", claims=("data-1",)))
    (second,) = sched.run(limit=1)
    assert second.node is None
    assert "3 node(s) didn't find available persistent volumes to bind" in second.message


def test_a_claim_to_provision_is_written_with_its_node_and_warned_about() -> None:
    sched = scheduler_with(_local_cluster(), [], [PROVISIONING, pvc("data", class_name="provisioning-sc")])
    sched.add_pod(pod("db", claims=("data",)))
    (result,) = sched.run()
    ((resource, written),) = result.prebind_writes
    assert resource == "persistentvolumeclaims"
    assert written["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == result.node
    assert result.warnings == [
        f"persistentvolumeclaim data: not modelled (dynamic provisioning): a volume would be provisioned "
        f"for node {result.node}; none is created and the claim stays Pending"
    ]


@pytest.mark.parametrize(
    ("p", "claim", "queued"),
    [
        pytest.param(pod("p", claims=("pvc1",)), pvc("pvc1"), True, id="queue-on-referenced-pvc"),
        pytest.param(pod("p", claims=("pvc1",)), pvc("pvc2"), False, id="skip-unrelated-pvc"),
        pytest.param(
            pod("p", claims=("pvc1",)), pvc("pvc1", namespace="other"), False, id="skip-other-namespace"
        ),
        pytest.param(
            pod("p", {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}),
            pvc("p-eph"),
            True,
            id="queue-on-ephemeral-claim",
        ),
    ],
)
def test_hint_after_pvc_change(p: JSON, claim: JSON, queued: bool) -> None:
    assert after_pvc_change(make_pod_info(p), None, claim) is queued


TOPO_A = [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]
TOPO_B = [{"matchLabelExpressions": [{"key": "zone", "values": ["b"]}]}]


@pytest.mark.parametrize(
    ("old", "new", "queued"),
    [
        pytest.param(None, storage_class("sc"), True, id="queue-on-add"),
        pytest.param(
            storage_class("sc", topologies=TOPO_A),
            storage_class("sc", topologies=TOPO_B),
            True,
            id="queue-on-topology-change",
        ),
        pytest.param(
            storage_class("sc", topologies=TOPO_A),
            storage_class("sc", topologies=TOPO_A),
            False,
            id="skip-unchanged",
        ),
    ],
)
def test_hint_after_storage_class_change(old: JSON | None, new: JSON, queued: bool) -> None:
    assert after_storage_class_change(make_pod_info(pod("p")), old, new) is queued


def _csi_node(annotation: str | None) -> JSON:
    meta: JSON = {"name": "n"}
    if annotation is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": annotation}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": []}}


@pytest.mark.parametrize(
    ("old", "new", "queued"),
    [
        pytest.param(None, _csi_node(None), True, id="queue-on-add"),
        pytest.param(_csi_node("a"), _csi_node("a,b"), True, id="queue-on-migrated-plugins-change"),
        pytest.param(_csi_node("a"), _csi_node("a"), False, id="skip-unchanged"),
    ],
)
def test_hint_after_csi_node_change(old: JSON | None, new: JSON, queued: bool) -> None:
    assert after_csi_node_change(make_pod_info(pod("p")), old, new) is queued


def test_a_pod_waiting_for_its_claim_is_requeued_when_the_claim_is_added() -> None:
    """The claim's PersistentVolumeClaim/Add event: VolumeRestrictions' and VolumeBinding's hints
    move the pod they rejected; an unrelated claim leaves it where it is."""
    sched = scheduler_with(_local_cluster(), [], [IMMEDIATE])
    sched.add_pod(pod("db", claims=("data",)))
    (first,) = sched.run()
    assert first.node is None and 'persistentvolumeclaim "data" not found' in first.message
    sched.add_pvc(pvc("other", volume_name="pv-x", bound=True))
    assert sched.queue.pending()["unschedulablePods"] == ["uid-default-db"]
    sched.add_pv(
        pv("pv-a", claim=("default", "data"), phase="Bound", node_affinity={"kubernetes.io/hostname": ["c1"]})
    )
    sched.add_pvc(pvc("data", volume_name="pv-a", bound=True))
    assert sched.queue.pending()["unschedulablePods"] == []
    sched.clock.advance(30)  # (past the pod's backoff)
    sched.queue.flush_backoff_completed()
    (second,) = sched.run()
    assert second.node == "c1"


def test_a_failed_binding_reverts_the_assumed_volume() -> None:
    """handleBindingCycleError runs Unreserve: the PV the pod's cycle assumed is offered again."""
    sched = scheduler_with(
        _local_cluster(),
        [],
        [
            WAIT,
            pvc("data-0", class_name="wait-sc"),
            pv("pv-b1", class_name="wait-sc", node_affinity={"kubernetes.io/hostname": ["b1"]}),
        ],
    )
    sched.add_pod(pod("db-0", claims=("data-0",)))
    (result,) = sched.run()
    assert "pv-b1" in sched.storage.assumed_pvs
    sched.binding_failed(result, "conflict", result.pod)
    assert "pv-b1" not in sched.storage.assumed_pvs
