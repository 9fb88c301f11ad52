"""Scheduler.add_pod's shortcut for the usual add (an informer's start listing: every pod bound
and new to the cache): a bound plain pod with a string uid the cache does not hold takes
Cache.add_unknown, which must leave the cache and the queue exactly as the general path
(Cache.add_pod with pod_key, then the queue's done) does; every other pod takes that path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info, pod_key
from kubetaint.scheduler.scheduler import Scheduler

from .builders import cache_state, node, pod, scheduler

JSON = dict[str, Any]


def general_add(s: Scheduler, p: JSON) -> None:
    """Scheduler.add_pod as it was before the shortcut."""
    if (p.get("spec") or {}).get("nodeName"):
        key = pod_key(p)
        s.cache.add_pod(p, key)
        s.queue.done(key)
    elif s.responsible_for(p) and not (p.get("metadata") or {}).get("deletionTimestamp"):
        s.queue.add(make_pod_info(p))


def infos(s: Scheduler) -> list[tuple[Any, ...]]:
    """Every PodInfo the cache holds (on nodes and waiting for theirs), slot by slot."""
    held = [pi for ni in s.cache.nodes.values() for pi in ni.pods.values()]
    held += [pi for waiting in s.cache._orphans.values() for pi in waiting.values()]
    return [tuple(getattr(pi, name) for name in PodInfo.__slots__) for pi in held]


def state(s: Scheduler) -> Any:
    return cache_state(s.cache), infos(s), dict(s.queue.where), list(s.queue.pods)


def count_shortcuts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys Cache.add_unknown is called with."""
    calls: list[str] = []
    real = Cache.add_unknown

    def counting(self: Cache, p: Any, key: str, node_name: str) -> PodInfo:
        calls.append(key)
        return real(self, p, key, node_name)

    monkeypatch.setattr(Cache, "add_unknown", counting)
    return calls


def two_nodes() -> list[JSON]:
    return [node("n1", cpu="8"), node("n2", cpu="8")]


def bound(name: str, node_name: str = "n1", **kw: Any) -> JSON:
    return pod(name, cpu="500m", memory="1Gi", node_name=node_name, **kw)


def _listing_before_nodes(s: Scheduler, add: Callable[[Scheduler, JSON], None]) -> None:
    """A start: the pods listed before their nodes register, then the nodes."""
    for p in [bound("a"), bound("b", "n2"), bound("c", extra_requests={"example.com/gpu": "1"})]:
        add(s, p)
    for n in two_nodes():
        s.add_node(n)


def _nodes_first(s: Scheduler, add: Callable[[Scheduler, JSON], None]) -> None:
    for n in two_nodes():
        s.add_node(n)
    for p in [bound("a"), bound("b", "n2"), bound("c", "n2", start="2024-01-01T00:00:00Z")]:
        add(s, p)


def _queued_then_bound(s: Scheduler, add: Callable[[Scheduler, JSON], None]) -> None:
    """A pod first seen unbound (queued), then bound under a new uid (deleted and recreated)."""
    for n in two_nodes():
        s.add_node(n)
    p = pod("a", cpu="1")
    add(s, p)
    add(s, {**bound("a"), "metadata": {**p["metadata"], "uid": "uid-a2"}})


def _a_node_unknown_to_the_cache(s: Scheduler, add: Callable[[Scheduler, JSON], None]) -> None:
    for n in two_nodes():
        s.add_node(n)
    add(s, bound("a", "n9"))
    add(s, bound("b", "n9"))


