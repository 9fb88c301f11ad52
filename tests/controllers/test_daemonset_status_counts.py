"""A DaemonSet's status counts, each node's share remembered with the very pod list, verdict and
revision it was counted for (controllers.daemonset.statuscounts.NodeCounts), sum to what counting
every node afresh gives, count after count, whichever nodes' lists are rebuilt, verdicts turn or
revisions change; with minReadySeconds (availability then reads the clock) nothing is reused.
Counting only the nodes a caller says changed (`count_changed`) sums to the same."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.controllers.daemonset.statuscounts import NodeCounts, node_counts

JSON = dict[str, Any]
READY = [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
POD_KINDS = ["ready-new", "ready-old", "unready", "unscheduled"]
REVISIONS = ["rev-a", "rev-b"]


def _pod(node: str, i: int, kind: str) -> JSON:
    labels = {"controller-revision-hash": "rev-b" if kind == "ready-old" else "rev-a"}
    status: JSON = {"phase": "Running"}
    if kind in ("ready-new", "ready-old"):
        status["conditions"] = READY
    return {
        "metadata": {"name": f"{node}-{i}", "labels": labels, "creationTimestamp": f"2026-01-01T00:00:0{i}Z"},
        "spec": {"nodeName": "" if kind == "unscheduled" else node},
        "status": status,
    }


def _fresh(
    nodes: list[JSON], verdicts: list[tuple[bool, bool]], by_node: dict[str, list[JSON]], **kw: Any
) -> Any:
    totals = [0] * 6
    for node, (should_run, _) in zip(nodes, verdicts, strict=True):
        pods = by_node.get(node["metadata"]["name"])
        if not pods:
            totals[0] += int(should_run)
            continue
        for i, n in enumerate(node_counts(pods, should_run, kw["revision"], kw["min_ready"], kw["now"])):
            totals[i] += n
    return tuple(totals)


#: one round: for each node, None (keep its list), or the pod kinds of a rebuilt list; its
#: verdict; the revision; minReadySeconds
rounds = st.lists(
    st.tuples(
        st.lists(
            st.one_of(st.none(), st.lists(st.sampled_from(POD_KINDS), max_size=2)), min_size=4, max_size=4
        ),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.sampled_from(REVISIONS),
        st.sampled_from([0, 0, 30]),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=120, deadline=None)
@given(rounds=rounds)
def test_remembered_node_shares_sum_to_a_fresh_count(rounds: list[Any]) -> None:
    nodes = [{"metadata": {"name": f"n{i}"}} for i in range(4)]
    counts = NodeCounts()
    by_node: dict[str, list[JSON]] = {}
    for step, (lists, runs, revision, min_ready) in enumerate(rounds):
        by_node = dict(by_node)  # a new dict each sync, unchanged lists kept (as PodsByNode does)
        for i, kinds in enumerate(lists):
            if kinds is not None:
                by_node[f"n{i}"] = [_pod(f"n{i}", j, kind) for j, kind in enumerate(kinds)]
        verdicts = [(run, run) for run in runs]
        kw = {"revision": revision, "min_ready": min_ready, "now": 1_800_000_000.0 + step}
        assert counts.count(nodes, verdicts, by_node, **kw) == _fresh(nodes, verdicts, by_node, **kw)


@pytest.mark.usefixtures("default_mode")
def test_a_kept_list_is_counted_once_and_a_turned_verdict_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetaint.controllers.daemonset import statuscounts

    counted: list[str] = []
    plain = statuscounts.node_counts

    def counting(pods: list[JSON], *args: Any) -> Any:
        counted.append(pods[0]["metadata"]["name"])
        return plain(pods, *args)

    monkeypatch.setattr(statuscounts, "node_counts", counting)
    nodes = [{"metadata": {"name": "n0"}}, {"metadata": {"name": "n1"}}]
    by_node = {"n0": [_pod("n0", 0, "ready-new")], "n1": [_pod("n1", 0, "unready")]}
    counts = NodeCounts()
    kw = {"revision": "rev-a", "min_ready": 0, "now": 0.0}
    first = counts.count(nodes, [(True, True), (True, True)], by_node, **kw)
    again = counts.count(nodes, [(True, True), (True, True)], dict(by_node), **kw)
    assert first == again == (2, 2, 0, 1, 1, 2)
    assert counted == ["n0-0", "n1-0"]
    turned = counts.count(nodes, [(True, True), (False, False)], by_node, **kw)
    assert turned == (1, 1, 1, 1, 1, 1) and counted[2:] == ["n1-0"]
    counts.count(nodes, [(True, True), (False, False)], by_node, **{**kw, "revision": "rev-b"})
    assert counted[3:] == ["n0-0", "n1-0"]
    counts.count(nodes, [(True, True), (False, False)], by_node, **{**kw, "min_ready": 5})
    assert counted[5:] == ["n0-0", "n1-0"]  # minReadySeconds: nothing reused


#: one round for `count_changed`: for each node, None (keep its list) or the pod kinds of a
#: rebuilt list; its verdict; the revision; whether the node order is a new token
changed_rounds = st.lists(
    st.tuples(
        st.lists(
            st.one_of(st.none(), st.lists(st.sampled_from(POD_KINDS), max_size=2)), min_size=4, max_size=4
        ),
        st.lists(st.booleans(), min_size=4, max_size=4),
        st.sampled_from(REVISIONS),
        st.booleans(),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(rounds=changed_rounds)
def test_counting_only_the_changed_nodes_sums_to_a_fresh_count(rounds: list[Any]) -> None:
    nodes = [{"metadata": {"name": f"n{i}"}} for i in range(4)]
    counts = NodeCounts()
    source = object()
    order: object = object()
    by_node: dict[str, list[JSON]] = {}
    for step, (lists, runs, revision, new_order) in enumerate(rounds):
        by_node = dict(by_node)  # a new dict each sync, unchanged lists kept (as PodsByNode does)
        changed: set[str] = set()
        for i, kinds in enumerate(lists):
            if kinds is not None:
                by_node[f"n{i}"] = [_pod(f"n{i}", j, kind) for j, kind in enumerate(kinds)]
                changed.add(f"n{i}")
        if new_order:
            order = object()
        verdicts = [(run, run) for run in runs]
        got = counts.count_changed(
            nodes, verdicts, by_node, source=source, order=order, changed=changed, revision=revision
        )
        assert got == _fresh(nodes, verdicts, by_node, revision=revision, min_ready=0, now=float(step))
