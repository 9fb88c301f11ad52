"""The DaemonSet controller's passes over the nodes take a node without pods the short way:
`manage` creates and deletes what podsShouldBeOnNode of every node asks for (creating on each
node without pods where the DaemonSet should run), and `update_status` counts what counting every
node's scheduled pods counts, for any mix of nodes (placed, tainted NoSchedule or NoExecute,
selected out) and pods (none, one or two per node, scheduled or not, running, failed or being
deleted); and the pod template's spec is daemon_pod_spec's with the node affinity, whatever
the template became since (even in place)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import daemonset, make_env, node, owner_ref, pod
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.controllers.daemonset.placement import (
    PlacementMemo,
    daemon_pod_spec,
    node_name_affinity,
    node_should_run_daemon_pod,
)
from kubetaint.controllers.daemonset.statuscounts import scheduled_counts

JSON = dict[str, Any]
NS = "kube-system"
NODE_KINDS = {
    "plain": {},
    "no-schedule": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "no-execute": {"taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]},
    "other-zone": {"labels": {"zone": "b"}},
}
POD_KINDS = ["running", "failed", "succeeded", "pending-unscheduled", "deleting"]


def _daemon_pod(ds: JSON, node_name: str, i: int, kind: str) -> JSON:
    phase = {"failed": "Failed", "succeeded": "Succeeded", "pending-unscheduled": "Pending"}.get(
        kind, "Running"
    )
    extra = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if kind == "deleting" else {}
    obj = pod(
        f"agent-{node_name}-{i}",
        namespace=NS,
        labels={"app": "agent"},
        node_name="" if kind == "pending-unscheduled" else node_name,
        phase=phase,
        owner=owner_ref(ds, "DaemonSet"),
        created=f"2026-01-01T00:00:0{i}Z",
        **extra,
    )
    obj["spec"]["affinity"] = node_name_affinity(None, node_name)
    return obj


def _setup(nodes: list[str]) -> tuple[DaemonSetController, JSON, Any, Any]:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    controller.start()
    for i, kind in enumerate(nodes):
        store.create("nodes", node(f"n{i}", **NODE_KINDS[kind]))
    ds_body = daemonset("agent")
    ds_body["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
    ds_body["spec"]["template"]["spec"].pop("nodeSelector")
    ds_body["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]
            }
        }
    }
    ds = store.create("daemonsets.apps", ds_body)
    return controller, ds, store, clock


def _reference_manage(controller: DaemonSetController, ds: JSON, by_node: dict[str, list[JSON]]) -> Any:
    create: list[str] = []
    delete: list[str] = []
    for n in sorted(controller.nodes.items(), key=lambda n: n["metadata"]["name"]):
        made, gone = controller.pods_should_be_on_node(n, ds, by_node.get(n["metadata"]["name"], []))
        create.extend(made)
        delete.extend(p["metadata"]["name"] for p in gone)
    return create, delete


def _reference_counts(controller: DaemonSetController, ds: JSON, by_node: dict[str, list[JSON]]) -> JSON:
    desired = current = misscheduled = ready = available = updated = 0
    revision = controller._template_hash(ds["spec"]["template"], None)
    for n in controller.nodes.items():
        should_run, _ = node_should_run_daemon_pod(n, ds)
        scheduled = [p for p in by_node.get(n["metadata"]["name"], []) if p["spec"].get("nodeName")]
        if should_run:
            desired += 1
            if scheduled:
                current += 1
                r, a, u = scheduled_counts(scheduled, revision, 0, 0.0)
                ready, available, updated = ready + r, available + a, updated + u
        elif scheduled:
            misscheduled += 1
    return {
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": current,
        "numberMisscheduled": misscheduled,
        "numberReady": ready,
        "numberAvailable": available,
        "updatedNumberScheduled": updated,
        "numberUnavailable": desired - available,
    }


def _pods_by_node(ds: JSON, nodes: list[str], pods: list[list[str]]) -> dict[str, list[JSON]]:
    by_node: dict[str, list[JSON]] = {}
    for i, kinds in enumerate(pods[: len(nodes)]):
        if kinds:
            by_node[f"n{i}"] = [_daemon_pod(ds, f"n{i}", j, kind) for j, kind in enumerate(kinds)]
    by_node["gone"] = [_daemon_pod(ds, "gone", 0, "running")]  # a node no longer there
    by_node["n-empty"] = []  # an emptied node's entry
    return by_node


def _check(nodes: list[str], pods: list[list[str]]) -> None:
    # the reference on a twin controller: deleting failed pods leaves a backoff behind
    twin, twin_ds, _, _ = _setup(nodes)
    expected = _reference_manage(twin, twin_ds, _pods_by_node(twin_ds, nodes, pods))
    controller, ds, store, _ = _setup(nodes)
    by_node = _pods_by_node(ds, nodes, pods)
    made: list[str] = []
    deleted: list[str] = []
    controller._create_pod = lambda _ds, name: made.append(name)  # type: ignore[method-assign]
    controller._delete_pod = lambda _ds, p: deleted.append(p["metadata"]["name"])  # type: ignore[method-assign]
    controller.manage(ds, by_node)
    assert (made, deleted) == expected
    controller.update_status(ds, by_node)
    status = store.get("daemonsets.apps", NS, "agent").get("status") or {}
    counts = {k: v for k, v in status.items() if k != "observedGeneration"}
    assert counts == _reference_counts(controller, ds, by_node)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(st.sampled_from(list(NODE_KINDS)), min_size=1, max_size=6),
    pods=st.lists(st.lists(st.sampled_from(POD_KINDS), max_size=2), max_size=6),
)
def test_node_passes_decide_and_count_as_every_node_asked_in_full(
    nodes: list[str], pods: list[list[str]]
) -> None:
    _check(nodes, pods)


@pytest.mark.parametrize(
    ("nodes", "pods"),
    [
        pytest.param(["plain", "plain"], [[], []], id="no pods anywhere: a pod for each placed node"),
        pytest.param(["other-zone", "no-schedule"], [[], []], id="nodes it should not run on: nothing"),
        pytest.param(
            ["no-execute", "other-zone"],
            [["running"], ["running"]],
            id="pods where it should not run are deleted and counted misscheduled",
        ),
        pytest.param(
            ["plain", "plain"], [["failed"], ["running", "running"]], id="a failed pod and a duplicate"
        ),
    ],
)
def test_node_passes_in_cases(nodes: list[str], pods: list[list[str]]) -> None:
    _check(nodes, pods)


def _reference_template_spec(ds: JSON, node_name: str) -> JSON:
    spec = daemon_pod_spec(ds)
    spec["affinity"] = node_name_affinity(spec.get("affinity"), node_name)
    return spec


TEMPLATE_CHANGES = [
    pytest.param(None, id="the template as made"),
    pytest.param(("hostNetwork", True), id="host network: one toleration more"),
    pytest.param(
        (
            "tolerations",
            [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
        ),
        id="a default toleration of its own, replaced",
    ),
    pytest.param(("tolerations", [{"key": "k", "operator": "Exists"}]), id="a toleration of its own, kept"),
]


@pytest.mark.parametrize("change", TEMPLATE_CHANGES)
def test_pod_template_spec_is_daemon_pod_spec_with_the_node_affinity(change: Any) -> None:
    controller, ds, _, _ = _setup(["plain"])
    first = controller.pod_template(ds, "n0")["spec"]
    assert first == _reference_template_spec(ds, "n0")
    if change is not None:  # changed in place, on purpose: the remembered spec must notice
        ds["spec"]["template"]["spec"][change[0]] = change[1]
    for name in ("n0", "n1"):
        made = controller.pod_template(ds, name)["spec"]
        assert made == _reference_template_spec(ds, name)
    assert made is not controller.pod_template(ds, "n1")["spec"]  # each pod its own spec dict


@settings(max_examples=60, deadline=None)
@given(
    passes=st.lists(
        st.lists(
            st.tuples(
                st.integers(0, 3), st.sampled_from([*NODE_KINDS, "same", "taints only", "untaint only"])
            ),
            max_size=5,
        ),
        min_size=1,
        max_size=5,
    ),
    comparison=st.booleans(),
)
def test_placement_verdicts_of_a_pass_are_each_nodes_own(
    passes: list[list[tuple[int, str]]], comparison: bool
) -> None:
    """Passes over nodes that change between them (or stay the very objects) answer what
    node_should_run_daemon_pod answers for each node."""
    memo = PlacementMemo()
    ds = daemonset("agent")
    nodes = {i: node(f"n{i}") for i in range(4)}
    for changes in passes:
        for i, kind in changes:
            if kind in ("taints only", "untaint only"):  # the very metadata (labels), a new spec
                spec = NODE_KINDS["no-schedule"] if kind == "taints only" else {}
                nodes[i] = {**nodes[i], "spec": dict(spec)}
            elif kind != "same":
                nodes[i] = node(f"n{i}", **NODE_KINDS[kind])
        listed = list(nodes.values())
        expected = [node_should_run_daemon_pod(n, ds, enable_comparison=comparison) for n in listed]
        assert memo.verdicts(listed, ds, enable_comparison=comparison) == expected
