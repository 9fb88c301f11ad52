"""What a heartbeat remembers between beats is forgotten when it must be: the desired node
conditions follow every fault, and a lease renewal is the lease with renewTime (and, when they
differ, holder and duration) set, whichever way it is built."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubelet.builders import make_pool
from kubetaint.kubelet.lease import NodeLease
from kubetaint.store.interface import JSON

FAULTS_AND_CONDITIONS = [
    pytest.param("not-ready", {}, "Ready", "False", id="not-ready turns Ready False"),
    pytest.param("memory-pressure", {"available": "1Mi"}, "MemoryPressure", "True", id="memory pressure"),
    pytest.param("disk-pressure", {}, "DiskPressure", "True", id="disk pressure"),
    pytest.param("pid-pressure", {}, "PIDPressure", "True", id="PID pressure"),
    pytest.param("network-unavailable", {}, "NetworkUnavailable", "True", id="the network goes away"),
]


@pytest.mark.parametrize("fault, options, ctype, status", FAULTS_AND_CONDITIONS)
def test_desired_conditions_follow_each_fault_and_its_relief(
    fault: str, options: dict[str, str], ctype: str, status: str
) -> None:
    clock, _store, pool = make_pool(["n1"])
    pool.start()
    kubelet = pool["n1"]
    before = dict(kubelet.desired_conditions())
    assert kubelet.desired_conditions() is kubelet.desired_conditions(), "remembered between beats"
    pool.fault(["n1"], fault, **options)
    assert kubelet.desired_conditions()[ctype] == status
    assert not kubelet.status_due(), "the fault posted at once"
    pool.fault(["n1"], "recover" if fault == "not-ready" else "relieve")
    clock.advance(301)  # past the pressure transition period
    assert kubelet.desired_conditions() == before


def test_a_state_change_made_directly_is_seen_by_the_next_heartbeat() -> None:
    _clock, _store, pool = make_pool(["n1"])
    pool.start()
    kubelet = pool["n1"]
    assert not kubelet.status_due()
    kubelet.ready = False
    assert kubelet.desired_conditions()["Ready"] == "False" and kubelet.status_due()
    kubelet.ready = True
    assert not kubelet.status_due()
    kubelet.network_unavailable = True
    assert kubelet.desired_conditions()["NetworkUnavailable"] == "True" and kubelet.status_due()


def stored_lease(**spec: Any) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease", "uid": "u", "resourceVersion": "3"},
        "spec": spec,
    }


def general_renewal(lease: JSON, holder: str, duration: int, renew: str) -> JSON:
    """The renewal as the lease controller writes it: holder, duration and renewTime set."""
    spec = {**lease["spec"], "holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": renew}
    return {**lease, "spec": spec}


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "t0"}, id="our own lease"
        ),
        pytest.param({"holderIdentity": "n1", "leaseDurationSeconds": 40}, id="never renewed yet"),
        pytest.param(
            {"holderIdentity": "other", "leaseDurationSeconds": 40, "renewTime": "t0"}, id="another holder"
        ),
        pytest.param(
            {"holderIdentity": "n1", "leaseDurationSeconds": 15, "renewTime": "t0"}, id="another duration"
        ),
        pytest.param(
            {"holderIdentity": "n1", "leaseDurationSeconds": 40.0}, id="a duration written as a float"
        ),
        pytest.param({"renewTime": "t0", "leaseTransitions": 2}, id="no holder, other fields first"),
        pytest.param({}, id="an empty spec"),
    ],
)
def test_a_renewal_is_the_lease_with_holder_duration_and_renew_time_set(spec: JSON) -> None:
    clock, store, _pool = make_pool([])
    lease = NodeLease(store, "n1", duration_seconds=40)
    stored = stored_lease(**spec)
    lease.renewed(stored)
    renewal = lease.renewal(clock.now())
    assert renewal is not None
    expected = general_renewal(stored, "n1", 40, "2026-01-01T00:00:00.000000Z")
    assert json.dumps(renewal) == json.dumps(expected)  # key order included
    assert renewal["metadata"] is stored["metadata"], "the renewal carries the stored metadata"
