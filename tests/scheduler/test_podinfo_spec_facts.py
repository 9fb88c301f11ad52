"""PodInfo takes what it derives from a spec (requests, tolerations, affinity, ...) from the first
pod whose spec values are the very same objects, nodeName aside (pods stamped from one template);
every PodInfo must equal one derived afresh, and a bad pod still names itself."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.scheduler import podinfo
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info
from kubetaint.scheduler.resources import InputError

JSON = dict[str, Any]
FACTS = [s for s in PodInfo.__slots__ if s not in ("pod", "key", "name", "namespace")]
SHARED: JSON = {
    "containers": [
        {"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    ],
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
    "priority": 7,
    "preemptionPolicy": "Never",
}

#: (what the spec-facts memo holds: with the shortcuts on)
pytestmark = pytest.mark.usefixtures("default_mode")


def stamped(name: str, node: str | None, **spec: Any) -> JSON:
    """A pod whose spec shares SHARED's values (the same objects), with its own nodeName."""
    body: JSON = {**SHARED, **spec}
    if node is not None:
        body["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": body,
        "status": {"nominatedNodeName": f"nom-{name}"},
    }


def afresh(pod: JSON) -> PodInfo:
    podinfo._SPEC_FACTS.clear()
    return PodInfo(copy.deepcopy(pod))


def facts(pi: PodInfo) -> dict[str, Any]:
    return {name: getattr(pi, name) for name in [*FACTS, "key", "name", "namespace"]}


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(stamped("b", "node-2"), id="another node"),
        pytest.param(stamped("b", None), id="no node name"),
        pytest.param(stamped("b", "node-2", priority=8), id="another priority"),
        pytest.param(stamped("b", "node-2", tolerations=[]), id="no tolerations"),
        pytest.param(stamped("b", "node-2", nodeSelector={"a": "b"}), id="a node selector"),
        pytest.param(
            stamped("b", "node-2", containers=copy.deepcopy(SHARED["containers"])),
            id="equal containers, not shared",
        ),
        pytest.param(
            stamped("b", "node-2", containers=[{"name": "c", "ports": [{"hostPort": 80}]}]), id="a host port"
        ),
        pytest.param(stamped("b", "node-2", schedulingGates=[{"name": "g"}]), id="a scheduling gate"),
        pytest.param(stamped("b", "node-2", overhead={"cpu": "1"}), id="an overhead"),
    ],
)
def test_a_pod_after_one_of_the_same_template_gets_what_deriving_afresh_gives(second: JSON) -> None:
    podinfo._SPEC_FACTS.clear()
    first = PodInfo(stamped("a", "node-1"))
    assert facts(first) == facts(afresh(stamped("a", "node-1")))
    podinfo._SPEC_FACTS.clear()
    PodInfo(stamped("a", "node-1"))
    assert facts(PodInfo(second)) == facts(afresh(second))


def test_pods_of_one_template_share_their_derived_facts() -> None:
    podinfo._SPEC_FACTS.clear()
    a, b = PodInfo(stamped("a", "node-1")), PodInfo(stamped("b", "node-2"))
    assert a.requests is b.requests and a.tolerations is b.tolerations
    assert (a.node_name, b.node_name) == ("node-1", "node-2")
    assert (a.nominated_node_name, b.nominated_node_name) == ("nom-a", "nom-b")
    assert len(podinfo._SPEC_FACTS) == 1


def test_a_bad_quantity_is_reported_for_each_pod_that_has_it() -> None:
    podinfo._SPEC_FACTS.clear()
    bad = [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "lots"}}}]
    for name in ("x", "y"):
        with pytest.raises(InputError) as err:
            make_pod_info(stamped(name, "node-1", containers=bad))
        assert f"default/{name}" in str(err.value) or name in str(err.value)
    assert len(podinfo._SPEC_FACTS) == 0


def test_the_memo_starts_afresh_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    podinfo._SPEC_FACTS.clear()
    monkeypatch.setattr(podinfo._SPEC_FACTS, "limit", 2)
    for priority in range(5):
        pi = PodInfo(stamped("a", "n", priority=1000 + priority))
        assert pi.priority == 1000 + priority
    assert len(podinfo._SPEC_FACTS) <= 2


def _with_node_first(name: str, node: str) -> JSON:
    pod = stamped(name, None)
    pod["spec"] = {"nodeName": node, **pod["spec"]}
    return pod


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        pytest.param(stamped("a", None), stamped("b", "node-1"), True, id="a pending pod and a bound one"),
        pytest.param(
            stamped("a", "node-1"), _with_node_first("b", "node-2"), True, id="nodeName first or last"
        ),
        pytest.param(
            stamped("a", "node-1"),
            stamped("b", "node-1", nodeSelector={"x": "y"}),
            False,
            id="one more spec field",
        ),
        pytest.param(
            stamped("a", "node-1"),
            {**stamped("b", "node-1"), "spec": dict(reversed(list(stamped("b", "node-1")["spec"].items())))},
            False,
            id="the same values in another order (memoised apart, derived alike)",
        ),
    ],
)
def test_the_memo_key_leaves_out_nodename_only(first: JSON, second: JSON, shared: bool) -> None:
    podinfo._SPEC_FACTS.clear()
    a, b = PodInfo(first), PodInfo(second)
    assert (a.requests is b.requests) is shared
    assert len(podinfo._SPEC_FACTS) == (1 if shared else 2)
    assert facts(b) == facts(afresh(second))


def _pinned(name: str, node: str, affinity: JSON | None = None) -> JSON:
    """A pod of SHARED's template pinned to `node` as a DaemonSet pins its pods (an affinity of
    its own, every other spec value the template's)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    pinned = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}},
        **(affinity or {}),
    }
    return stamped(name, None, affinity=pinned)


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(_pinned("b", "node-2"), id="pinned to another node"),
        pytest.param(_pinned("b", "node-1"), id="pinned to the same node, another affinity object"),
        pytest.param(
            _pinned(
                "b", "node-2", {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}
            ),
            id="pod anti-affinity beside the node affinity",
        ),
        pytest.param(stamped("b", "node-2", affinity={}), id="an empty affinity"),
    ],
)
def test_a_pod_differing_only_by_its_affinity_gets_what_deriving_afresh_gives(second: JSON) -> None:
    podinfo._SPEC_FACTS.clear()
    podinfo._SPEC_FACTS_BUT_AFFINITY.clear()
    PodInfo(_pinned("a", "node-1"))
    assert len(podinfo._SPEC_FACTS_BUT_AFFINITY) == 1
    found = PodInfo(second)
    assert facts(found) == facts(afresh(second))
    assert found.facts.requests is PodInfo(_pinned("c", "node-3")).facts.requests, "taken over"
