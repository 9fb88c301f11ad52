"""A kubelet with nothing admitted that resyncs a listing of its pods (the pool's start) observes
them in one pass (`RunningPods.observe_unadmitted`): it must end up exactly as `observe_pod` of
each pod in turn leaves it: the same pod view in the same order, the same tally, the same
pending pods in the same set order and the same one callback on the clock. The same holds when
the listing comes with each pod's cache key (`resync_pods(keyed=...)`, the pool's start from its
informer: `RunningPods.observe_unadmitted_keyed`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet.builders import container, make_store, node_config, pod
from kubelet.test_start_replay import RecordingClock
from kubetaint.kubelet import HollowKubelet, KubeletSettings
from kubetaint.store.interface import object_key

JSON = dict[str, Any]


def _kubelet(clock: RecordingClock) -> HollowKubelet:
    kubelet = HollowKubelet(make_store(clock), clock, node_config("n1"), KubeletSettings())
    kubelet.use_pod_view(True)
    return kubelet


def _state(kubelet: HollowKubelet, clock: RecordingClock) -> Any:
    view = kubelet._admitted.view
    assert view is not None
    return (
        list(view.objects.items()),
        dict(view._members),
        view.used(),
        list(kubelet._pending),
        kubelet._pending_handle is not None,
        [label for _, label, _ in clock.scheduled],
    )


def _compare(pods: list[JSON], pending_before: list[tuple[str, str]]) -> None:
    batched_clock, one_by_one_clock = RecordingClock(), RecordingClock()
    batched, one_by_one = _kubelet(batched_clock), _kubelet(one_by_one_clock)
    for key in pending_before:
        batched._enqueue_key(key)
        one_by_one._enqueue_key(key)
    keyed_clock = RecordingClock()
    keyed = _kubelet(keyed_clock)
    for key in pending_before:
        keyed._enqueue_key(key)
    batched.resync_pods(pods)
    keyed.resync_pods(keyed=[(object_key(p), p) for p in pods])
    for p in pods:
        one_by_one.observe_pod(p)
    expected = _state(one_by_one, one_by_one_clock)
    assert _state(batched, batched_clock) == expected
    assert _state(keyed, keyed_clock) == expected


def _odd(name: str) -> JSON:
    p = pod(name, "n1", containers=[container(cpu="100m")])
    p["metadata"]["namespace"] = None  # the kubelet keys it under ""
    return p


@pytest.mark.parametrize(
    ("pods", "pending_before"),
    [
        pytest.param([], [], id="no pods: nothing scheduled"),
        pytest.param([pod(n, "n1") for n in "bca"], [], id="pods in listing order"),
        pytest.param([pod("a", "n1", namespace="x"), _odd("b")], [], id="namespaces, one missing"),
        pytest.param([pod("a", "n1")], [("default", "z")], id="pods already pending: no second callback"),
    ],
)
def test_resync_matches_observing_each_pod(pods: list[JSON], pending_before: list[tuple[str, str]]) -> None:
    _compare(pods, pending_before)


def test_a_kubelet_with_admitted_pods_observes_each_pod() -> None:
    clock = RecordingClock()
    kubelet = _kubelet(clock)
    kubelet._admitted.set(("default", "a"), "uid-a")
    seen: list[str] = []
    view = kubelet._admitted.view
    assert view is not None
    view.observe_unadmitted = lambda pods: seen.append("batched") or []  # type: ignore[method-assign]
    kubelet.resync_pods([pod("a", "n1")])
    assert seen == [] and ("default", "a") in view.objects


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4),
    st.lists(st.sampled_from(["default", "x"]), min_size=4, max_size=4),
    st.booleans(),
)
def test_any_listing_matches_observing_each_pod(names: list[str], spaces: list[str], pending: bool) -> None:
    pods = [pod(n, "n1", namespace=spaces[i]) for i, n in enumerate(names)]
    _compare(pods, [("default", "z")] if pending else [])


def test_a_keyed_resync_with_admitted_pods_observes_each_pod() -> None:
    """A kubelet that has admitted pods takes observe_pod's way for a keyed listing too."""
    clock, expected_clock = RecordingClock(), RecordingClock()
    kubelet, expected = _kubelet(clock), _kubelet(expected_clock)
    for k in (kubelet, expected):
        k._admitted.set(("default", "a"), "uid-a")
    view = kubelet._admitted.view
    assert view is not None
    seen: list[str] = []
    view.observe_unadmitted_keyed = lambda pairs: seen.append("batched") or []  # type: ignore[method-assign]
    pods = [pod("a", "n1"), pod("b", "n1")]
    kubelet.resync_pods(keyed=[(object_key(p), p) for p in pods])
    for p in pods:
        expected.observe_pod(p)
    assert seen == []
    assert _state(kubelet, clock) == _state(expected, expected_clock)


def test_an_empty_keyed_listing_lists_nothing_and_schedules_nothing() -> None:
    """keyed=[] is the listing itself (no pod bound here): the store is not asked."""
    clock = RecordingClock()
    kubelet = _kubelet(clock)
    kubelet.store.create("pods", pod("a", "n1"))  # would be found by a listing of the store
    kubelet.resync_pods(keyed=[])
    view = kubelet._admitted.view
    assert view is not None
    assert view.objects == {} and not kubelet._pending and clock.scheduled == []


@pytest.mark.parametrize(
    "members",
    [
        pytest.param([], id="no members: the view takes the pairs at once"),
        pytest.param(["a"], id="a member among the pods leaves the tally"),
        pytest.param(["z"], id="a member not listed stays"),
    ],
)
def test_observe_unadmitted_keyed_matches_observe_unadmitted(members: list[str]) -> None:
    pods = [pod(n, "n1", containers=[container(cpu="100m")]) for n in "bca"]
    views = []
    for _ in range(2):
        kubelet = _kubelet(RecordingClock())
        view = kubelet._admitted.view
        assert view is not None
        for name in members:
            member = pod(name, "n1", containers=[container(cpu="250m")])
            member["metadata"]["uid"] = f"uid-{name}"
            view.observe(("default", name), member, f"uid-{name}")
        views.append(view)
    plain, keyed = views
    assert plain.observe_unadmitted(pods) == keyed.observe_unadmitted_keyed(
        [(object_key(p), p) for p in pods]
    )
    assert list(plain.objects.items()) == list(keyed.objects.items())
    assert plain._members == keyed._members and plain.used() == keyed.used()
