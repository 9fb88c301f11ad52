"""Filter verdicts remembered per pod template (scheduler.filter_memo) against the vectorised
filters run afresh for every pod: through nodes coming, changing (taints, cordons, labels,
allocatable) and going, bound pods coming and going and pods of a few templates scheduled one
after another, two schedulers fed the same events — one remembering, one in reference mode
(no filter memo, no remembered NodeResourcesFit masks or taint verdicts) — must decide exactly alike (node, messages, nodes gone through, nextStartNodeIndex) and end with the same
cache. Also the search's wrap-around (`first_hits`) against rotating the mask, and the cache's
change log."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.cache import CHANGE_LOG_LIMIT, Cache
from kubetaint.scheduler.extension_points import CycleState, FilterBatch, FilterPlugin, Plugin
from kubetaint.scheduler.filter_memo import FilterMemo, memo_applies
from kubetaint.scheduler.podinfo import make_pod_info
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.search import first_hits
from kubetaint.speed.reference import reference_mode_set
from scheduler.builders import node, pod, scheduler, taint, toleration

JSON = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
NODES = 110  # more than 100: the search stops after some nodes and wraps round
#: Pod specs; the pods of one template share its values (the very same objects), as stamped pods do.
TEMPLATES: list[JSON] = [
    pod("t", cpu="1")["spec"],
    pod("t", cpu="300m", memory="1Gi", tolerations=[toleration("dedicated", "Exists")])["spec"],
    pod("t", cpu="100m", node_selector={"disk": "ssd"})["spec"],
    pod("t", cpu="2", extra_requests={"example.com/gpu": "1"})["spec"],
    {
        "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]}],
        "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
    },
]


def _node(i: int, kind: int) -> JSON:
    """Node i of a kind: 0 plain, 1 tainted, 2 small, 3 cordoned, 4 ssd-labelled with a gpu."""
    return node(
        f"n{i:03d}",
        cpu="1500m" if kind == 2 else "4",
        taints=[taint("dedicated", "x")] if kind == 1 else None,
        unschedulable=kind == 3,
        labels={ZONE: f"z{i % 3}", **({"disk": "ssd"} if kind == 4 else {})},
        extra={"example.com/gpu": "2"} if kind == 4 else None,
    )


def _stamped(name: str, template: int, node_name: str | None = None) -> JSON:
    spec = dict(TEMPLATES[template])  # the template's very values
    if node_name is not None:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {}},
        "spec": spec,
        "status": {},
    }


@contextmanager
def reference_mode() -> Iterator[None]:
    """Every shortcut off while the block runs (the variable restored after)."""
    with reference_mode_set(True):
        yield


def _written_alike(name: str, template: int) -> JSON:
    """A pod whose spec equals the template's without sharing any of its objects (a pod of a
    scenario file, a pod created by hand)."""
    stamped = _stamped(name, template)
    return {**stamped, "spec": copy.deepcopy(stamped["spec"])}


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("node"), st.integers(0, NODES + 4), st.integers(0, 4)),
        st.tuples(st.just("drop"), st.integers(0, NODES + 4)),
        st.tuples(st.just("bound"), st.integers(0, 40), st.integers(0, 4), st.integers(0, NODES - 1)),
        st.tuples(st.just("unbind"), st.integers(0, 40)),
        st.tuples(st.just("pending"), st.integers(0, 4), st.integers(1, 6)),
    ),
    max_size=30,
)


def _result(r: Any) -> tuple[Any, ...]:
    evaluation = r.evaluation
    return (
        r.node,
        r.reason,
        r.message,
        r.nominated_node,
        None if evaluation is None else evaluation.processed,
        None if evaluation is None else [ni.name for ni in evaluation.feasible],
    )


def _cache_state(s: Scheduler) -> tuple[Any, ...]:
    c = s.cache
    return (
        {name: sorted(ni.pods) for name, ni in c.nodes.items()},
        [ni.name for ni in c.node_list()],
        sorted(c.assumed),
        s.next_start_node_index,
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=NODES, max_size=NODES), _ops)
def test_remembered_verdicts_decide_as_the_filters_run_afresh(kinds: list[int], ops: list[Any]) -> None:
    _decide_alike(kinds, ops)


def test_a_node_untainted_then_filled_is_filtered_again_for_a_template_it_rejected() -> None:
    """The slots a template's node-only filters pass follow a node's change in place: a node
    its pods did not tolerate, untainted, then filled by pods bound there, is no longer
    feasible for the template's next pods."""
    kinds = [1, 0, 0, 0]
    before = [("pending", 0, 1), ("bound", 1, 0, 1), ("pending", 0, 1), ("node", 0, 0), ("pending", 0, 1)]
    fill = [("bound", 10 + i, 0, 0) for i in range(4)]
    _decide_alike(kinds, [*before, *fill, ("pending", 0, 3)])


