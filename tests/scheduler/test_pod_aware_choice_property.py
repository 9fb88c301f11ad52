"""Property: with every default plugin on (InterPodAffinity and PodTopologySpread among them),
each cycle's chosen node passes every filter as judged afresh (a new scheduler, no counts kept
between cycles, one node at a time) and has the highest total score among the nodes scored; a pod
left unscheduled fits no node judged afresh."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetaint.clock.virtual import VirtualClock
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.scheduler import Scheduler
from scheduler.pod_affinity_builders import expr, make_node, make_pod, term, weighted

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
APPS = ("a", "b")

topology_keys = st.sampled_from((HOST, ZONE))
apps = st.sampled_from(APPS)


@st.composite
def nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(2, 6))
    out = []
    for i in range(count):
        labels = {HOST: f"n{i}"}
        zone = draw(st.sampled_from(("z1", "z2", "z3", None)))
        if zone is not None:
            labels[ZONE] = zone
        out.append(make_node(f"n{i}", labels))
    return out


@st.composite
def pod_shape(draw: st.DrawFn, name: str, node: str = "") -> dict[str, Any]:
    app = draw(apps)
    kw: dict[str, Any] = {}
    if draw(st.booleans()):
        kw["anti_affinity"] = [term(draw(topology_keys), expr("app", "In", draw(apps)))]
    if not node and draw(st.integers(0, 3)) == 0:
        kw["affinity"] = [term(draw(topology_keys), expr("app", "In", draw(apps)))]
    if draw(st.booleans()):
        kw["preferred_affinity"] = [
            weighted(draw(st.integers(1, 100)), term(draw(topology_keys), expr("app", "In", draw(apps))))
        ]
    if draw(st.booleans()):
        kw["preferred_anti_affinity"] = [
            weighted(draw(st.integers(1, 100)), term(draw(topology_keys), expr("app", "In", draw(apps))))
        ]
    if not node and draw(st.booleans()):
        kw["spread"] = [
            {
                "maxSkew": draw(st.integers(1, 2)),
                "topologyKey": draw(topology_keys),
                "whenUnsatisfiable": draw(st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    return make_pod(name, node=node, labels={"app": app}, **kw)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    node_list = draw(nodes())
    names = [n["metadata"]["name"] for n in node_list]
    existing = [
        draw(pod_shape(f"e{i}", draw(st.sampled_from(names)))) for i in range(draw(st.integers(0, 6)))
    ]
    pending = [draw(pod_shape(f"p{i}")) for i in range(draw(st.integers(1, 5)))]
    return node_list, existing, pending


def _fresh_verdicts(
    sched: Scheduler, node_list: list[dict[str, Any]], pod: dict[str, Any]
) -> dict[str, bool]:
    fresh = Scheduler(VirtualClock(), random.Random(0))
    for n in node_list:
        fresh.add_node(n)
    for ni in sched.cache.node_list():
        for p in ni.pods.values():
            fresh.cache.add_pod({**p.pod, "spec": {**p.pod["spec"], "nodeName": ni.name}})
    pi = make_pod_info(pod)
    fw = fresh.framework_for(pi)
    state = CycleState()
    pre = fw.run_pre_filter_plugins(state, pi, fresh.cache.node_list())
    if not pre.status.is_success():
        return {ni.name: False for ni in fresh.cache.node_list()}
    return {ni.name: fw.run_filter(state, pi, ni).is_success() for ni in fresh.cache.node_list()}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_the_chosen_node_is_feasible_and_top_scored(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    node_list, existing, pending = cluster
    sched = Scheduler(VirtualClock(), random.Random(1))
    for n in node_list:
        sched.add_node(n)
    for p in existing:
        sched.add_pod(p)
    by_name = {p["metadata"]["name"]: p for p in pending}
    for p in pending:
        sched.add_pod(p)
    while True:
        result = sched.schedule_one()
        if result is None:
            break
        pod = by_name[result.pod["metadata"]["name"]]
        # judged afresh against the cluster as it was for this cycle (the chosen node is now assumed)
        if result.node is not None:
            sched.cache.forget_pod(make_pod_info(pod).key)
        verdicts = _fresh_verdicts(sched, node_list, pod)
        if result.node is None:
            assert not any(verdicts.values()), verdicts
            continue
        assert verdicts[result.node], (result.node, verdicts)
        evaluation = result.evaluation
        assert evaluation is not None
        feasible = [ni.name for ni in evaluation.feasible]
        assert set(feasible) <= {name for name, ok in verdicts.items() if ok}
        if evaluation.total_scores is not None and len(feasible) > 1:
            totals = evaluation.total_scores
            assert totals[feasible.index(result.node)] == np.max(totals)
        sched.cache.assume_pod(make_pod_info(pod), result.node)
