"""The node lifecycle controller on the virtual clock: health timeouts, condition taints, NoExecute
tainting and its zone rate limits, the all-zones-down stop; with the taint eviction controller for
the end-to-end timing of pod deletion.

Kubelets renew Leases at t = 2, 12, 22, … (off the 5 s monitor grid, so every renewal is seen by
the next monitor pass); monitor passes run at t = 0, 5, 10, ….
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings, ZoneState
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.store.informer import Informer

from .builders import DAEMON_TOLERATIONS, DEFAULT_TOLERATIONS, Cluster, Kubelets, node, pod, taint
from .reference import in_reference_mode

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"


@dataclass
class Env:
    settings: NodeLifecycleSettings = field(default_factory=NodeLifecycleSettings)
    cluster: Cluster = field(default_factory=Cluster)
    kubelets: Kubelets = field(init=False)
    lifecycle: NodeLifecycleController = field(init=False)
    eviction: TaintEvictionController = field(init=False)

    def __post_init__(self) -> None:
        self.kubelets = Kubelets(self.cluster)

    def start(self, *, with_eviction: bool = True) -> None:
        c = self.cluster
        nodes, pods = Informer(c.store, "nodes"), Informer(c.store, "pods")
        self.lifecycle = NodeLifecycleController(
            c.store, c.clock, self.settings, node_informer=nodes, pod_informer=pods
        )
        self.lifecycle.start()
        if with_eviction:
            self.eviction = TaintEvictionController(c.store, c.clock, node_informer=nodes, pod_informer=pods)
            self.eviction.start()

    def nodes(self, prefix: str, count: int, zone: str) -> list[str]:
        names = [f"{prefix}{i:02d}" for i in range(count)]
        for name in names:
            self.kubelets.add_node(name, zone=zone)
        return names

    def conditions(self, name: str) -> dict[str, str]:
        return {c["type"]: c["status"] for c in self.cluster.node(name)["status"]["conditions"]}

    def zone(self, name: str) -> ZoneState:
        return self.lifecycle.zone_states[f":\x00:{name}"]


def healthy_cluster(env: Env, *zones: tuple[str, int]) -> None:
    for zone, count in zones:
        env.nodes(zone + "-", count, zone)


# ---------------------------------------------------------------------------------------------
# health timeouts


def test_stopped_heartbeats_give_unknown_then_unreachable_then_deletion_300s_later() -> None:
    env = Env()
    healthy_cluster(env, ("a", 3), ("b", 3))
    c = env.cluster
    c.create("pods", pod("web", "a-00", tolerations=DEFAULT_TOLERATIONS, ready=True))
    c.create("pods", pod("agent", "a-00", tolerations=DAEMON_TOLERATIONS, ready=True))
    env.start()
    c.run_until(100)
    env.kubelets.stop("a-00")  # last renewal at t=92, seen by the pass at t=95
    c.run_until(149.9)
    assert env.conditions("a-00")["Ready"] == "True"
    c.run_until(150)
    # the first pass strictly after 95 + 50
    assert env.conditions("a-00") == {
        "Ready": "Unknown",
        "MemoryPressure": "Unknown",
        "DiskPressure": "Unknown",
        "PIDPressure": "Unknown",
    }
    ready = next(x for x in c.node("a-00")["status"]["conditions"] if x["type"] == "Ready")
    assert (ready["reason"], ready["message"], ready["lastTransitionTime"]) == (
        "NodeStatusUnknown",
        "Kubelet stopped posting node status.",
        "2026-01-01T00:02:30Z",
    )
    c.run_until(10_000)
    assert c.taints_of("a-00") == [
        (150.0, f"+{UNREACHABLE}:NoSchedule"),
        (155.0, f"+{UNREACHABLE}:NoExecute"),
    ], "NoExecute one monitor period after Ready flipped"
    assert c.deletions() == [(455.0, "web")]
    assert c.pod("agent") is not None, "unbounded tolerations (DaemonSet pods) stay"
    assert c.event_log("NodeNotReady") == [
        ("2026-01-01T00:02:30Z", "Node a-00 status is now: NodeNotReady"),
        ("2026-01-01T00:02:30Z", "Node is not ready"),
        ("2026-01-01T00:02:30Z", "Node is not ready"),
    ]
    agent = c.pod("agent")
    assert agent is not None
    assert agent["status"]["conditions"][0]["status"] == "False"


def test_status_heartbeats_alone_keep_a_node_healthy_and_their_stop_is_noticed() -> None:
    env = Env()
    healthy_cluster(env, ("b", 2))
    c = env.cluster
    c.create("nodes", node("solo", zone="a", conditions=[]))
    env.kubelets.set_condition("solo", "Ready", "True")
    env.start()

    def beat() -> None:
        if c.t <= 60:
            env.kubelets.set_condition("solo", "Ready", "True")
            c.clock.call_later(7, beat)

    c.clock.call_later(7, beat)
    c.run_until(300)
    # status heartbeats at 7, 14, …, 56: the last one is seen at t=60, so Unknown at 115 (> 110)
    assert c.taints_of("solo") == [
        (115.0, f"+{UNREACHABLE}:NoSchedule"),
        (120.0, f"+{UNREACHABLE}:NoExecute"),
    ]


def test_lease_renewals_alone_keep_a_node_healthy() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    env.start()
    env.cluster.run_until(3600)
    assert env.cluster.taint_log == []
    assert env.conditions("a-00") == {"Ready": "True"}


def test_node_that_never_posts_status_gets_the_startup_grace_period() -> None:
    env = Env()
    healthy_cluster(env, ("b", 2))
    c = env.cluster
    env.start()
    c.run_until(3)
    c.create("nodes", node("fresh", zone="a"))  # created at t=3, no conditions, no lease
    c.run_until(62.9)
    assert c.node("fresh")["status"].get("conditions") is None
    c.run_until(65)
    conditions = c.node("fresh")["status"]["conditions"]
    assert [(x["type"], x["status"], x["reason"]) for x in conditions] == [
        ("Ready", "Unknown", "NodeStatusNeverUpdated"),
        ("MemoryPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("DiskPressure", "Unknown", "NodeStatusNeverUpdated"),
        ("PIDPressure", "Unknown", "NodeStatusNeverUpdated"),
    ]
    assert conditions[0]["lastHeartbeatTime"] == "2026-01-01T00:00:03Z"
    assert conditions[0]["message"] == "Kubelet never posted node status."
    c.run_until(100)
    # observed (fake) Ready was already Unknown: the NoExecute taint is queued in the same pass
    assert c.taints_of("fresh") == [(65.0, f"+{UNREACHABLE}:NoSchedule"), (65.0, f"+{UNREACHABLE}:NoExecute")]
    assert c.event_log("NodeNotReady") == [], "no Ready→NotReady transition was observed"


def test_custom_grace_period() -> None:
    env = Env(settings=NodeLifecycleSettings(node_monitor_grace_period=40))
    healthy_cluster(env, ("a", 1), ("b", 1))
    env.start()
    env.cluster.run_until(30)
    env.kubelets.stop("a-00")  # last renewal 22, seen at 25
    env.cluster.run_until(200)
    assert env.cluster.no_execute_added() == [(75.0, "a-00")]


# ---------------------------------------------------------------------------------------------
# NotReady, swaps and recovery


def test_kubelet_reporting_not_ready_is_tainted_in_the_same_pass() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    c = env.cluster
    c.create("pods", pod("web", "a-00", tolerations=DEFAULT_TOLERATIONS))
    env.start()
    c.run_until(21)
    env.kubelets.set_condition("a-00", "Ready", "False")
    c.run_until(1000)
    assert c.taints_of("a-00") == [(21.0, f"+{NOT_READY}:NoSchedule"), (25.0, f"+{NOT_READY}:NoExecute")]
    assert c.deletions() == [(325.0, "web")]
    # the controller saw Ready=False already in the status it read: no True→not-True transition
    # of its own, so no NodeNotReady event and no MarkPodsNotReady (the kubelet reports those)
    assert c.event_log("NodeNotReady") == []


def test_unreachable_swaps_to_not_ready_at_once_and_back() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    c = env.cluster
    env.start()
    c.run_until(20)
    env.kubelets.stop("a-00")  # Unknown at 70, unreachable NoExecute at 75
    c.run_until(80)
    # the kubelet posts Ready=False once (after the pass at 80), seen by the pass at 85
    env.kubelets.set_condition("a-00", "Ready", "False")
    c.run_until(90)
    assert c.taints_of("a-00", "NoExecute") == [
        (75.0, f"+{UNREACHABLE}:NoExecute"),
        (85.0, f"+{NOT_READY}:NoExecute"),
        (85.0, f"-{UNREACHABLE}:NoExecute"),
    ]
    # no more heartbeats. Upstream quirk: the health record refreshed by the heartbeat at 85
    # forgets the lease, so the pass at 90 counts the (old) lease as renewed: Unknown at 145
    # (> 90 + 50); the swap uses the Ready observed by the next pass, without the rate limiter
    c.run_until(200)
    assert env.conditions("a-00")["Ready"] == "Unknown"
    assert c.taints_of("a-00", "NoExecute")[3:] == [
        (150.0, f"+{UNREACHABLE}:NoExecute"),
        (150.0, f"-{NOT_READY}:NoExecute"),
    ]


def test_recovery_removes_the_taints_and_cancels_pending_evictions() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    c = env.cluster
    c.create("pods", pod("web", "a-00", tolerations=DEFAULT_TOLERATIONS))
    env.start()
    c.run_until(20)
    env.kubelets.stop("a-00")
    c.run_until(200)
    env.kubelets.restart("a-00")  # Ready True written at 200 (NoSchedule follows at once), seen at 205
    c.run_until(1000)
    assert c.taints_of("a-00") == [
        (70.0, f"+{UNREACHABLE}:NoSchedule"),
        (75.0, f"+{UNREACHABLE}:NoExecute"),
        (200.0, f"-{UNREACHABLE}:NoSchedule"),
        (205.0, f"-{UNREACHABLE}:NoExecute"),
    ]
    assert c.deletions() == []
    assert c.event_log("TaintManagerEviction") == [
        ("2026-01-01T00:03:25Z", "Cancelling deletion of Pod default/web")
    ]


def test_pod_bound_to_a_not_ready_node_is_marked_not_ready_at_once() -> None:
    env = Env()
    healthy_cluster(env, ("a", 1), ("b", 1))
    c = env.cluster
    env.start(with_eviction=False)
    c.run_until(20)
    env.kubelets.stop("a-00")
    c.run_until(100)
    c.create("pods", pod("late", "a-00", ready=True))
    c.run_until(100)
    late = c.pod("late")
    assert late is not None and late["status"]["conditions"][0]["status"] == "False"
    assert c.event_log("NodeNotReady")[-1] == ("2026-01-01T00:01:40Z", "Node is not ready")


# ---------------------------------------------------------------------------------------------
# NoSchedule taints from conditions


@pytest.mark.parametrize(
    ("kind", "key"),
    [
        pytest.param("MemoryPressure", "node.kubernetes.io/memory-pressure", id="memory pressure"),
        pytest.param("DiskPressure", "node.kubernetes.io/disk-pressure", id="disk pressure"),
        pytest.param("PIDPressure", "node.kubernetes.io/pid-pressure", id="pid pressure"),
        pytest.param(
            "NetworkUnavailable", "node.kubernetes.io/network-unavailable", id="network unavailable"
        ),
    ],
)
def test_condition_taints_follow_the_condition_at_once(kind: str, key: str) -> None:
    env = Env()
    healthy_cluster(env, ("a", 1), ("b", 1))
    c = env.cluster
    env.start()
    c.run_until(31)
    env.kubelets.set_condition("a-00", kind, "True")
    c.run_until(47)
    env.kubelets.set_condition("a-00", kind, "False")
    c.run_until(100)
    assert c.taints_of("a-00") == [(31.0, f"+{key}:NoSchedule"), (47.0, f"-{key}:NoSchedule")]


def test_condition_taints_get_time_added_and_user_taints_stay() -> None:
    env = Env()
    healthy_cluster(env, ("b", 1))
    c = env.cluster
    env.kubelets.add_node("a-00", zone="a", taints=[taint("dedicated", "gpu", "NoSchedule")])
    env.start()
    c.run_until(12)
    current = c.node("a-00")
    c.store.update("nodes", {**current, "spec": {**current["spec"], "unschedulable": True}})
    c.run_until(13)
    assert c.node("a-00")["spec"]["taints"] == [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        {
            "key": "node.kubernetes.io/unschedulable",
            "effect": "NoSchedule",
            "timeAdded": "2026-01-01T00:00:12Z",
        },
    ]


def test_pressure_taints_vanish_when_the_node_becomes_unreachable() -> None:
    env = Env()
    healthy_cluster(env, ("a", 1), ("b", 1))
    c = env.cluster
    env.start()
    c.run_until(10)
    env.kubelets.set_condition("a-00", "MemoryPressure", "True")
    # the last lease renewal (t=2) was seen at 5; a MemoryPressure heartbeat is not a Ready one
    env.kubelets.stop("a-00")
    c.run_until(100)
    assert c.taints_of("a-00", "NoSchedule") == [
        (10.0, "+node.kubernetes.io/memory-pressure:NoSchedule"),
        (60.0, f"+{UNREACHABLE}:NoSchedule"),
        (60.0, "-node.kubernetes.io/memory-pressure:NoSchedule"),
    ]


def test_stable_os_and_arch_labels_are_copied_to_the_beta_ones() -> None:
    env = Env()
    c = env.cluster
    c.create(
        "nodes",
        node(
            "n",
            labels={"kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64", "beta.kubernetes.io/os": "x"},
        ),
    )
    env.start()
    c.run_until(1)
    labels = c.node("n")["metadata"]["labels"]
    assert (labels["beta.kubernetes.io/os"], labels["beta.kubernetes.io/arch"]) == ("linux", "arm64")


# ---------------------------------------------------------------------------------------------
# zone states and rate limits


def test_normal_zone_taints_one_node_per_ten_seconds() -> None:
    env = Env()
    healthy_cluster(env, ("a", 10), ("b", 2))
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop("a-00", "a-01", "a-02", "a-03", "a-04")  # 5 of 10: below 0.55, Normal
    env.cluster.run_until(500)
    assert env.zone("a") == ZoneState.NORMAL
    times = [t for t, _ in env.cluster.no_execute_added()]
    assert times == [75.0, 85.0, 95.0, 105.0, 115.0]
    assert sorted(n for _, n in env.cluster.no_execute_added()) == ["a-00", "a-01", "a-02", "a-03", "a-04"]


def test_zones_are_rate_limited_independently() -> None:
    env = Env()
    healthy_cluster(env, ("a", 5), ("b", 5), ("c", 1))
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop("a-00", "a-01", "b-00", "b-01")
    env.cluster.run_until(500)
    assert sorted(env.cluster.no_execute_added()) == [
        (75.0, "a-00"),
        (75.0, "b-00"),
        (85.0, "a-01"),
        (85.0, "b-01"),
    ]


def test_small_partially_disrupted_zone_stops_tainting() -> None:
    env = Env()
    healthy_cluster(env, ("a", 4), ("b", 2))
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop("a-00", "a-01", "a-02")  # 3 of 4 ≥ 0.55 and > 2
    env.cluster.run_until(3600)
    assert env.zone("a") == ZoneState.PARTIAL_DISRUPTION
    assert env.cluster.no_execute_added() == []
    assert env.conditions("a-00")["Ready"] == "Unknown"


def test_large_partially_disrupted_zone_uses_the_secondary_rate() -> None:
    env = Env()
    healthy_cluster(env, ("a", 60), ("b", 2))
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop(*[f"a-{i:02d}" for i in range(40)])  # 40 of 60
    env.cluster.run_until(600)
    assert env.zone("a") == ZoneState.PARTIAL_DISRUPTION
    # the old bucket still had its token, so the new 0.01 qps bucket starts full; float32(0.01)
    # is a hair under 0.01, so each next token lands on the following 100 ms grid point
    assert [t for t, _ in env.cluster.no_execute_added()] == [75.0, 175.1, 275.2, 375.3, 475.4, 575.5]


def test_fully_disrupted_zone_is_tainted_at_the_normal_rate_while_others_are_healthy() -> None:
    env = Env()
    healthy_cluster(env, ("a", 3), ("b", 3))
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop("a-00", "a-01", "a-02")
    env.cluster.run_until(500)
    assert env.zone("a") == ZoneState.FULL_DISRUPTION
    assert [t for t, _ in env.cluster.no_execute_added()] == [75.0, 85.0, 95.0]


def test_all_zones_down_removes_the_no_execute_taints_and_stops() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    c = env.cluster
    c.create("pods", pod("web", "a-00", tolerations=DEFAULT_TOLERATIONS))
    env.start()
    c.run_until(20)
    env.kubelets.stop("a-00", "a-01")  # zone a: Unknown at 70, tainted at 75 and 85
    c.run_until(100)
    env.kubelets.stop("b-00", "b-01")  # last renewal 92 seen at 95: Unknown at 150
    c.run_until(3600)
    assert c.taints_of("a-00", "NoExecute") == [
        (75.0, f"+{UNREACHABLE}:NoExecute"),
        (150.0, f"-{UNREACHABLE}:NoExecute"),
    ]
    assert c.taints_of("a-01", "NoExecute") == [
        (85.0, f"+{UNREACHABLE}:NoExecute"),
        (150.0, f"-{UNREACHABLE}:NoExecute"),
    ]
    assert c.taints_of("b-00", "NoExecute") == []
    assert (env.zone("a"), env.zone("b")) == (ZoneState.FULL_DISRUPTION, ZoneState.FULL_DISRUPTION)
    assert c.deletions() == [], "the eviction timer was cancelled when the taint went away"
    assert [m for _, m in c.event_log("TaintManagerEviction")] == ["Cancelling deletion of Pod default/web"]


def test_leaving_master_disruption_restarts_grace_periods_and_tainting() -> None:
    env = Env()
    healthy_cluster(env, ("a", 2), ("b", 2))
    c = env.cluster
    env.start()
    c.run_until(20)
    env.kubelets.stop("a-00", "a-01", "b-00", "b-01")  # all Unknown at 70: master disruption
    c.run_until(1000)
    assert c.no_execute_added() == []
    env.kubelets.restart("b-00")  # Ready at 1000, seen at 1005: zone b Normal, zone a Full
    c.run_until(2000)
    assert (env.zone("a"), env.zone("b")) == (ZoneState.FULL_DISRUPTION, ZoneState.NORMAL)
    # the Unknown nodes stayed queued behind never-accepting limiters; the fresh limiters start
    # empty (the old ones refused), so the first taints come one token later
    assert c.no_execute_added() == [(1015.0, "a-00"), (1015.0, "b-01"), (1025.0, "a-01")]


def test_excluded_nodes_do_not_count_for_zone_states() -> None:
    env = Env()
    healthy_cluster(env, ("b", 1))
    env.kubelets.add_node("a-00", zone="a")
    env.kubelets.add_node("a-01", zone="a", labels={"node.kubernetes.io/exclude-disruption": ""})
    env.start()
    env.cluster.run_until(20)
    env.kubelets.stop("a-00")
    env.cluster.run_until(200)
    assert env.zone("a") == ZoneState.FULL_DISRUPTION, "the healthy excluded node does not count"
    assert env.cluster.no_execute_added() == [(75.0, "a-00")]


# ---------------------------------------------------------------------------------------------
# the efficient tainting pass is identical to polling every 100 ms


class PollingLifecycle(NodeLifecycleController):
    """Runs doNoExecuteTaintingPass on every 100 ms grid point, like upstream's wait.Until."""

    def start(self) -> None:
        super().start()
        self._arm_tainting_pass()

    def _arm_tainting_pass(self) -> None:
        self._schedule_tainting_pass(self._first_tainting_index())


