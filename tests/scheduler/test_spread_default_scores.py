"""PodTopologySpread's scores of a pod under the system default constraints (its Service's
selector, hostname and zone, ScheduleAnyway) are the same with every shortcut on as in reference
mode (KUBETAINT_REFERENCE=1), whether every node has both topology keys or some lack the zone or
carry the value "", over every node or a part of them, with or without a node selector."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.speed.reference import reference_mode_set
from scheduler.pod_affinity_builders import make_node, make_pod, scheduler_with, scores

JSON = dict[str, Any]
PLUGIN = "PodTopologySpread"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default", "uid": "svc-web", "resourceVersion": "1"},
    "spec": {"selector": {"app": "web"}},
}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[JSON], list[JSON]]:
    count = draw(st.integers(1, 9))
    zones = st.sampled_from(["z1", "z2", "z3", "", None])
    every_zoned = draw(st.booleans())
    nodes = []
    for i in range(count):
        labels = {HOST: f"n{i}", "disk": draw(st.sampled_from(["ssd", "hdd"]))}
        zone = draw(st.sampled_from(["z1", "z2", "z3"]) if every_zoned else zones)
        if zone is not None:
            labels[ZONE] = zone
        nodes.append(make_node(f"n{i}", labels))
    pods = []
    for j in range(draw(st.integers(0, 30))):
        app = draw(st.sampled_from(["web", "db"]))
        p = make_pod(f"p{j}", node=f"n{draw(st.integers(0, count - 1))}", labels={"app": app})
        if draw(st.integers(0, 9)) == 0:
            p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        pods.append(p)
    return nodes, pods


def _scores(reference: bool, nodes: list[JSON], pods: list[JSON], pod: JSON, names: list[str] | None) -> Any:
    with reference_mode_set(reference):
        sched = scheduler_with(nodes, pods)
        sched.add_service(SERVICE)
        return scores(sched, PLUGIN, pod, names)


@settings(max_examples=80, deadline=None)
@given(clusters(), st.booleans(), st.booleans(), st.data())
def test_default_constraint_scores_match_the_reference_mode(
    cluster: tuple[list[JSON], list[JSON]], selector: bool, part: bool, data: st.DataObject
) -> None:
    nodes, pods = cluster
    pod = make_pod("incoming", labels={"app": "web"})
    if selector:
        pod["spec"]["nodeSelector"] = {"disk": "ssd"}
    names = None
    if part:
        names = data.draw(
            st.lists(st.sampled_from([n["metadata"]["name"] for n in nodes]), min_size=1, unique=True)
        )
    assert _scores(False, nodes, pods, pod, names) == _scores(True, nodes, pods, pod, names)
