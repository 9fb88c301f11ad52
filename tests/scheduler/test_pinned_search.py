"""The search for feasible nodes of a pod pinned to a few nodes by name (a DaemonSet pod's required
node affinity, which NodeAffinity's PreFilterResult narrows the search to): filtering the narrowed
nodes one by one must reach exactly what the vectorised search over them reaches — the same
feasible nodes in the same order, the same scored slots, the same number of nodes gone through and
the same nextStartNodeIndex afterwards, the same chosen node and the same FitError when none fits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.nodes_at import NodesAt, node_slots
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.scheduler import PINNED_NODES_TO_FILTER_ONE_BY_ONE, Evaluation, Scheduler
from scheduler.builders import node, pod, scheduler, taint, toleration

ZONE = "topology.kubernetes.io/zone"
NO_SCORE = {"profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}]}}}]}


def pinned(name: str, targets: list[str], *, cpu: str = "100m", tolerate: bool = False) -> dict[str, Any]:
    """A pod whose required node affinity names its nodes (as a DaemonSet controller writes it)."""
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [t]}]} for t in targets]
    return pod(
        name,
        cpu=cpu,
        affinity={"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}},
        tolerations=[toleration("dedicated", "Exists")] if tolerate else None,
    )


def cluster(kinds: list[int], zones: int) -> list[dict[str, Any]]:
    """Nodes of a few kinds (0 plain, 1 tainted, 2 nearly full, 3 cordoned) over `zones` zones."""
    out = []
    for i, kind in enumerate(kinds):
        out.append(
            node(
                f"n{i:03d}",
                cpu="50m" if kind == 2 else "4",
                taints=[taint("dedicated", "x")] if kind == 1 else None,
                unschedulable=kind == 3,
                labels={ZONE: f"z{i % zones}"},
            )
        )
    return out


def search(
    s: Scheduler, pod_: dict[str, Any], start: int, one_by_one: bool
) -> tuple[list[str], list[int] | None, int, int]:
    """_find_feasible from `start`: (feasible names, their slots, nodes gone through, next start)."""
    s.pinned_nodes_to_filter_one_by_one = PINNED_NODES_TO_FILTER_ONE_BY_ONE if one_by_one else -1
    fw = next(iter(s.profiles.values()))
    state, pi, evaluation = CycleState(), make_pod_info(pod_), Evaluation()
    pre = fw.run_pre_filter_plugins(state, pi, s.cache.node_list())
    assert pre.status.is_success() and pre.node_names is not None
    s.next_start_node_index = start
    searched = s._narrowed(pre.node_names)
    feasible, slots = s._find_feasible(fw, state, pi, s.cache.node_list(), evaluation, searched=searched)
    return (
        [ni.name for ni in feasible],
        None if slots is None else [int(x) for x in slots],
        evaluation.processed,
        s.next_start_node_index,
    )


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.integers(0, 3), min_size=1, max_size=130),
    zones=st.integers(1, 3),
    picks=st.lists(st.integers(0, 200), min_size=1, max_size=6),
    start=st.integers(0, 500),
    tolerate=st.booleans(),
    scored=st.booleans(),
)
def test_one_by_one_search_of_pinned_nodes_equals_the_vectorised_search(
    kinds: list[int],
    zones: int,
    picks: list[int],
    start: int,
    tolerate: bool,
    scored: bool,
) -> None:
    s = scheduler(cluster(kinds, zones), config=None if scored else NO_SCORE)
    # picks past the last node name nodes that do not exist
    targets = [f"n{p:03d}" for p in picks]
    subject = pinned("ds-pod", targets, tolerate=tolerate)
    fast = search(s, subject, start, True)
    slow = search(s, subject, start, False)
    assert fast == slow


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize(
    ("kinds", "targets", "start", "feasible", "next_start"),
    [
        pytest.param(
            [0] * 5, ["n003"], 4, ["n003"], 0, id="one plain node pinned: found, the index moves on by one"
        ),
        pytest.param(
            [0, 1, 0, 2, 0],
            ["n001", "n003"],
            0,
            [],
            2,
            id="pinned to a tainted and a full node: both counted",
        ),
        pytest.param(
            [0] * 6,
            ["n005", "n001", "n004"],
            4,
            ["n004", "n005", "n001"],
            1,
            id="narrowed nodes in node-tree order, from the index modulo their count",
        ),
        pytest.param(
            [0] * 4, ["n009"], 2, [], 2, id="pinned to a node that does not exist: nothing searched"
        ),
        pytest.param(
            [0] * 4, ["n009", "n002"], 3, ["n002"], 0, id="names of missing nodes are dropped from the search"
        ),
    ],
)
def test_pinned_search_table(
    kinds: list[int],
    targets: list[str],
    start: int,
    feasible: list[str],
    next_start: int,
) -> None:
    s = scheduler(cluster(kinds, 1))
    names, slots, _, after = search(s, pinned("p", targets), start, True)
    assert (names, after) == (feasible, next_start)
    assert slots == [s.cache.nodes[name].slot for name in feasible]


def test_without_score_plugins_the_first_pinned_fit_stops_the_search() -> None:
    # narrowed to [n002, n006]; 5 % 2 = 1 starts at n006, which fits: one node gone through
    s = scheduler(cluster([0] * 8, 1), config=NO_SCORE)
    names, _, processed, after = search(s, pinned("p", ["n002", "n006"]), 5, True)
    assert (names, processed, after) == (["n006"], 1, 6)


@settings(max_examples=25, deadline=None)
@given(
    kinds=st.lists(st.integers(0, 3), min_size=1, max_size=40),
    rounds=st.lists(
        st.tuples(st.lists(st.integers(0, 45), min_size=1, max_size=3), st.booleans()), max_size=8
    ),
)
def test_cycles_of_pinned_and_free_pods_decide_alike(
    kinds: list[int], rounds: list[tuple[list[int], bool]]
) -> None:
    """Whole scheduling cycles (binding into the cache, FitErrors) of a mix of pinned pods and
    free pods: the same results with and without the one-by-one search."""
    outcomes = []
    for limit in (PINNED_NODES_TO_FILTER_ONE_BY_ONE, -1):
        s = scheduler(cluster(kinds, 2), seed=7)
        s.pinned_nodes_to_filter_one_by_one = limit
        for i, (picks, free) in enumerate(rounds):
            p = pod(f"free-{i}", cpu="100m") if free else pinned(f"ds-{i}", [f"n{x:03d}" for x in picks])
            s.add_pod(p)
        got = []
        for result in s.run():
            total = None if result.evaluation is None else result.evaluation.total_scores
            got.append(
                (
                    result.pod["metadata"]["name"],
                    result.node,
                    result.message,
                    None if total is None else np.asarray(total).tolist(),
                    s.next_start_node_index,
                )
            )
        outcomes.append(got)
    assert outcomes[0] == outcomes[1]


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(1, 12),
    picks=st.lists(st.integers(0, 11), max_size=12),
    cut=st.tuples(st.integers(-14, 14), st.integers(-14, 14)),
)
def test_nodes_at_reads_as_the_list_of_those_nodes(size: int, picks: list[int], cut: tuple[int, int]) -> None:
    """The feasible nodes of a vectorised search, picked when read, read as the plain list."""
    nodes = [NodeInfo(node(f"n{i}"), slot=i) for i in range(size)]
    positions = [p % size for p in picks]
    slots = np.array([nodes[p].slot for p in positions], np.int64)
    lazy, plain = NodesAt(nodes, np.array(positions, np.int64), slots), [nodes[p] for p in positions]
    assert node_slots(lazy).tolist() == node_slots(plain).tolist() == [ni.slot for ni in plain]
    assert len(lazy) == len(plain)
    assert bool(lazy) == bool(plain)
    assert [lazy[i] for i in range(-len(plain), len(plain))] == [
        plain[i] for i in range(-len(plain), len(plain))
    ]
    assert lazy[cut[0] : cut[1]] == plain[cut[0] : cut[1]]
    assert list(lazy) == plain
    assert list(lazy) == plain, "read twice"
