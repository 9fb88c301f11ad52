"""The scheduling cycle: FitError text, numFeasibleNodesToFind, preemption, queue and a score law."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.fit_error import fit_error_message
from kubetaint.scheduler.plugins.default_preemption import Candidate, pick_one_node_for_preemption
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.scheduler import num_feasible_nodes_to_find
from scheduler.builders import node, pod, scheduler, taint


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        pytest.param(50, 50, id="below 100 nodes every node"),
        pytest.param(500, 230, id="500 nodes find 230"),
        pytest.param(1000, 420, id="1000 nodes find 420"),
        pytest.param(5000, 500, id="5000 nodes find 500"),
        pytest.param(6000, 300, id="6000 nodes find 300 at the 5 percent floor"),
    ],
)
def test_num_feasible_nodes_to_find(n: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(0, n) == expected


def test_fit_error_sorts_lexicographically() -> None:
    msg = fit_error_message(12, {"node(s) had untolerated taint(s)": 2, "Insufficient cpu": 10})
    assert msg == "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s)."


def test_fit_error_appends_the_preemption_message_as_it_is() -> None:
    s = scheduler(
        [node("t", taints=[taint("dedicated", "gpu")]), node("a", cpu="2"), node("b", cpu="2")],
        [pod("a1", cpu="1", node_name="a"), pod("b1", cpu="1", node_name="b"), pod("big", cpu="2")],
    )
    result = s.schedule_one()
    assert result is not None and result.node is None
    assert result.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are "
        "available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )
    assert result.condition == {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": result.message,
    }


def test_preemption_never_policy() -> None:
    p = pod("big", cpu="2", priority=10)
    p["spec"]["preemptionPolicy"] = "Never"
    s = scheduler([node("a", cpu="1")], [p])
    result = s.schedule_one()
    assert result is not None
    assert result.message.endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_preemption_picks_lowest_priority_victims() -> None:
    nodes = [node("a", cpu="2"), node("b", cpu="2")]
    bound = [pod("a1", cpu="2", priority=5, node_name="a"), pod("b1", cpu="2", priority=1, node_name="b")]
    s = scheduler(nodes, [*bound, pod("hi", cpu="2", priority=10)])
    result = s.schedule_one()
    assert result is not None and result.nominated_node == "b"
    assert [v["metadata"]["name"] for v in result.victims] == ["b1"]
    assert result.victim_events[0]["message"] == "Preempted by pod uid-hi on node b"


def test_preemption_respects_pdb() -> None:
    nodes = [node("a", cpu="2"), node("b", cpu="2")]
    bound = [
        pod("a1", cpu="2", priority=1, node_name="a", labels={"app": "db"}),
        pod("b1", cpu="2", priority=1, node_name="b", labels={"app": "web"}),
    ]
    s = scheduler(nodes, [*bound, pod("hi", cpu="2", priority=10)])
    s.add_pdb(
        {
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "db"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    result = s.schedule_one()
    assert result is not None and result.nominated_node == "b"


@pytest.mark.parametrize(
    ("candidates", "winner"),
    [
        pytest.param([("a", [5], 1), ("b", [9], 0)], "b", id="fewest PDB violations first"),
        pytest.param([("a", [5], 0), ("b", [3, 3], 0)], "b", id="then the lowest highest victim priority"),
        pytest.param([("a", [3, 3], 0), ("b", [3, 1], 0)], "b", id="then the lowest priority sum"),
        pytest.param([("a", [3, 3], 0), ("b", [3], 0)], "b", id="then the fewest victims"),
    ],
)
def test_pick_one_node_for_preemption(candidates: list, winner: str) -> None:
    built = [
        Candidate(name, [PodInfo(pod(f"{name}{i}", priority=p)) for i, p in enumerate(prios)], violations)
        for name, prios, violations in candidates
    ]
    assert pick_one_node_for_preemption(built).node == winner


def test_latest_start_time_breaks_ties() -> None:
    a = Candidate("a", [PodInfo(pod("a0", priority=1, start="2026-01-01T00:00:00Z"))], 0)
    b = Candidate("b", [PodInfo(pod("b0", priority=1, start="2026-01-01T01:00:00Z"))], 0)
    assert pick_one_node_for_preemption([a, b]).node == "b"


def test_backoff_and_requeue_on_taint_removal() -> None:
    s = scheduler([node("n", taints=[taint("k", "v")])], [pod("p")])
    first = s.schedule_one()
    assert first is not None and first.node is None
    assert s.queue.pending()["unschedulablePods"] == ["uid-p"]
    s.update_node(node("n", labels={"x": "y"}, taints=[taint("k", "v")]))
    assert s.queue.pending()["unschedulablePods"] == ["uid-p"], (
        "a label change does not help a taint rejection"
    )
    s.update_node(node("n"))
    assert s.queue.pending()["backoffQ"] == ["uid-p"], "still within the 1s backoff"
    # SchedulerPopFromBackoffQ: activeQ is empty, so the scheduler takes it from the backoffQ
    assert s.schedule_one().node == "n"  # type: ignore[union-attr]


def test_without_pop_from_backoff_a_requeued_pod_waits_for_the_flush_after_its_backoff() -> None:
    s = scheduler(
        [node("n", taints=[taint("k", "v")])], [pod("p")], feature_gates={"SchedulerPopFromBackoffQ": False}
    )
    assert s.schedule_one().node is None  # type: ignore[union-attr]
    s.update_node(node("n"))
    assert s.schedule_one() is None, "backing off: not taken from the backoffQ"
    s.clock.advance(1.0)  # type: ignore[attr-defined]
    assert s.queue.pending()["backoffQ"] == ["uid-p"], "its backoff ends now: not yet flushed"
    s.clock.advance(1.0)  # type: ignore[attr-defined]
    assert s.queue.pending()["activeQ"] == ["uid-p"]
    assert s.schedule_one().node == "n"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("unschedulable", "errors", "seconds"),
    [
        pytest.param(0, 0, 0.0, id="no failed attempt owes no backoff"),
        pytest.param(1, 0, 1.0, id="one rejection 1s"),
        pytest.param(2, 0, 2.0, id="two rejections 2s"),
        pytest.param(3, 0, 4.0, id="three rejections 4s"),
        pytest.param(4, 0, 8.0, id="four rejections 8s"),
        pytest.param(5, 0, 10.0, id="five rejections reach the 10s cap"),
        pytest.param(9, 0, 10.0, id="nine rejections stay at the cap"),
        pytest.param(9, 1, 1.0, id="an error after rejections counts the errors alone"),
        pytest.param(0, 3, 4.0, id="three errors in a row 4s"),
    ],
)
def test_backoff_duration(unschedulable: int, errors: int, seconds: float) -> None:
    """calculateBackoffDuration of UnschedulableCount, or of ConsecutiveErrorsCount after an error."""
    s = scheduler([node("n")], [pod("p")])
    qpi = s.queue.pods["uid-p"]
    qpi.unschedulable_count, qpi.consecutive_errors_count = unschedulable, errors
    assert s.queue.backoff_duration(qpi) == seconds


def test_unschedulable_pods_flush_after_five_minutes() -> None:
    s = scheduler([node("n", taints=[taint("k", "v")])], [pod("p")])
    s.schedule_one()
    s.clock.advance(299.0)  # type: ignore[attr-defined]
    assert s.queue.pending()["unschedulablePods"] == ["uid-p"]
    s.clock.advance(31.0)  # type: ignore[attr-defined]
    assert s.queue.pending()["activeQ"] == ["uid-p"]


def test_priority_sort_order() -> None:
    s = scheduler([node("n")], [pod("low", priority=1), pod("high", priority=100), pod("mid", priority=50)])
    assert [r.pod["metadata"]["name"] for r in s.run()] == ["high", "mid", "low"]


def test_unknown_plugin_rejected() -> None:
    with pytest.raises(ConfigError, match='FilterPlugin "Nope" does not exist'):
        scheduler([], config={"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]})


def test_weight_overflow_rejected() -> None:
    cfg = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "TaintToleration", "weight": 2**62}]}}}]}
    with pytest.raises(ConfigError, match="total score of Score plugins could overflow"):
        scheduler([], config=cfg)


@settings(max_examples=40, deadline=None)
@given(
    cpus=st.lists(st.sampled_from(["1", "2", "4"]), min_size=2, max_size=8),
    tainted=st.lists(st.booleans(), min_size=8, max_size=8),
    used=st.lists(st.sampled_from([None, "500m", "1"]), min_size=8, max_size=8),
    request=st.sampled_from(["100m", "1", "2"]),
    seed=st.integers(0, 5),
)
def test_chosen_node_is_feasible_and_maximal(
    cpus: list, tainted: list, used: list, request: str, seed: int
) -> None:
    nodes = [
        node(f"n{i}", cpu=c, taints=[taint("t", "", "PreferNoSchedule")] if tainted[i] else [])
        for i, c in enumerate(cpus)
    ]
    bound = [pod(f"b{i}", cpu=u, node_name=f"n{i}") for i, u in enumerate(used[: len(cpus)]) if u]
    s = scheduler(nodes, [*bound, pod("p", cpu=request, memory="1Gi")], seed=seed)
    result = s.schedule_one()
    assert result is not None and result.evaluation is not None
    fw = s.framework_for(PodInfo(result.pod))
    if result.node is None:
        return
    chosen = s.cache.nodes[result.node]
    s.cache.forget_pod("uid-p")
    assert fw.run_filter(CycleState(), PodInfo(result.pod), chosen).is_success()
    total = result.evaluation.total_scores
    if total is not None:
        names = [ni.name for ni in result.evaluation.feasible]
        assert total[names.index(result.node)] == total.max()
