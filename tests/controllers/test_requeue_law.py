"""RateLimitedTimedQueue.requeue (markNodeForTainting for a node without its taint) is remove
followed by add with the very same heap moves: after any sequence of queue operations the two
give the same heap, positions and set, so the tainting order is upstream's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue

NAMES = [f"node-{i}" for i in range(12)]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["requeue", "add", "remove", "pop", "retry"]),
        st.sampled_from(NAMES),
        st.integers(0, 6),
    ),
    max_size=80,
)


def _state(q: RateLimitedTimedQueue) -> object:
    u = q.queue
    return (
        [(v.value, v.uid, v.added_at, v.process_at) for v in u.heap],
        sorted(u.values),
        dict(u._positions),
        {v.value: i for i, v in enumerate(u.heap)},
    )


def _apply(q: RateLimitedTimedQueue, op: str, name: str, t: int, fused: bool) -> object:
    if op == "requeue":
        if fused:
            return q.requeue(name, "uid-" + name, t)
        q.remove(name)
        return q.add(name, "uid-" + name, t)
    if op == "add":
        return q.add(name, "uid-" + name, t)
    if op == "remove":
        return q.remove(name)
    head = q.queue.head()
    if head is None:
        return None
    if op == "pop":  # processed: leaves the heap, stays in the set
        return q.queue.remove_from_queue(head.value)
    head.process_at = t + 1  # a retry later
    return q.queue.replace(head)


@settings(max_examples=300, deadline=None)
@given(ops=OPS)
def test_requeue_is_remove_then_add(ops: list[tuple[str, str, int]]) -> None:
    fused, plain = RateLimitedTimedQueue(0.1), RateLimitedTimedQueue(0.1)
    for op, name, t in ops:
        assert _apply(fused, op, name, t, True) == _apply(plain, op, name, t, False)
        assert _state(fused) == _state(plain)


def test_requeue_of_many_equal_times_matches_in_name_order() -> None:
    fused, plain = RateLimitedTimedQueue(0.1), RateLimitedTimedQueue(0.1)
    for q in (fused, plain):
        for name in NAMES:
            q.add(name, "u", 0)
    for t in (5, 10, 15):
        for name in NAMES:
            _apply(fused, "requeue", name, t, True)
            _apply(plain, "requeue", name, t, False)
        assert _state(fused) == _state(plain)
    assert {v.process_at for v in fused.queue.heap} == {15}


BATCHES = st.lists(
    st.tuples(
        st.sampled_from(["batch", "add", "remove", "pop", "retry"]),
        st.lists(st.sampled_from(NAMES), max_size=14),
        st.integers(0, 6),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(ops=BATCHES)
def test_requeue_many_is_requeue_after_requeue(ops: list[tuple[str, list[str], int]]) -> None:
    batched, plain = RateLimitedTimedQueue(0.1), RateLimitedTimedQueue(0.1)
    for op, names, t in ops:
        if op == "batch":  # names may repeat, be queued, processed (in the set only) or unknown
            batched.requeue_many([(name, f"uid-{name}-{t}") for name in names], t)
            for name in names:
                plain.remove(name)
                plain.add(name, f"uid-{name}-{t}", t)
        else:
            for name in names[:1]:
                assert _apply(batched, op, name, t, True) == _apply(plain, op, name, t, False)
        assert _state(batched) == _state(plain)


def test_a_head_handed_out_is_not_changed_by_later_requeues() -> None:
    q = RateLimitedTimedQueue(0.1)
    for t, name in enumerate(NAMES[:3]):
        q.add(name, "old", t)
    head = q.queue.head()
    assert head is not None
    q.requeue_many([(name, "new") for name in NAMES[:3]], 9)
    assert (head.value, head.uid, head.added_at, head.process_at) == (NAMES[0], "old", 0, 0)
    assert [v.uid for v in q.queue.heap] == ["new"] * 3
