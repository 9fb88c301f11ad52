"""The DaemonSet controller's shortcuts across syncs (the index of the pods a DaemonSet controls,
the verdicts kept while no node's labels or spec change, the status counts of the changed nodes
only, a rolling update without old pods planned at once) write exactly what the controller
writes with every shortcut off (the reference mode), whatever the nodes, their pods, the
template and the pods of other controllers do between the syncs."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.test_daemonset_node_scans import NODE_KINDS, NS, _setup
from controllers.workload_builders import node, owner_ref, pod
from kubetaint.controllers.daemonset.placement import target_node_name
from kubetaint.speed.reference import reference_mode_set
from kubetaint.store.changes import each_event
from kubetaint.store.interface import WatchEvent

NODES = 4
STEP = st.one_of(
    st.tuples(st.just("node"), st.integers(0, NODES - 1), st.sampled_from(sorted(NODE_KINDS))),
    st.tuples(
        st.just("phase"), st.integers(0, NODES - 1), st.sampled_from(["Failed", "Succeeded", "Running"])
    ),
    st.tuples(st.just("template"), st.integers(0, 2), st.just("")),
    st.tuples(st.just("other"), st.integers(0, NODES - 1), st.sampled_from(["rs", "bare"])),
)


def _run(steps: list[tuple[str, int, str]], *, reference: bool) -> list[str]:
    with reference_mode_set(reference):
        controller, _ds, store, clock = _setup(["plain"] * NODES)
        seen: list[WatchEvent] = []
        store.subscribe(each_event(seen.append))
        clock.run_pending()
        for n, (kind, i, value) in enumerate(steps):
            if kind == "node":
                current = store.get("nodes", "", f"n{i}")
                body = node(f"n{i}", **NODE_KINDS[value])
                store.update("nodes", {**body, "metadata": {**current["metadata"], **body["metadata"]}})
            elif kind == "phase":  # the DaemonSet's pod for node i bound there, in that phase
                for obj in store.list("pods", namespace=NS).items:
                    if target_node_name(obj) == f"n{i}" and not obj["metadata"].get("deletionTimestamp"):
                        spec = {**obj["spec"], "nodeName": f"n{i}"}
                        store.update("pods", {**obj, "spec": spec, "status": {"phase": value}})
                        break
            elif kind == "template":
                current = store.get("daemonsets.apps", NS, "agent")
                spec = json.loads(json.dumps(current["spec"]))
                spec["template"]["metadata"].setdefault("annotations", {})["v"] = str(i)
                store.update("daemonsets.apps", {**current, "spec": spec})
            else:
                owner = (
                    owner_ref({"metadata": {"name": "web", "uid": "rs-uid"}}, "ReplicaSet")
                    if value == "rs"
                    else None
                )
                store.create("pods", pod(f"other-{n}", namespace=NS, node_name=f"n{i}", owner=owner))
            clock.advance(2.0)
            clock.run_pending()
        controller.stop()
    return [json.dumps([e.type, e.resource, e.resource_version, e.object], sort_keys=True) for e in seen]


@settings(max_examples=40, deadline=None)
@given(st.lists(STEP, max_size=8))
def test_syncs_write_what_the_reference_mode_writes(steps: list[tuple[str, int, str]]) -> None:
    assert _run(steps, reference=False) == _run(steps, reference=True)


def test_a_template_change_replaces_the_pods_in_both_modes() -> None:
    steps = [("template", 1, ""), ("phase", 0, "Running")]
    default, reference = _run(steps, reference=False), _run(steps, reference=True)
    assert default == reference
    assert sum('"DELETED", "pods"' in line for line in default) > 0