def _decide_alike(kinds: list[int], ops: list[Any]) -> None:
    """A scheduler remembering verdicts and one in reference mode, told `ops` over nodes of
    `kinds`, decide alike and end with the same cache."""
    nodes = [_node(i, k) for i, k in enumerate(kinds)]
    remembering = scheduler(nodes)
    with reference_mode():
        afresh = scheduler(nodes)
    made = 0
    for op in ops:
        for s in (remembering, afresh):
            with reference_mode() if s is afresh else nullcontext():
                if op[0] == "node":
                    s.update_node(_node(op[1], op[2]))
                elif op[0] == "drop":
                    s.remove_node(f"n{op[1]:03d}")
                elif op[0] == "bound":
                    s.add_pod(_stamped(f"b{op[1]}", op[2], f"n{op[3]:03d}"))
                elif op[0] == "unbind":
                    s.remove_pod(_stamped(f"b{op[1]}", 0))
        if op[0] == "pending":
            for _ in range(op[2]):
                made += 1
                alike = made % 2 == 0  # half the pods share no object with their template
                for s in (remembering, afresh):
                    s.add_pod((_written_alike if alike else _stamped)(f"p{made}", op[1]))
            got = remembering.run()
            with reference_mode():
                want = afresh.run()
            assert [_result(r) for r in got] == [_result(r) for r in want]
    assert _cache_state(remembering) == _cache_state(afresh)


@pytest.mark.usefixtures("default_mode")
def test_a_template_s_later_pods_take_the_remembered_mask() -> None:
    """The second pod of a template reuses the first one's mask, brought up to date with the
    node the first was assumed on (full after it: no longer feasible)."""
    s = scheduler([_node(i, 0) for i in range(4)])
    s.add_pod(_stamped("a", 0))
    first = s.run()[0]
    fw = next(iter(s.profiles.values()))
    memo = s._filter_memos[fw.profile_name]
    assert len(memo._entries) == 1
    (entry,) = memo._entries._entries.values()
    # fill the chosen node: the next pod of the template must not go there
    s.add_pod(_stamped("filler", 0, first.node))
    s.add_pod(_stamped("filler2", 0, first.node))
    s.add_pod(_stamped("filler3", 0, first.node))
    s.add_pod(_stamped("b", 0))
    second = s.run()[0]
    assert second.node != first.node
    assert list(memo._entries._entries.values()) == [entry]  # the same entry, updated in place
    position = s.cache.order_positions()[first.node]
    assert not entry.mask[position]


@pytest.mark.usefixtures("default_mode")
def test_pods_written_alike_share_one_remembered_mask() -> None:
    """Pods whose specs are equal but share no object (a scenario's pods) ask the same question:
    one entry serves them all."""
    s = scheduler([_node(i, 0) for i in range(4)])
    for name in ("a", "b", "c"):
        s.add_pod(_written_alike(name, 1))
    assert all(r.node for r in s.run())
    fw = next(iter(s.profiles.values()))
    assert len(s._filter_memos[fw.profile_name]._entries) == 1


