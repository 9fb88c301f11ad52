"""HollowNodePool.start over a running shared pod informer skips the informer's replay of its
cache (each kubelet's resync_pods has just observed the same pods): the start must schedule the
same clock callbacks in the same order, leave every kubelet in the same state and write exactly
what the replaying start writes, restarts included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubelet.builders import container, make_store, node_config, pod
from kubetaint.clock import VirtualClock
from kubetaint.clock.base import Handle
from kubetaint.kubelet import HollowNodePool
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import object_key
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
NODES = ("n1", "n2", "n3")


class RecordingClock(VirtualClock):
    """A virtual clock that remembers what was scheduled, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.scheduled: list[tuple[float, str, str | None]] = []

    def call_at(self, when: float, callback: Callable[[], None], *, priority: int = 0) -> Handle:
        owner = getattr(callback, "__self__", None)
        label = getattr(callback, "__qualname__", repr(callback))
        self.scheduled.append((when, label, getattr(owner, "name", None)))
        return super().call_at(when, callback, priority=priority)


class ReplayingPool(HollowNodePool):
    """The generic start: the informer replays its cache to the pool's handlers."""

    def _cache_is_store(self) -> bool:
        return False


def _seed(store: MemoryStore, mix: list[tuple[str, str]]) -> None:
    """Pods named "name" (namespace default) or "namespace/name", bound to `node` unless empty."""
    for ref, node in mix:
        namespace, _, name = ref.rpartition("/")
        store.create("pods", pod(name, node, namespace=namespace or "default", containers=[container()]))


def _state(pool: HollowNodePool) -> list[Any]:
    state: list[Any] = []
    for name, kubelet in pool.kubelets.items():
        view = kubelet._admitted.view
        objects = None if view is None else sorted(view.objects.items(), key=repr)
        state.append((name, sorted(kubelet._pending), dict(kubelet._admitted.uids), objects))
    return state


def _dump(store: MemoryStore) -> list[JSON]:
    return [obj for resource in ("pods", "nodes", "events") for obj in store.list(resource).items]


def _run(pool_type: type[HollowNodePool], mix: list[tuple[str, str]], restart: bool) -> list[Any]:
    clock = RecordingClock()
    store = make_store(clock)
    _seed(store, mix)
    informer = Informer(store, "pods")
    informer.start()
    pool = pool_type(store, clock, [node_config(n) for n in NODES], pod_informer=informer)
    _assert_bound_pods_are_the_store_lists(pool, store)
    pool.start()
    started = (list(clock.scheduled), _state(pool))
    clock.run_until(clock.now() + 30)
    if restart:
        pool.shutdown()
        _seed(store, [(f"{ref}-late", node) for ref, node in mix])
        _assert_bound_pods_are_the_store_lists(pool, store)
        pool.start()
        started = (*started, list(clock.scheduled), _state(pool))
        clock.run_until(clock.now() + 30)
    return [started, _dump(store)]


def _assert_bound_pods_are_the_store_lists(pool: HollowNodePool, store: MemoryStore) -> None:
    bound = pool._bound_pods()
    for name in NODES:
        listed = store.list("pods", field_selector=f"spec.nodeName={name}").items
        pairs = bound.get(name, [])
        grouped = [p for _, p in pairs]
        assert [p["metadata"]["name"] for p in grouped] == [p["metadata"]["name"] for p in listed]
        assert all(a is b for a, b in zip(grouped, listed, strict=True)), "the very stored objects"
        assert [key for key, _ in pairs] == [object_key(p) for p in listed], "each with its own key"


MIXES = [
    pytest.param([], id="no pods at all"),
    pytest.param([("a", "n1"), ("b", "n2"), ("c", "n1")], id="pods bound to several nodes"),
    pytest.param([("a", ""), ("b", "n2")], id="an unbound pod beside a bound one"),
    pytest.param([("a", "elsewhere"), ("b", "n3")], id="a pod bound to a node outside the pool"),
    pytest.param([(f"p{i}", NODES[i % 3]) for i in range(12)], id="many pods over every node"),
    pytest.param(
        [("b", "n1"), ("a", "n1"), ("kube-system/z", "n1"), ("default-x/a", "n1"), ("x/a", "n2")],
        id="pods of several namespaces listed in etcd key order, not creation or tuple order",
    ),
]


@pytest.mark.parametrize("restart", [False, True], ids=["first start", "start after a shutdown"])
@pytest.mark.parametrize("mix", MIXES)
def test_skipping_the_replay_changes_nothing(mix: list[tuple[str, str]], restart: bool) -> None:
    assert _run(HollowNodePool, mix, restart) == _run(ReplayingPool, mix, restart)


def _pool_over(informer: Informer, store: MemoryStore, clock: VirtualClock) -> HollowNodePool:
    return HollowNodePool(store, clock, [node_config("n1")], pod_informer=informer)


class _ReadBackStore(MemoryStore):
    delivers_synchronously = False


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        pytest.param(lambda s: (Informer(s, "pods"), True), True, id="a started unfiltered shared informer"),
        pytest.param(lambda s: (Informer(s, "pods"), False), False, id="a shared informer not started yet"),
        pytest.param(
            lambda s: (Informer(s, "pods", namespace="default"), True),
            False,
            id="an informer of one namespace",
        ),
        pytest.param(
            lambda s: (Informer(s, "pods", label_selector="app=x"), True),
            False,
            id="an informer with a selector",
        ),
        pytest.param(
            lambda s: (Informer(s, "pods", field_selector="spec.nodeName=n1"), True),
            False,
            id="an informer with a field selector",
        ),
    ],
)
@pytest.mark.usefixtures("default_mode")
def test_the_replay_is_skipped_only_over_a_complete_running_cache(
    build: Callable[[MemoryStore], tuple[Informer, bool]], expected: bool
) -> None:
    clock = VirtualClock()
    store = make_store(clock)
    informer, start = build(store)
    if start:
        informer.start()
    pool = _pool_over(informer, store, clock)
    pool.start()
    assert pool._cache_is_store() is expected


def test_a_store_without_synchronous_delivery_keeps_the_replay() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    store.__class__ = _ReadBackStore
    informer = Informer(store, "pods")
    informer.start()
    pool = _pool_over(informer, store, clock)
    pool.start()
    assert pool._cache_is_store() is False


def test_a_pool_with_its_own_informer_keeps_the_replay() -> None:
    clock = VirtualClock()
    pool = HollowNodePool(make_store(clock), clock, [node_config("n1")])
    pool.start()
    assert pool._cache_is_store() is False


def test_an_informer_without_replay_tells_only_later_changes() -> None:
    clock = VirtualClock()
    store = make_store(clock)
    store.create("pods", pod("old", "n1"))
    informer = Informer(store, "pods")
    informer.start()
    seen: list[str] = []
    informer.add_handlers(EventHandlers(on_add=lambda p: seen.append(p["metadata"]["name"])), replay=False)
    store.create("pods", pod("new", "n1"))
    assert seen == ["new"]
    informer.add_handlers(EventHandlers(on_add=lambda p: seen.append("replayed " + p["metadata"]["name"])))
    assert seen == ["new", "replayed old", "replayed new"]