@pytest.mark.parametrize(
    ("steps", "shortcuts"),
    [
        pytest.param(_listing_before_nodes, 3, id="pods listed before their nodes wait for them"),
        pytest.param(_nodes_first, 3, id="pods of known nodes are counted on them"),
        pytest.param(_queued_then_bound, 1, id="a bound pod leaves the queue"),
        pytest.param(_a_node_unknown_to_the_cache, 2, id="pods of a node never added wait"),
    ],
)
def test_the_shortcut_leaves_what_the_general_path_leaves(
    steps: Callable[[Scheduler, Callable[[Scheduler, JSON], None]], None],
    shortcuts: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = scheduler([])
    steps(reference, general_add)
    calls = count_shortcuts(monkeypatch)
    shortcut = scheduler([])
    steps(shortcut, Scheduler.add_pod)
    assert len(calls) == shortcuts
    assert state(shortcut) == state(reference)


def _no_uid(p: JSON) -> JSON:
    meta = {k: v for k, v in p["metadata"].items() if k != "uid"}
    return {**p, "metadata": meta}


def _int_uid(p: JSON) -> JSON:
    return {**p, "metadata": {**p["metadata"], "uid": 7}}


def _unbound(p: JSON) -> JSON:
    return {**p, "spec": {k: v for k, v in p["spec"].items() if k != "nodeName"}}


def _no_metadata(p: JSON) -> JSON:
    return {**p, "metadata": None}


def _spec_of_another_type(p: JSON) -> JSON:
    class Spec(dict[str, Any]):
        pass

    return {**p, "spec": Spec(p["spec"])}


def _empty_node_name(p: JSON) -> JSON:
    return {**p, "spec": {**p["spec"], "nodeName": ""}}


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param(_no_uid, id="without a uid (keyed by namespace and name)"),
        pytest.param(_int_uid, id="a uid that is not a string (its str is the key)"),
        pytest.param(_unbound, id="an unbound pod (queued)"),
        pytest.param(_empty_node_name, id="an empty node name (queued)"),
        pytest.param(_no_metadata, id="metadata null"),
        pytest.param(_spec_of_another_type, id="a spec that is not a plain dict"),
    ],
)
def test_other_pods_take_the_general_path(
    odd: Callable[[JSON], JSON], monkeypatch: pytest.MonkeyPatch
) -> None:
    p = odd(bound("a"))
    reference = scheduler(two_nodes())
    general_add(reference, p)
    calls = count_shortcuts(monkeypatch)
    shortcut = scheduler(two_nodes())
    shortcut.add_pod(p)
    assert calls == []
    assert state(shortcut) == state(reference)


def test_a_pod_the_cache_holds_is_refreshed_not_added_again(monkeypatch: pytest.MonkeyPatch) -> None:
    first = bound("a")
    again = {**first, "status": {"phase": "Running"}}  # the same spec object: a refresh
    moved = {**first, "spec": {**first["spec"], "nodeName": "n2"}}  # another node
    reference = scheduler(two_nodes())
    for p in (first, again, moved):
        general_add(reference, p)
    calls = count_shortcuts(monkeypatch)
    shortcut = scheduler(two_nodes())
    for p in (first, again, moved):
        shortcut.add_pod(p)
    assert calls == ["uid-a"], "only the first add is of a pod the cache does not hold"
    assert state(shortcut) == state(reference)


def test_an_assumed_pod_is_confirmed_by_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    p = bound("a")
    reference = scheduler(two_nodes())
    reference.cache.assume_pod(make_pod_info(_unbound(p)), "n1")
    general_add(reference, p)
    calls = count_shortcuts(monkeypatch)
    shortcut = scheduler(two_nodes())
    shortcut.cache.assume_pod(make_pod_info(_unbound(p)), "n1")
    shortcut.add_pod(p)
    assert calls == []
    assert not shortcut.cache.assumed
    assert state(shortcut) == state(reference)


def test_add_unknown_is_add_pod_of_a_new_key() -> None:
    p = bound("a")
    reference, mine = Cache(), Cache()
    for cache in (reference, mine):
        cache.add_node(node("n1"))
    expected = reference.add_pod(p, "uid-a")
    got = mine.add_unknown(p, "uid-a", "n1")
    assert expected is not None
    assert tuple(getattr(got, n) for n in PodInfo.__slots__) == tuple(
        getattr(expected, n) for n in PodInfo.__slots__
    )
    assert cache_state(mine) == cache_state(reference)