def test_reference_mode_remembers_no_mask() -> None:
    with reference_mode():
        s = scheduler([_node(i, 0) for i in range(4)])
        for name in ("a", "b"):
            s.add_pod(_stamped(name, 0))
        assert all(r.node for r in s.run())
    fw = next(iter(s.profiles.values()))
    assert s._filter_memos.get(fw.profile_name) is None or len(s._filter_memos[fw.profile_name]._entries) == 0


def test_a_plugin_not_known_to_the_memo_filters_afresh() -> None:
    class Custom(Plugin, FilterPlugin, FilterBatch):
        name = "Custom"

        def filter(self, state: Any, pi: Any, ni: Any) -> Any:
            raise AssertionError("not called")

        def filter_batch(self, state: Any, pi: Any, cache: Any) -> Any:
            return None

    s = scheduler([_node(i, 0) for i in range(3)])
    fw = next(iter(s.profiles.values()))
    assert memo_applies(fw)
    fw.filter_plugins = [*fw.filter_plugins, Custom()]
    memo = FilterMemo(fw)
    assert not memo.applies
    pi = make_pod_info(_stamped("a", 0))
    mask = memo.ordered_mask(CycleState(), pi, s.cache)
    assert mask.tolist() == [True, True, True]
    assert len(memo._entries) == 0


@pytest.mark.parametrize(
    ("mask", "start", "k"),
    [
        pytest.param([1, 1, 1, 1], 0, 2, id="enough from the start"),
        pytest.param([0, 1, 0, 1, 1], 2, 2, id="enough before the end"),
        pytest.param([1, 0, 0, 1, 0], 4, 2, id="wraps round for the rest"),
        pytest.param([1, 0, 0, 0, 0], 3, 2, id="too few: everything gone through"),
        pytest.param([0, 0, 0], 1, 1, id="none"),
        pytest.param([0, 0, 1], 0, 5, id="too few without a start"),
        pytest.param([1, 1, 0, 1], 3, 3, id="exactly enough after wrapping"),
    ],
)
def testfirst_hits_equal_rotating_the_mask(mask: list[int], start: int, k: int) -> None:
    _checkfirst_hits(np.array(mask, np.bool_), start, k)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=30), st.integers(0, 40), st.integers(1, 35))
def testfirst_hits_equal_rotating_any_mask(mask: list[bool], start: int, k: int) -> None:
    _checkfirst_hits(np.array(mask, np.bool_), start % len(mask), k)


def _checkfirst_hits(mask: Any, start: int, k: int) -> None:
    """The search as it was written first: rotate, find every hit, keep k."""
    n = len(mask)
    rotated = np.concatenate((mask[start:], mask[:start])) if start else mask
    hits = np.flatnonzero(rotated)
    if len(hits) >= k:
        hits = hits[:k]
        processed = int(hits[-1]) + 1
    else:
        processed = n
    at, got = first_hits(mask, start, k)
    assert (at.tolist(), got) == (((hits + start) % n).tolist(), processed)


def test_the_change_log_lists_changed_slots_until_it_is_cleared() -> None:
    cache = Cache()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    epoch, seen = cache.epoch, cache.changes_seen()
    cache.add_pod(pod("a", cpu="1", node_name="n2"))
    cache.update_node(node("n1", taints=[taint("k")]))
    slots = [cache.nodes["n2"].slot, cache.nodes["n1"].slot]
    assert cache.changes_since(seen, 10) == slots
    assert cache.changes_since(seen, 1) is None  # more changes than asked for
    assert cache.epoch == epoch  # no reshaping
    cache.add_node(node("n3"))
    assert cache.epoch != epoch
    seen = cache.changes_seen()
    for _ in range(CHANGE_LOG_LIMIT):
        cache.add_pod(pod("b", cpu="1", node_name="n1"))
    assert cache.changes_since(seen, CHANGE_LOG_LIMIT) is None  # cleared meanwhile: readers start afresh
    assert cache.changes_since(cache.changes_seen(), 0) == []
