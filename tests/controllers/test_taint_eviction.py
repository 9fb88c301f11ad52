"""The taint eviction controller on the virtual clock: upstream's taint_eviction_test.go scenarios
as data, with exact deletion times instead of upstream's polling windows."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.speed.reference import reference_mode_set

from .builders import Cluster, node, pod, taint, toleration, upstream_taint, upstream_toleration


def start(cluster: Cluster) -> TaintEvictionController:
    controller = TaintEvictionController(cluster.store, cluster.clock)
    controller.start()
    cluster.run_until(cluster.t)
    return controller


def tolerating(name: str, node_name: str, *seconds_by_index: tuple[int, int | None]) -> dict:
    return pod(name, node_name, tolerations=[upstream_toleration(i, s) for i, s in seconds_by_index])


# ---------------------------------------------------------------------------------------------
# the done-when


def test_pod_tolerating_for_an_hour_is_deleted_exactly_an_hour_after_the_taint() -> None:
    c = Cluster()
    c.create("nodes", node("n1"))
    c.create("pods", pod("p1", "n1", tolerations=[toleration("key1", "value1", seconds=3600)]))
    controller = start(c)
    c.run_until(100)
    c.set_node_taints("n1", [taint("key1", "value1", "NoExecute")])
    c.run_until(100)
    assert controller.scheduled_deletion("default", "p1") == c.at(3700)
    c.run_until(3699.999)
    assert c.pod("p1") is not None
    c.run_until(3700)
    assert c.deletions() == [(3700.0, "p1")]
    assert c.event_log("TaintManagerEviction") == [
        ("2026-01-01T01:01:40Z", "Marking for deletion Pod default/p1")
    ]


def test_removing_the_taint_at_3599s_cancels_the_deletion() -> None:
    c = Cluster()
    c.create("nodes", node("n1"))
    c.create("pods", pod("p1", "n1", tolerations=[toleration("key1", "value1", seconds=3600)]))
    start(c)
    c.set_node_taints("n1", [taint("key1", "value1", "NoExecute")])
    c.run_until(3599)
    c.set_node_taints("n1", [])
    c.run_until(10 * 3600)
    assert c.deletions() == []
    assert c.pod("p1") is not None
    assert c.event_log("TaintManagerEviction") == [
        ("2026-01-01T00:59:59Z", "Cancelling deletion of Pod default/p1")
    ]


# ---------------------------------------------------------------------------------------------
# TestCreatePod: a pod appears (t=1) on a node already tainted with testTaint1


@pytest.mark.parametrize(
    ("new_pod", "node_taints", "deleted_at"),
    [
        pytest.param(pod("pod1", ""), [upstream_taint(1)], None, id="not scheduled - ignore"),
        pytest.param(pod("pod1", "node1"), [], None, id="scheduled on untainted Node"),
        pytest.param(pod("pod1", "node1"), [upstream_taint(1)], 1.0, id="schedule on tainted Node"),
        pytest.param(
            tolerating("pod1", "node1", (1, 100)),
            [upstream_taint(1)],
            101.0,
            id="schedule on tainted Node with finite toleration",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, None)),
            [upstream_taint(1)],
            None,
            id="schedule on tainted Node with infinite toleration",
        ),
        pytest.param(
            tolerating("pod1", "node1", (2, None)),
            [upstream_taint(1)],
            1.0,
            id="schedule on tainted Node with infinite invalid toleration",
        ),
    ],
)
def test_create_pod(new_pod: dict, node_taints: list, deleted_at: float | None) -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=node_taints))
    start(c)
    c.run_until(1)
    c.create("pods", new_pod)
    c.run_until(10_000)
    assert c.deletions() == ([] if deleted_at is None else [(deleted_at, "pod1")])
    if deleted_at is not None:
        assert c.pod_changes("pod1") == [(1.0, "ADDED"), (deleted_at, "MODIFIED"), (deleted_at, "DELETED")]


def test_delete_pod_cancels_its_timer_with_an_event() -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    c.create("pods", tolerating("pod1", "node1", (1, 100)))
    controller = start(c)
    assert controller.scheduled_deletion("default", "pod1") == c.at(100)
    c.run_until(10)
    c.store.delete("pods", "default", "pod1")
    c.run_until(1000)
    assert controller.scheduled_deletion("default", "pod1") is None
    assert c.event_log("TaintManagerEviction") == [
        ("2026-01-01T00:00:10Z", "Cancelling deletion of Pod default/pod1")
    ]


# ---------------------------------------------------------------------------------------------
# TestUpdatePod: prev pod at t=1, new pod at t=2 (the node carries testTaint1 throughout)


@pytest.mark.parametrize(
    ("prev_pod", "new_pod", "deleted_at", "events"),
    [
        pytest.param(
            pod("pod1", ""),
            pod("pod1", "node1"),
            2.0,
            ["Marking for deletion Pod default/pod1"],
            id="scheduling onto tainted Node",
        ),
        pytest.param(
            tolerating("pod1", "", (1, None)),
            tolerating("pod1", "node1", (1, None)),
            None,
            [],
            id="scheduling onto tainted Node with toleration",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, 100)),
            pod("pod1", "node1"),
            2.0,
            ["Cancelling deletion of Pod default/pod1", "Marking for deletion Pod default/pod1"],
            id="removing toleration",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, 10)),
            tolerating("pod1", "node1", (1, 100)),
            11.0,
            ["Marking for deletion Pod default/pod1"],
            id="lengthening toleration shouldn't work",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, 100)),
            tolerating("pod1", "node1", (1, 10)),
            101.0,
            ["Marking for deletion Pod default/pod1"],
            id="shortening toleration does not move the deadline either",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, 100)),
            tolerating("pod1", "node1", (1, None)),
            None,
            ["Cancelling deletion of Pod default/pod1"],
            id="making the toleration unbounded cancels the timer",
        ),
    ],
)
def test_update_pod(prev_pod: dict, new_pod: dict, deleted_at: float | None, events: list[str]) -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    start(c)
    c.run_until(1)
    created = c.create("pods", prev_pod)
    c.run_until(2)
    c.store.update("pods", {**new_pod, "metadata": created["metadata"]})
    c.run_until(10_000)
    assert c.deletions() == ([] if deleted_at is None else [(deleted_at, "pod1")])
    assert [message for _, message in c.event_log("TaintManagerEviction")] == events


# ---------------------------------------------------------------------------------------------
# TestCreateNode: pods exist, the node appears at t=1


@pytest.mark.parametrize(
    ("existing", "node_taints", "deleted_at"),
    [
        pytest.param(pod("pod1", "node1"), [], None, id="Creating Node matching already assigned Pod"),
        pytest.param(
            pod("pod1", "node1"),
            [upstream_taint(1)],
            1.0,
            id="Creating tainted Node matching already assigned Pod",
        ),
        pytest.param(
            tolerating("pod1", "node1", (1, None)),
            [upstream_taint(1)],
            None,
            id="Creating tainted Node matching already assigned tolerating Pod",
        ),
    ],
)
def test_create_node(existing: dict, node_taints: list, deleted_at: float | None) -> None:
    c = Cluster()
    c.create("pods", existing)
    start(c)
    c.run_until(1)
    c.create("nodes", node("node1", taints=node_taints))
    c.run_until(10_000)
    assert c.deletions() == ([] if deleted_at is None else [(deleted_at, "pod1")])


def test_delete_node_forgets_its_taints_but_cancels_nothing() -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    c.create("pods", tolerating("pod1", "node1", (1, 100)))
    controller = start(c)
    assert "node1" in controller.tainted_nodes
    c.run_until(10)
    c.delete_node("node1")
    c.run_until(10)
    assert "node1" not in controller.tainted_nodes
    c.run_until(1000)
    assert c.deletions("pods") == [(100.0, "pod1")]
    assert [m for _, m in c.event_log("TaintManagerEviction")] == ["Marking for deletion Pod default/pod1"]


# ---------------------------------------------------------------------------------------------
# TestUpdateNode: pods exist on an untainted node; its taints change at t=1


@dataclass
class NodeUpdateCase:
    pods: list[dict]
    new_taints: list[dict]
    deletions: list[tuple[float, str]]
    later_taints: list[dict] | None = None
    later_at: float = 0.0
    cancel_events: int = 0
    extra: dict = field(default_factory=dict)


MULTI_TOLERATION_POD = pod(
    "pod1",
    "node1",
    tolerations=[upstream_toleration(1, 1), upstream_toleration(2, 100)],
    ready=True,
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            NodeUpdateCase([pod("pod1", "node1")], [upstream_taint(1)], [(1.0, "pod1")]), id="Added taint"
        ),
        pytest.param(
            NodeUpdateCase([tolerating("pod1", "node1", (1, 100))], [upstream_taint(1)], [(101.0, "pod1")]),
            id="Added tolerated taint",
        ),
        pytest.param(
            NodeUpdateCase(
                [tolerating("pod1", "node1", (1, 100))],
                [upstream_taint(1), upstream_taint(2)],
                [(1.0, "pod1")],
            ),
            id="Only one added taint tolerated",
        ),
        pytest.param(
            NodeUpdateCase(
                [tolerating("pod1", "node1", (1, 1))],
                [upstream_taint(1)],
                [],
                later_taints=[],
                later_at=1.5,
                cancel_events=1,
            ),
            id="Taint removed",
        ),
        pytest.param(
            NodeUpdateCase([MULTI_TOLERATION_POD], [upstream_taint(1), upstream_taint(2)], [(2.0, "pod1")]),
            id="Pod with multiple tolerations are evicted when first one runs out",
        ),
        pytest.param(
            NodeUpdateCase(
                [
                    pod("pod1", "node1"),
                    tolerating("pod2", "node1", (1, 1)),
                    tolerating("pod3", "node1", (1, None)),
                ],
                [upstream_taint(1)],
                [(1.0, "pod1"), (2.0, "pod2")],
            ),
            id="Pods with different toleration times are evicted appropriately",
        ),
        pytest.param(
            NodeUpdateCase(
                [
                    pod("pod1", "node1"),
                    tolerating("pod2", "node1", (1, 1)),
                    tolerating("pod3", "node1", (1, None)),
                ],
                [upstream_taint(1), upstream_taint(2)],
                [(1.0, "pod1"), (1.0, "pod2"), (1.0, "pod3")],
            ),
            id="Evict all pods not matching all taints instantly",
        ),
    ],
)
def test_update_node(case: NodeUpdateCase) -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    for p in case.pods:
        c.create("pods", p)
    start(c)
    c.run_until(1)
    c.set_node_taints("node1", case.new_taints)
    if case.later_taints is not None:
        c.run_until(case.later_at)
        c.set_node_taints("node1", case.later_taints)
    c.run_until(10_000)
    assert c.deletions() == case.deletions
    cancels = [m for _, m in c.event_log("TaintManagerEviction") if m.startswith("Cancelling")]
    assert len(cancels) == case.cancel_events


def test_update_node_with_multiple_taints() -> None:
    """no taint → unbounded-tolerated taint → plus a 60s-tolerated taint → back: no deletion."""
    taint1, taint2 = upstream_taint(1), upstream_taint(2)
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create(
        "pods",
        pod(
            "pod1",
            "node1",
            tolerations=[
                toleration("testTaint1", operator="Exists"),
                toleration("testTaint2", operator="Exists", seconds=60),
            ],
        ),
    )
    controller = start(c)
    assert controller.scheduled_deletion("default", "pod1") is None
    c.set_node_taints("node1", [taint1])
    c.run_until(1)
    assert controller.scheduled_deletion("default", "pod1") is None, "permanently tolerated taint"
    c.set_node_taints("node1", [taint1, taint2])
    c.run_until(2)
    assert controller.scheduled_deletion("default", "pod1") == c.at(61)
    c.set_node_taints("node1", [taint1])
    c.run_until(3)
    assert controller.scheduled_deletion("default", "pod1") is None
    c.run_until(1000)
    assert c.deletions() == []
    assert c.event_log("TaintManagerEviction") == [
        ("2026-01-01T00:00:02Z", "Cancelling deletion of Pod default/pod1")
    ]


# ---------------------------------------------------------------------------------------------
# TestEventualConsistency: node tainted at t=1 (pod1 goes at once); pod2 arrives at t=2


@pytest.mark.parametrize(
    ("prev_pod", "new_pod", "pod2_deleted_at"),
    [
        pytest.param(
            pod("pod2", ""), pod("pod2", "node1"), 2.0, id="existing pod2 scheduled onto tainted Node"
        ),
        pytest.param(
            tolerating("pod2", "", (1, 100)),
            tolerating("pod2", "node1", (1, 100)),
            102.0,
            id="existing pod2 with taint toleration scheduled onto tainted Node",
        ),
        pytest.param(None, pod("pod2", "node1"), 2.0, id="new pod2 created on tainted Node"),
        pytest.param(
            None,
            tolerating("pod2", "node1", (1, 100)),
            102.0,
            id="new pod2 with taint toleration created on tainted Node",
        ),
    ],
)
def test_eventual_consistency(prev_pod: dict | None, new_pod: dict, pod2_deleted_at: float) -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create("pods", pod("pod1", "node1"))
    created = c.create("pods", prev_pod) if prev_pod is not None else None
    start(c)
    c.run_until(1)
    c.set_node_taints("node1", [upstream_taint(1)])
    c.run_until(2)
    if created is None:
        c.create("pods", new_pod)
    else:
        c.store.update("pods", {**new_pod, "metadata": created["metadata"]})
    c.run_until(10_000)
    assert c.deletions() == [(1.0, "pod1"), (pod2_deleted_at, "pod2")]


# ---------------------------------------------------------------------------------------------
# events and the deletion path


def test_pod_deletion_and_cancel_events_have_upstream_fields() -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    c.create("pods", pod("test", "node1", namespace="test", tolerations=[upstream_toleration(1, 5)]))
    start(c)
    c.run_until(1)
    c.set_node_taints("node1", [])
    c.run_until(2)
    c.set_node_taints("node1", [upstream_taint(2)])
    c.run_until(3)
    events = c.events("TaintManagerEviction")
    assert [(e["type"], e["message"]) for e in events] == [
        ("Normal", "Cancelling deletion of Pod test/test"),
        ("Normal", "Marking for deletion Pod test/test"),
    ]
    for event in events:
        assert event["metadata"]["namespace"] == "test"
        assert event["source"] == {"component": "taint-eviction-controller"}
        assert event["count"] == 1
        ref = event["involvedObject"]
        assert (ref["kind"], ref["apiVersion"], ref["namespace"], ref["name"]) == (
            "Pod",
            "v1",
            "test",
            "test",
        )


def test_disruption_target_condition_is_written_before_the_delete() -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create("pods", pod("pod1", "node1", ready=True))
    start(c)
    c.run_until(7)
    c.set_node_taints("node1", [upstream_taint(1)])
    c.run_until(8)
    final = c.last_state[("pods", "pod1")]
    assert final["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByTaintManager",
            "message": "Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": "2026-01-01T00:00:07Z",
        },
    ]


def test_status_is_not_rewritten_when_the_condition_is_already_there() -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    existing = pod("pod1", "node1")
    existing["status"]["conditions"] = [
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByTaintManager",
            "message": "Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        }
    ]
    c.create("pods", existing)
    start(c)
    c.set_node_taints("node1", [upstream_taint(1)])
    c.run_until(1)
    assert c.pod_changes("pod1") == [(0.0, "ADDED"), (0.0, "DELETED")]


class FlakyDeletes:
    """Makes the next `failures` pod deletes fail with a 500 (store faults, not controller code)."""

    def __init__(self, cluster: Cluster, failures: int) -> None:
        self.failures = failures
        self.attempts: list[float] = []
        original = cluster.store.delete

        def delete(resource: str, namespace: str, name: str, **kwargs: object) -> dict:
            if resource == "pods":
                self.attempts.append(round(cluster.t, 6))
                if self.failures > 0:
                    self.failures -= 1
                    from kubetaint.api.errors import internal_error

                    raise internal_error("etcdserver: request timed out")
            return original(resource, namespace, name, **kwargs)  # type: ignore[arg-type]

        cluster.store.delete = delete  # type: ignore[method-assign]


def test_failed_deletes_are_retried_10ms_apart() -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create("pods", pod("pod1", "node1"))
    flaky = FlakyDeletes(c, failures=3)
    start(c)
    c.set_node_taints("node1", [upstream_taint(1)])
    c.run_until(1)
    assert flaky.attempts == [0.0, 0.01, 0.02, 0.03]
    assert c.deletions() == [(0.03, "pod1")]
    assert len(c.event_log("TaintManagerEviction")) == 1, "one Marking event per firing, not per attempt"


def test_deletion_gives_up_after_five_attempts_and_forgets_the_key() -> None:
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create("pods", pod("pod1", "node1"))
    flaky = FlakyDeletes(c, failures=100)
    controller = start(c)
    c.set_node_taints("node1", [upstream_taint(1)])
    c.run_until(0.045)
    assert "default/pod1" in controller.queue
    c.run_until(1)
    assert flaky.attempts == [0.0, 0.01, 0.02, 0.03, 0.04]
    assert "default/pod1" not in controller.queue
    assert c.pod("pod1") is not None


def test_a_stopped_controller_deletes_nothing() -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    c.create("pods", tolerating("pod1", "node1", (1, 10)))
    controller = start(c)
    controller.stop()  # pending timers are cancelled and later events are ignored
    c.create("pods", pod("pod2", "node1"))
    c.run_until(100)
    assert c.deletions() == []


def test_pod_gone_before_its_timer_fires_gives_up_after_five_gets() -> None:
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    c.create("pods", tolerating("pod1", "node1", (1, 10)))
    controller = start(c)
    assert "default/pod1" in controller.queue
    # the pod vanishes without the controller hearing of it (its informer missed the delete)
    controller.pods.stop()
    c.store.delete("pods", "default", "pod1")
    c.run_until(10.045)
    assert "default/pod1" in controller.queue, "still retrying"
    c.run_until(10.05)
    assert "default/pod1" not in controller.queue
    assert [m for _, m in c.event_log("TaintManagerEviction")] == ["Marking for deletion Pod default/pod1"]


def test_node_updates_are_handled_before_pending_pod_updates() -> None:
    """A pod bound to a node in the same instant the node loses its taint is not deleted."""
    c = Cluster()
    c.create("nodes", node("node1", taints=[upstream_taint(1)]))
    created = c.create("pods", pod("pod1", ""))
    start(c)
    c.run_until(1)
    c.store.update("pods", {**created, "spec": {**created["spec"], "nodeName": "node1"}})
    c.set_node_taints("node1", [])
    c.run_until(100)
    assert c.deletions() == []


@settings(max_examples=40, deadline=None)
@given(
    seconds=st.lists(st.one_of(st.none(), st.integers(min_value=-5, max_value=5000)), min_size=1, max_size=3),
    taint_at=st.integers(min_value=0, max_value=100),
    untaint_after=st.one_of(st.none(), st.integers(min_value=0, max_value=6000)),
)
def test_deletion_time_is_the_smallest_toleration_after_the_taint(
    seconds: list[int | None], taint_at: int, untaint_after: int | None
) -> None:
    """One NoExecute taint per toleration; the pod goes min(seconds) after the taints appear
    (at once for any value <= 0, never when all are unbounded), unless they go away first."""
    c = Cluster()
    c.create("nodes", node("node1"))
    c.create(
        "pods", pod("p", "node1", tolerations=[upstream_toleration(i, s) for i, s in enumerate(seconds)])
    )
    start(c)
    c.run_until(taint_at)
    c.set_node_taints("node1", [upstream_taint(i) for i in range(len(seconds))])
    bounded = [s for s in seconds if s is not None]
    deadline = None if not bounded else taint_at + max(0, min(bounded))
    if untaint_after is not None:
        c.run_until(taint_at + untaint_after)
        if deadline is None or taint_at + untaint_after < deadline:
            c.set_node_taints("node1", [])
            deadline = None
    c.run_until(taint_at + 10_000)
    assert c.deletions() == ([] if deadline is None else [(float(deadline), "p")])


# ---------------------------------------------------------------------------------------------
# a node whose NoExecute taints are gone, while no timer is pending anywhere, has its pods'
# cancellations skipped unlisted (each would find no work): the same deletions and events as
# listing them every time

_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("taint"), st.sampled_from(["n1", "n2"]), st.sampled_from(["a", "b", ""])),
        st.tuples(st.just("pod"), st.sampled_from(["n1", "n2"]), st.sampled_from([None, 0, 5, 50])),
        st.tuples(st.just("run"), st.just(""), st.sampled_from([1, 10, 100])),
    ),
    max_size=20,
)


def _history(steps: list[tuple[str, str, object]]) -> tuple[object, ...]:
    c = Cluster()
    for name in ("n1", "n2"):
        c.create("nodes", node(name))
    controller = TaintEvictionController(c.store, c.clock)
    controller.start()
    c.run_until(c.t)
    for i, (kind, name, arg) in enumerate(steps):
        if kind == "taint":
            c.set_node_taints(name, [taint(str(arg), "v", "NoExecute")] if arg else [])
        elif kind == "pod":
            seconds = arg if isinstance(arg, int) else None
            c.create("pods", pod(f"p{i}", name, tolerations=[toleration("a", "v", seconds=seconds)]))
        c.run_until(c.t + (arg if kind == "run" and isinstance(arg, int) else 0))
    c.run_until(c.t + 200)
    return tuple(c.deletions()), tuple(c.event_log()), len(controller.queue)


@settings(max_examples=60, deadline=None)
@given(_STEPS)
@example([("pod", "n1", 50), ("taint", "n1", "a"), ("run", "", 10), ("taint", "n1", ""), ("taint", "n2", "")])
def test_untainted_nodes_skip_listing_only_when_nothing_could_be_cancelled(
    steps: list[tuple[str, str, object]],
) -> None:
    with reference_mode_set(False):
        skipping = _history(steps)
    with reference_mode_set(True):
        listing = _history(steps)
    assert skipping == listing


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize(
    "tainted,handled",
    [
        pytest.param(False, 0, id="no node tainted: the start's pod updates are not recorded"),
        pytest.param(True, 3, id="a node tainted: its node update handles each of its pods"),
    ],
)
def test_pod_updates_are_recorded_only_when_something_could_be_evicted(tainted: bool, handled: int) -> None:
    c = Cluster()
    c.create("nodes", node("n1", taints=[taint("a", "v", "NoExecute")] if tainted else None))
    for i in range(3):
        c.create("pods", pod(f"p{i}", "n1", tolerations=[toleration("a", "v")]))
    controller = TaintEvictionController(c.store, c.clock)
    updates: list[object] = []
    processed: list[object] = []
    original_update, original_process = controller.handle_pod_update, controller._process_pod_on_node
    controller.handle_pod_update = lambda item: (updates.append(item), original_update(item))  # type: ignore[method-assign]
    controller._process_pod_on_node = lambda key, *rest: (processed.append(key), original_process(key, *rest))  # type: ignore[method-assign]
    controller.start()
    c.run_until(c.t + 1)
    assert (len(updates), len(processed)) == (0, handled)
    assert not controller._pod_updates