def outage_run(controller_class: type[NodeLifecycleController], reference: bool = False) -> Cluster:
    c = Cluster()
    kubelets = Kubelets(c)
    for zone, count in (("a", 60), ("b", 6), ("c", 3)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    for i in range(6):
        c.create("pods", pod(f"web-{i}", f"b-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    with in_reference_mode(reference):
        controller = controller_class(c.store, c.clock)
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    c.run_until(20)
    kubelets.stop(*[f"a-{i:02d}" for i in range(35)])
    kubelets.stop("b-00", "b-01")
    c.run_until(121)
    kubelets.set_condition("c-01", "Ready", "False")
    kubelets.set_condition("c-02", "MemoryPressure", "True")
    c.run_until(300)
    kubelets.stop("b-02", "b-03")
    kubelets.restart("a-03", "a-04")
    c.run_until(400)
    kubelets.stop("c-00", "c-01", "c-02")
    c.run_until(700)
    kubelets.restart("b-00", "b-01", "b-02", "b-03", "c-00")
    c.run_until(1500)
    return c


def test_scheduling_the_tainting_pass_only_when_useful_matches_polling() -> None:
    efficient = outage_run(NodeLifecycleController)
    polling = outage_run(PollingLifecycle)
    assert len(efficient.no_execute_added()) > 10
    assert efficient.taint_log == polling.taint_log
    assert efficient.changes == polling.changes


def test_visiting_only_changed_nodes_matches_visiting_every_node_with_the_full_health_update() -> None:
    shortcut = outage_run(NodeLifecycleController)
    full = outage_run(NodeLifecycleController, reference=True)
    assert len(shortcut.deletions()) > 0
    assert shortcut.changes == full.changes
    assert shortcut.taint_log == full.taint_log
    assert shortcut.event_log() == full.event_log()


def test_failed_pod_status_writes_are_retried_in_the_next_pass() -> None:
    env = Env()
    healthy_cluster(env, ("a", 1), ("b", 1))
    c = env.cluster
    c.create("pods", pod("web", "a-00", ready=True))
    env.start(with_eviction=False)
    original = c.store.update
    failures = {"left": 2}

    def update(resource: str, obj: dict, **kwargs: object) -> dict:
        if resource == "pods" and failures["left"] > 0:
            failures["left"] -= 1
            from kubetaint.api.errors import conflict

            raise conflict("pods", obj["metadata"]["name"], "the object has been modified")
        return original(resource, obj, **kwargs)  # type: ignore[arg-type]

    c.store.update = update  # type: ignore[method-assign]
    c.run_until(20)
    env.kubelets.stop("a-00")  # Unknown at 70: the first two status writes fail
    c.run_until(100)
    web = c.pod("web")
    assert web is not None and web["status"]["conditions"][0]["status"] == "False"
    (event,) = [e for e in c.events("NodeNotReady") if e["message"] == "Node is not ready"]
    assert (event["count"], event["firstTimestamp"], event["lastTimestamp"]) == (
        3,
        "2026-01-01T00:01:10Z",
        "2026-01-01T00:01:20Z",
    ), (
        "an event per attempt (recorded even when the write failed, counted as EventCorrelator does), at 70, 75 and 80"
    )
