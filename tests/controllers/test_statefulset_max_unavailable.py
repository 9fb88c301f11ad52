"""A StatefulSet's RollingUpdate with maxUnavailable (the MaxUnavailableStatefulSet gate, beta and
on in 1.35): stateful_set_utils_test.go's TestGetStatefulSetMaxUnavailable and
stateful_set_control_test.go's TestStatefulSetControlRollingUpdateWithMaxUnavailable and
TestStatefulSetControlRollingUpdateWithMaxUnavailableInOrderedModeVerifyInvariant, as data; the
flows drive the controller one sync at a time on the memory store, setting pods running and ready
by hand as upstream's fakeObjectManager does."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.batch_builders import events, pods, running_plane, statefulset
from controllers.workload_builders import make_env
from kubetaint.clock.base import format_time
from kubetaint.controllers.statefulset import StatefulSetController, rolling
from kubetaint.controllers.statefulset.pods import REVISION_LABEL, ordinal_of

JSON = dict[str, Any]
KEY = ("default", "db")


@pytest.mark.parametrize(
    ("value", "replicas", "expected"),
    [
        pytest.param(None, 10, 1, id="unset is 1"),
        pytest.param(3, 10, 3, id="an integer"),
        pytest.param(3, 0, 3, id="an integer above the replicas"),
        pytest.param(0, 0, 1, id="0 is raised to 1"),
        pytest.param("10%", 25, 2, id="10% of 25 rounds down to 2"),
        pytest.param("100%", 5, 5, id="100% of 5"),
        pytest.param("50%", 5, 2, id="50% of 5 rounds down to 2"),
        pytest.param("10%", 5, 1, id="10% of 5 rounds down to 0, raised to 1"),
        pytest.param("1%", 0, 1, id="1% of 0"),
        pytest.param("0%", 0, 1, id="0% of 0"),
    ],
)
def test_get_stateful_set_max_unavailable(value: int | str | None, replicas: int, expected: int) -> None:
    assert rolling.max_unavailable(value, replicas) == expected


@pytest.mark.parametrize("value", ["3", "x%", True, 1.5])
def test_a_value_neither_integer_nor_percentage_is_an_error(value: Any) -> None:
    with pytest.raises(ValueError):
        rolling.max_unavailable(value, 5)


def _ready_pod(ordinal: int, revision: str = "db-old", **meta: Any) -> JSON:
    condition = {"type": "Ready", "status": "True", "lastTransitionTime": format_time(0)}
    return {
        "metadata": {"name": f"db-{ordinal}", "labels": {REVISION_LABEL: revision}, **meta},
        "status": {"phase": "Running", "conditions": [condition]},
    }


@pytest.mark.parametrize(
    "terminating",
    [
        pytest.param([], id="none terminating"),
        pytest.param([5], id="5 terminating"),
        pytest.param([3], id="3 terminating"),
        pytest.param([4], id="4 terminating"),
        pytest.param([5, 4], id="5 and 4 terminating"),
        pytest.param([5, 3], id="5 and 3 terminating"),
        pytest.param([4, 3], id="4 and 3 terminating"),
        pytest.param([5, 4, 3], id="5, 4 and 3 terminating"),
        pytest.param([2], id="2 terminating, below the partition"),
        pytest.param([1], id="1 terminating, below the partition"),
    ],
)
def test_max_unavailable_in_ordered_mode_verify_invariant(terminating: list[int]) -> None:
    """6 pods, partition 3, maxUnavailable 2, every pod at an old revision: the terminating pods
    count as unavailable and are not deleted again; maxUnavailable minus them are deleted."""
    stamp = {"deletionTimestamp": format_time(0)}
    replicas: list[JSON | None] = [_ready_pod(i, **(stamp if i in terminating else {})) for i in range(6)]
    deleted = rolling.with_max_unavailable(replicas, "", 3, most=2, min_ready_seconds=0, now=10.0)
    assert len(deleted) == max(2 - len(terminating), 0)
    assert all(ordinal_of(pod) >= 3 and ordinal_of(pod) not in terminating for pod in deleted)


def test_a_pod_not_created_counts_as_unavailable() -> None:
    replicas: list[JSON | None] = [_ready_pod(0), _ready_pod(1), None, _ready_pod(3)]
    deleted = rolling.with_max_unavailable(replicas, "db-new", 0, most=2, min_ready_seconds=0, now=1.0)
    assert [pod["metadata"]["name"] for pod in deleted] == ["db-3"]


def test_a_pod_ready_for_less_than_min_ready_seconds_counts_as_unavailable() -> None:
    replicas: list[JSON | None] = [_ready_pod(i) for i in range(4)]
    at_five = rolling.with_max_unavailable(replicas, "db-new", 0, most=2, min_ready_seconds=10, now=5.0)
    at_ten = rolling.with_max_unavailable(replicas, "db-new", 0, most=2, min_ready_seconds=10, now=10.0)
    assert (at_five, [p["metadata"]["name"] for p in at_ten]) == ([], ["db-3", "db-2"])


# the controller, one sync at a time ------------------------------------------------------------


class Sets:
    """One StatefulSet `db` under a StatefulSetController on the memory store, no kubelets."""

    def __init__(self, policy: str, replicas: int, rolling_update: JSON, **gates: bool) -> None:
        self.clock, self.store, _ = make_env()
        self.controller = StatefulSetController(self.store, self.clock, feature_gates=gates or None)
        self.controller.start()
        strategy = {"type": "RollingUpdate", "rollingUpdate": rolling_update}
        self.store.create(
            "statefulsets.apps",
            statefulset("db", replicas, podManagementPolicy=policy, updateStrategy=strategy),
        )

    def sync(self) -> None:
        self.controller.sync(KEY)

    def pods(self) -> list[JSON]:
        return sorted(self.store.list("pods", namespace="default").items, key=ordinal_of)

    def ordinals(self) -> list[int]:
        return [ordinal_of(pod) for pod in self.pods()]

    def set_running(self, ordinal: int, *, ready: bool = False) -> None:
        pod = self.store.get("pods", "default", f"db-{ordinal}")
        status: JSON = {"phase": "Running"}
        if ready:
            stamp = format_time(self.clock.now())
            status["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": stamp}]
        self.store.update("pods", {**pod, "status": status})

    def scale_up(self, replicas: int) -> None:
        """scaleUpStatefulSetControl: sync, then every pod running and ready, until all are."""
        for _ in range(replicas + 1):
            self.sync()
            for pod in self.pods():
                if pod.get("status", {}).get("phase") != "Running":
                    self.set_running(ordinal_of(pod), ready=True)
        assert self.ordinals() == list(range(replicas))

    def set_image(self, image: str) -> None:
        sts = self.store.get("statefulsets.apps", *KEY)
        template = {**sts["spec"]["template"]}
        template["spec"] = {**template["spec"], "containers": [{"name": "c", "image": image}]}
        self.store.update("statefulsets.apps", {**sts, "spec": {**sts["spec"], "template": template}})


def _ordered_ready(sets: Sets) -> None:
    # only one pod is created at a time (OrderedReady): 4, then 5 once 4 is running and ready
    assert sets.ordinals() == [0, 1, 2, 3, 4]
    sets.set_running(4, ready=True)
    sets.sync()
    assert sets.ordinals() == list(range(6))
    # 5 running and ready: 3 is updated
    sets.set_running(5, ready=True)
    sets.sync()
    assert sets.ordinals() == [0, 1, 2, 4, 5]
    sets.sync()
    assert sets.ordinals() == list(range(6))


def _parallel(sets: Sets) -> None:
    # both deleted pods are created at once (Parallel)
    assert sets.ordinals() == list(range(6))
    # 4 ready: 3 is updated though 5 is not ready (one unavailable, one more allowed)
    sets.set_running(4, ready=True)
    sets.set_running(5)
    sets.sync()
    assert sets.ordinals() == [0, 1, 2, 4, 5]
    sets.sync()
    assert sets.ordinals() == list(range(6))


@pytest.mark.parametrize(
    ("policy", "verify"),
    [
        pytest.param("OrderedReady", _ordered_ready, id="OrderedReady"),
        pytest.param("Parallel", _parallel, id="Parallel"),
    ],
)
def test_rolling_update_with_max_unavailable(policy: str, verify: Any) -> None:
    sets = Sets(policy, 6, {"partition": 3, "maxUnavailable": 2})
    sets.scale_up(6)
    sets.set_image("foo")
    # maxUnavailable 2: pods 5 and 4 are deleted in one sync
    sets.sync()
    assert sets.ordinals() == [0, 1, 2, 3]
    sets.sync()
    verify(sets)
    # 3, 4 and 5 running and ready at the update revision: nothing more to update
    sets.set_running(3, ready=True)
    sets.set_running(5, ready=True)
    before = sets.pods()
    sets.sync()
    assert sets.pods() == before
    images = {ordinal_of(p): p["spec"]["containers"][0]["image"] for p in before}
    assert images == {0: "busybox", 1: "busybox", 2: "busybox", 3: "foo", 4: "foo", 5: "foo"}


def test_without_the_gate_one_pod_at_a_time() -> None:
    sets = Sets("Parallel", 6, {"partition": 3, "maxUnavailable": 2}, MaxUnavailableStatefulSet=False)
    sets.scale_up(6)
    sets.set_image("foo")
    sets.sync()
    assert sets.ordinals() == [0, 1, 2, 3, 4]
    sets.sync()
    sets.set_running(5)  # running, not ready: the loop waits on it
    sets.sync()
    assert sets.ordinals() == list(range(6))


def test_an_unavailable_pod_anywhere_takes_from_the_budget() -> None:
    """The count covers the whole replica range: a pod below the partition that is not ready
    leaves one deletion of maxUnavailable 2."""
    sets = Sets("Parallel", 6, {"partition": 3, "maxUnavailable": 2})
    sets.scale_up(6)
    sets.set_running(0)  # running, not ready
    sets.set_image("foo")
    sets.sync()
    assert sets.ordinals() == [0, 1, 2, 3, 4]


def test_a_percentage_of_the_replicas() -> None:
    sets = Sets("Parallel", 5, {"partition": 0, "maxUnavailable": "50%"})
    sets.scale_up(5)
    sets.set_image("foo")
    sets.sync()
    assert sets.ordinals() == [0, 1, 2]


def test_min_ready_seconds_holds_the_next_deletions_until_the_new_pods_are_available() -> None:
    sets = Sets("Parallel", 4, {"partition": 0, "maxUnavailable": 2})
    sts = sets.store.get("statefulsets.apps", *KEY)
    sets.store.update("statefulsets.apps", {**sts, "spec": {**sts["spec"], "minReadySeconds": 10}})
    sets.scale_up(4)
    sets.clock.advance(10)  # the first pods are available
    sets.set_image("foo")
    sets.clock.run_pending()  # 3 and 2 deleted and created again (no kubelet: not running)
    assert sets.ordinals() == [0, 1, 2, 3]
    sets.set_running(2, ready=True)
    sets.set_running(3, ready=True)
    sets.clock.run_pending()
    images = {ordinal_of(p): p["spec"]["containers"][0]["image"] for p in sets.pods()}
    assert images == {0: "busybox", 1: "busybox", 2: "foo", 3: "foo"}
    sets.clock.advance(10)  # 2 and 3 available: the status requeue syncs, 1 and 0 go
    images = {ordinal_of(p): p["spec"]["containers"][0]["image"] for p in sets.pods()}
    assert images == {0: "foo", 1: "foo", 2: "foo", 3: "foo"}


# with the scheduler and hollow kubelets ---------------------------------------------------------


def test_a_rolling_update_deletes_max_unavailable_pods_before_creating_any() -> None:
    plane = running_plane("n1")
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": "50%"}}
    plane.registry.create("statefulsets.apps", statefulset("db", 4, updateStrategy=strategy))
    plane.clock.run_pending()
    changes: list[tuple[str, str]] = []

    def seen(batch: Any) -> None:
        changes.extend((kind, key[1]) for kind, key, _, _ in batch if kind in {"ADDED", "DELETED"})

    plane.informer("pods").add_handlers(seen, replay=False)
    changed = plane.store.get("statefulsets.apps", *KEY)
    template = {**changed["spec"]["template"]}
    template["spec"] = {**template["spec"], "containers": [{"name": "c", "image": "busybox:2"}]}
    plane.registry.update("statefulsets.apps", {**changed, "spec": {**changed["spec"], "template": template}})
    plane.clock.run_pending()
    assert changes == [
        ("DELETED", "db-3"),
        ("DELETED", "db-2"),
        ("ADDED", "db-2"),
        ("ADDED", "db-3"),
        ("DELETED", "db-1"),
        ("DELETED", "db-0"),
        ("ADDED", "db-0"),
        ("ADDED", "db-1"),
    ]
    assert {p["spec"]["containers"][0]["image"] for p in pods(plane)} == {"busybox:2"}
    assert not [e for e in events(plane, "statefulset-controller") if e[1] == "NotModelled"]


def test_an_outdated_pod_never_available_is_not_replaced_with_max_unavailable_1() -> None:
    """v1.35.0's `unavailablePods >= maxUnavailable` (kubernetes#137409): the only pod, at the old
    revision and never ready, takes the whole budget; without the gate it is replaced."""
    for gate, expected in ((True, "busybox"), (False, "foo")):
        sets = Sets("Parallel", 1, {"partition": 0}, MaxUnavailableStatefulSet=gate)
        sets.sync()
        sets.set_running(0)  # running, never ready
        sets.set_image("foo")
        sets.sync()
        sets.sync()
        assert [p["spec"]["containers"][0]["image"] for p in sets.pods()] == [expected]


def test_ordered_ready_creates_the_next_pod_once_its_predecessor_is_available() -> None:
    """processReplica: with minReadySeconds, OrderedReady waits for each pod to be Ready for that
    long (available) before creating the next."""
    sets = Sets("OrderedReady", 2, {"partition": 0})
    sts = sets.store.get("statefulsets.apps", *KEY)
    sets.store.update("statefulsets.apps", {**sts, "spec": {**sts["spec"], "minReadySeconds": 10}})
    sets.sync()
    sets.set_running(0, ready=True)
    sets.sync()
    assert sets.ordinals() == [0]
    sets.clock.advance(9)
    sets.sync()
    assert sets.ordinals() == [0]
    sets.clock.advance(1)  # db-0 available: the status requeue syncs
    assert sets.ordinals() == [0, 1]


def test_ordered_ready_scale_down_waits_for_the_pods_to_be_available() -> None:
    """processCondemned: a condemned pod that is ready but not yet available holds the scale down,
    unless it is the first unavailable pod."""
    sets = Sets("OrderedReady", 3, {"partition": 0})
    sets.scale_up(3)
    sets.clock.advance(10)
    sts = sets.store.get("statefulsets.apps", *KEY)
    sets.store.update(
        "statefulsets.apps", {**sts, "spec": {**sts["spec"], "minReadySeconds": 10, "replicas": 1}}
    )
    sets.set_running(1, ready=True)  # ready again since now: not available for 10 s
    sets.set_running(2, ready=True)
    sets.sync()  # db-2 is not available and db-1 is the first unavailable pod: it waits
    assert sets.ordinals() == [0, 1, 2]
    sets.clock.advance(9)
    assert sets.ordinals() == [0, 1, 2]
    sets.clock.advance(1)  # both available: db-2, then db-1
    assert sets.ordinals() == [0]


def test_the_first_unavailable_condemned_pod_is_removed_without_waiting() -> None:
    sets = Sets("OrderedReady", 2, {"partition": 0})
    sets.scale_up(2)
    sets.clock.advance(10)
    sts = sets.store.get("statefulsets.apps", *KEY)
    sets.store.update(
        "statefulsets.apps", {**sts, "spec": {**sts["spec"], "minReadySeconds": 10, "replicas": 1}}
    )
    sets.set_running(1, ready=True)
    sets.sync()
    assert sets.ordinals() == [0]
