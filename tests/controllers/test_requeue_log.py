"""The tainting queue's logged re-queues (RequeueLog in nodelifecycle/rate_limited_queue.py) against
applying every operation at once: whatever the operations (whole passes of re-queues as the node
loop makes them, Try taking heads, retries, adds, removes, partial or repeated re-queues, passes at
one time), a lazy queue answers every call as an eager one does, and its heap, positions and set
end alike."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue, UniqueQueue

from .test_requeue_law import _state

NAMES = [f"node-{i:02d}" for i in range(10)]


def _queues() -> tuple[RateLimitedTimedQueue, RateLimitedTimedQueue]:
    lazy, eager = RateLimitedTimedQueue(0.1), RateLimitedTimedQueue(0.1)
    lazy.queue = UniqueQueue(lazy=True)  # (the log's own workings, in either mode)
    eager.queue = UniqueQueue(lazy=False)
    return lazy, eager


def _head(q: RateLimitedTimedQueue) -> object:
    head = q.queue.head()
    return None if head is None else (head.value, head.uid, head.added_at, head.process_at)


def _members(q: RateLimitedTimedQueue) -> list[str]:
    """The values in the eager queue's heap (reading the lazy one's would apply its log)."""
    return [v.value for v in q.queue.heap]


def _apply(q: RateLimitedTimedQueue, op: tuple[Any, ...], now: int) -> object:
    kind = op[0]
    if kind == "pass":  # re-queue `names` in chunks, as RequeuePlan.until does between visits
        _, names, cuts, uid = op
        items = [(name, uid) for name in names]
        start = 0
        for cut in [*cuts, len(items)]:
            q.requeue_many(items[start:cut], now)
            start = cut
        return None
    if kind == "requeue":
        return q.requeue(op[1], op[2], now)
    if kind == "add":
        return q.add(op[1], op[2], now)
    if kind == "remove":
        return q.remove(op[1])
    if kind == "head":
        return _head(q)
    if kind == "pop":  # Try processed the head: it leaves the heap, stays in the set
        head = q.queue.head()
        return None if head is None else q.queue.remove_from_queue(head.value)
    if kind == "drop":  # remove_from_queue of any value
        return q.queue.remove_from_queue(op[1])
    head = q.queue.head()  # retry: the head comes back later
    if head is None:
        return None
    head.process_at = now + op[1]
    return q.queue.replace(head)


@st.composite
def _op(draw: st.DrawFn, members: list[str]) -> tuple[Any, ...]:
    kind = draw(
        st.sampled_from(["pass", "pass", "pass", "whole", "whole", "pop", "head", "requeue", "add", "remove"])
        | st.sampled_from(["drop", "retry"])
    )
    uid = draw(st.sampled_from(["u1", "u2"]))
    if kind in ("pass", "whole"):
        names = list(members) if kind == "whole" else draw(st.lists(st.sampled_from(NAMES), max_size=12))
        names = draw(st.permutations(names)) if kind == "whole" else names
        cuts = sorted(draw(st.lists(st.integers(0, len(names)), max_size=3)))
        return ("pass", names, cuts, uid)
    if kind in ("requeue", "add"):
        return (kind, draw(st.sampled_from(NAMES)), uid)
    if kind in ("remove", "drop"):
        return (kind, draw(st.sampled_from(NAMES)))
    if kind == "retry":
        return (kind, draw(st.integers(-2, 3)))
    return (kind,)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_lazy_queue_answers_as_an_eager_one(data: st.DataObject) -> None:
    lazy, eager = _queues()
    now = 0
    for _ in range(data.draw(st.integers(1, 30))):
        op = data.draw(_op(_members(eager)))
        now += data.draw(st.sampled_from([0, 1, 1, 5]))  # a pass may share its time with the last
        assert _apply(lazy, op, now) == _apply(eager, op, now), op
        assert len(lazy.queue) == len(eager.queue)
        assert lazy.pending == eager.pending
    assert _head(lazy) == _head(eager)
    assert _state(lazy) == _state(eager)


def _zone_out(lazy: RateLimitedTimedQueue, eager: RateLimitedTimedQueue, nodes: int, passes: int) -> int:
    """A zone out: `nodes` added at once, then whole passes in name order every 5 s, Try taking the
    head every other pass; the number of heads taken while the lazy queue kept its log."""
    names = [f"node-{i:03d}" for i in range(nodes)]
    taken, logged = set[str](), 0
    for q in (lazy, eager):
        for name in reversed(names):
            q.add(name, "uid-" + name, 0)
    for k in range(1, passes + 1):
        now = 5 * k
        items = [(name, "uid-" + name) for name in names if name not in taken]
        for q in (lazy, eager):
            q.requeue_many(items[: len(items) // 3], now)
            q.requeue_many(items[len(items) // 3 :], now)
        if k % 2 == 0:
            logged += bool(lazy.queue._log)
            heads = [_head(lazy), _head(eager)]
            assert heads[0] == heads[1]
            if heads[0] is not None:
                value = str(heads[0][0])  # type: ignore[index]
                assert lazy.queue.remove_from_queue(value) == eager.queue.remove_from_queue(value)
                assert _head(lazy) == _head(eager)
                taken.add(value)
    assert _state(lazy) == _state(eager)
    return logged


@pytest.mark.parametrize(
    ("nodes", "passes"),
    [
        pytest.param(1, 6, id="a zone of one node: the head is the node until it is taken"),
        pytest.param(2, 8, id="a zone of two nodes: the last but one re-queued, then the last"),
        pytest.param(40, 30, id="a zone of forty nodes: every head taken comes from the log"),
    ],
)
def test_a_zone_out_is_tainted_in_the_same_order_without_applying_the_passes(nodes: int, passes: int) -> None:
    lazy, eager = _queues()
    logged = _zone_out(lazy, eager, nodes, passes)
    assert logged >= min(nodes, passes // 2) - 1, "the heads came from the log, not the heap"


def test_a_pass_that_misses_a_value_leaves_the_head_to_the_heap() -> None:
    lazy, eager = _queues()
    for q in (lazy, eager):
        for name in ("c", "b", "a"):
            q.add(name, "u", 0)
        q.requeue_many([("a", "u"), ("b", "u")], 5)  # "c" not re-queued: its time 0 stays first
    assert lazy.queue._log
    assert _head(lazy) == _head(eager) == ("c", "u", 0, 0)
    assert not lazy.queue._log, "the log was applied to find the head"


def test_a_whole_pass_at_the_time_of_the_last_leaves_the_head_to_the_heap() -> None:
    lazy, eager = _queues()
    for q in (lazy, eager):
        for name in ("c", "b", "a"):
            q.add(name, "u", 5)
        q.requeue_many([("a", "u"), ("b", "u"), ("c", "u")], 5)
    assert _head(lazy) == _head(eager)
    assert not lazy.queue._log
    assert _state(lazy) == _state(eager)


@pytest.mark.parametrize("nodes", [3, 4, 5, 7])
def test_a_whole_pass_at_the_time_of_the_last_after_a_pop_leaves_the_head_to_the_heap(nodes: int) -> None:
    lazy, eager = _queues()
    names = [f"n{i}" for i in range(nodes)]
    for q in (lazy, eager):
        for name in names:
            q.add(name, "u", 0)
        q.requeue_many([(name, "u") for name in names], 5)
    head = _head(lazy)
    assert head == _head(eager) == (names[-2], "u", 5, 5)
    rest = [name for name in names if name != names[-2]]
    for q in (lazy, eager):
        q.queue.remove_from_queue(names[-2])
        q.requeue_many([(name, "u") for name in reversed(rest)], 5)  # equal times move nothing
    assert _head(lazy) == _head(eager)
    assert _state(lazy) == _state(eager)
