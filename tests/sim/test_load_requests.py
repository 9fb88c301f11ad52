"""The create requests a scenario load makes (`cluster._fresh`): server-set metadata is dropped
(the manifest itself is left as it is), and a plain manifest without any is sent as it is, which
must never change it: the scenario's objects are the same after loading as before."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.sim.api import Simulation
from kubetaint.sim.cluster import _fresh

JSON = dict[str, Any]


@pytest.mark.parametrize(
    ("manifest", "expected_meta"),
    [
        pytest.param({"kind": "Pod", "metadata": {"name": "a"}}, {"name": "a"}, id="nothing to drop"),
        pytest.param(
            {"kind": "Pod", "metadata": {"name": "a", "uid": "u", "resourceVersion": "4"}},
            {"name": "a"},
            id="uid and resourceVersion dropped",
        ),
        pytest.param(
            {"kind": "Pod", "metadata": {"creationTimestamp": "2020-01-01T00:00:00Z", "name": "a"}},
            {"name": "a"},
            id="a creation timestamp dropped",
        ),
        pytest.param({"kind": "Pod", "metadata": None}, {}, id="null metadata becomes an empty map"),
        pytest.param({"kind": "Pod"}, {}, id="no metadata becomes an empty map"),
    ],
)
def test_a_request_carries_the_manifest_without_server_set_metadata(
    manifest: JSON, expected_meta: JSON
) -> None:
    before = copy.deepcopy(manifest)
    request = _fresh(manifest)
    assert request["metadata"] == expected_meta
    assert {k: v for k, v in request.items() if k != "metadata"} == {
        k: v for k, v in manifest.items() if k != "metadata"
    }
    assert manifest == before
    dropped = manifest.get("metadata") != expected_meta
    assert (request is manifest) == (not dropped)


def pod(name: str, node: str, **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}, **meta},
        "spec": {
            "containers": [{"name": "c", "image": "c", "resources": {"limits": {"cpu": "1"}}}],
            "nodeName": node,
        },
    }


def test_loading_changes_none_of_the_scenarios_objects_and_stores_its_own_copies() -> None:
    objects = [
        pod("a", "n-0"),
        pod("b", "n-1", uid="given", resourceVersion="9"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {**pod("c", "n-0"), "metadata": {"name": "c", "namespace": "team"}},
    ]
    doc = {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"nodeGroups": [{"name": "n", "count": 2, "zones": ["z"]}], "objects": objects},
    }
    sim = Simulation(doc)
    loaded = copy.deepcopy(sim.scenario.objects)
    sim.run_until(1)
    assert sim.scenario.objects == loaded
    stored = sim.cluster.store.get("pods", "default", "b")
    assert stored["metadata"]["uid"] != "given"
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}  # defaulted copy
    assert "requests" not in loaded[0]["spec"]["containers"][0]["resources"]
    for manifest in sim.scenario.objects:
        assert "resourceVersion" not in manifest["metadata"] or manifest["metadata"]["name"] == "b"


def test_a_loaded_pod_keeps_the_status_the_scenario_declares() -> None:
    declared = {
        "phase": "Running",
        "qosClass": "Burstable",  # not what its requests give: a declared status is kept as it is
        "podIP": "10.0.0.7",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z"}],
    }
    doc = {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "nodeGroups": [{"name": "n", "count": 1, "zones": ["z"]}],
            "objects": [{**pod("a", "n-0"), "status": declared}, pod("b", "n-0")],
        },
    }
    sim = Simulation(doc)
    assert sim.cluster.store.get("pods", "default", "a")["status"] == declared
    assert "status" not in sim.cluster.store.get("pods", "default", "b")


def test_a_replica_sets_pods_are_created_pending_with_their_qos_class() -> None:
    template = {
        "metadata": {"labels": {"app": "w"}},
        "spec": {"containers": [{"name": "c", "image": "c", "resources": {"limits": {"cpu": "1"}}}]},
    }
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "w"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "w"}}, "template": template},
    }
    doc = {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"nodeGroups": [{"name": "n", "count": 0, "zones": ["z"]}], "objects": [replica_set]},
    }
    sim = Simulation(doc)
    sim.run_until(1)
    pods = sim.cluster.store.list("pods").items
    assert len(pods) == 2
    for created in pods:
        assert created["status"]["phase"] == "Pending"
        assert created["status"]["qosClass"] == "Burstable"  # a cpu limit alone: no memory limit


def test_a_pod_applied_during_the_run_is_created_pending_with_its_qos_class() -> None:
    late = {**pod("late", ""), "status": {"phase": "Running"}}
    del late["spec"]["nodeName"]
    doc = {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "nodeGroups": [{"name": "n", "count": 0, "zones": ["z"]}],
            "objects": [],
            "events": [{"at": "10s", "apply": late}],
        },
    }
    sim = Simulation(doc)
    sim.run_until(11)
    status = sim.cluster.store.get("pods", "default", "late")["status"]
    assert (status["phase"], status["qosClass"]) == ("Pending", "Burstable")
