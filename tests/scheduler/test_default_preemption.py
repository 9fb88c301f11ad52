"""DefaultPreemption: DryRunPreemption keeps at most numCandidates candidates per list (upstream's
candidateList), and PodEligibleToPreemptOthers makes a preemptor wait while a victim on its
nominated node terminates (default_preemption_test.go TestPodEligibleToPreemptOthers)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.default_preemption import DefaultPreemption
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code, Status
from scheduler.builders import node, pod, scheduler


def _preemption(s: Any) -> DefaultPreemption:
    plugin = s.profiles["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return plugin


def _pdb_protecting(app: str) -> dict[str, Any]:
    return {
        "metadata": {"name": app, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": 0},
    }


@pytest.mark.parametrize(
    ("protected", "wanted"),
    [
        pytest.param(True, [0, 1], id="PDB-violating candidates alone are capped at numCandidates"),
        pytest.param(False, [1, 0], id="a non-violating candidate stops the dry run at numCandidates"),
    ],
)
def test_dry_run_keeps_at_most_num_candidates(protected: bool, wanted: list[int]) -> None:
    nodes = [node(f"n{i}", cpu="2") for i in range(4)]
    bound = [pod(f"v{i}", cpu="2", priority=1, node_name=f"n{i}", labels={"app": "db"}) for i in range(4)]
    config = {
        "profiles": [
            {
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1},
                    }
                ]
            }
        ]
    }
    s = scheduler(nodes, bound, config=config)
    if protected:
        s.add_pdb(_pdb_protecting("db"))
    plugin = _preemption(s)
    pi = PodInfo(pod("hi", cpu="2", priority=10))
    statuses: dict[str, Status] = {}
    potential = s.cache.node_list()
    candidates = plugin.dry_run_preemption(CycleState(), pi, potential, statuses, s)
    violating = [c for c in candidates if c.num_pdb_violations]
    assert [len(candidates) - len(violating), len(violating)] == wanted


def _terminating(name: str, node_name: str, priority: int, reason: str = "PreemptionByScheduler") -> dict:
    victim = pod(name, cpu="2", priority=priority, node_name=node_name)
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    victim["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": reason}]
    return victim


@pytest.mark.parametrize(
    ("victim", "nominated_status", "eligible"),
    [
        pytest.param(
            _terminating("v", "a", 1),
            Status(Code.Unschedulable),
            False,
            id="a lower-priority pod terminating by preemption on the nominated node makes the pod wait",
        ),
        pytest.param(
            _terminating("v", "a", 1),
            Status(Code.UnschedulableAndUnresolvable),
            True,
            id="an unresolvable nominated node lets the pod preempt again",
        ),
        pytest.param(
            _terminating("v", "a", 20),
            Status(Code.Unschedulable),
            True,
            id="a terminating pod of higher priority does not hold the pod back",
        ),
        pytest.param(
            _terminating("v", "a", 1, reason="TerminationByKubelet"),
            Status(Code.Unschedulable),
            True,
            id="a pod terminating for another reason does not hold the pod back",
        ),
        pytest.param(
            pod("v", cpu="2", priority=1, node_name="a"),
            Status(Code.Unschedulable),
            True,
            id="a running victim does not hold the pod back",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(victim: dict, nominated_status: Status, eligible: bool) -> None:
    s = scheduler([node("a", cpu="2")], [victim])
    preemptor = pod("hi", cpu="2", priority=10)
    preemptor["status"]["nominatedNodeName"] = "a"
    ok, message = _preemption(s).pod_eligible_to_preempt_others(PodInfo(preemptor), nominated_status)
    assert ok == eligible
    assert message == ("" if eligible else "not eligible due to a terminating pod on the nominated node.")


def test_a_preemptor_waits_for_its_terminating_victim() -> None:
    s = scheduler([node("a", cpu="2")], [_terminating("v", "a", 1)])
    preemptor = pod("hi", cpu="2", priority=10)
    preemptor["status"]["nominatedNodeName"] = "a"
    s.add_pod(preemptor)
    result = s.schedule_one()
    assert result is not None and result.node is None and not result.victims
    assert result.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
