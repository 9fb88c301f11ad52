"""RequeuePlan (the node loop's re-queues of resting untainted Unknown nodes) against re-queueing
each node in name order where its visit would come, one `requeue` at a time: pass after pass,
with the resting set and the node names changing or not between passes, the zones' queues end
exactly alike (heap, positions, set) and the same queues are made in the same order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue
from kubetaint.controllers.nodelifecycle.requeue_plan import END, RequeuePlan
from kubetaint.controllers.nodelifecycle.resting import RestingNodes

NAMES = [f"node-{i:02d}" for i in range(16)]
ZONES = ["zone-a", "zone-b", "zone-c"]


def _state(queues: dict[str, RateLimitedTimedQueue]) -> object:
    return [
        (
            zone,
            [(v.value, v.uid, v.added_at, v.process_at) for v in q.queue.heap],
            sorted(q.queue.values),
            dict(q.queue._positions),
        )
        for zone, q in queues.items()
    ]


def _queue_of(queues: dict[str, RateLimitedTimedQueue]) -> Any:
    def queue_of(zone: str) -> RateLimitedTimedQueue:
        if zone not in queues:
            queues[zone] = RateLimitedTimedQueue(0.1)
        return queues[zone]

    return queue_of


_pass = st.tuples(
    st.dictionaries(st.sampled_from(NAMES), st.tuples(st.sampled_from(ZONES), st.sampled_from(["u1", "u2"]))),
    st.lists(st.integers(0, len(NAMES)), max_size=6).map(sorted),  # the visits' positions
    st.booleans(),  # the node names changed (a new position dict)
    st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(ZONES)), max_size=3),  # other adds
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_pass, min_size=1, max_size=6))
def test_a_plan_requeues_as_one_requeue_after_another(passes: list[Any]) -> None:
    planned: dict[str, RateLimitedTimedQueue] = {}
    plain: dict[str, RateLimitedTimedQueue] = {}
    plan = RequeuePlan()
    position = {name: i for i, name in enumerate(NAMES)}
    for t, (requeues, visits, renamed, adds) in enumerate(passes):
        if renamed:
            position = dict(position)
        for name, zone in adds:  # what visited nodes do to the queues between re-queues
            for queues in (planned, plain):
                _queue_of(queues)(zone).add(name, "v", t)
        now = 1000 + t
        order = sorted((position[name], name) for name in requeues)
        k = 0
        next_at = plan.begin(requeues, position)
        assert next_at == (order[0][0] if order else END)
        for end in [*visits, END]:
            while k < len(order) and order[k][0] < end:
                zone, uid = requeues[order[k][1]]
                _queue_of(plain)(zone).requeue(order[k][1], uid, now)
                k += 1
            if next_at < end:
                next_at = plan.until(end, _queue_of(planned), lambda now=now: now)
            assert next_at == (order[k][0] if k < len(order) else END)
            assert _state(planned) == _state(plain)
        assert list(planned) == list(plain), "queues made in the same order"


def test_an_unchanged_resting_set_reuses_the_plan() -> None:
    plan = RequeuePlan()
    position = {name: i for i, name in enumerate(NAMES)}
    requeues = {"node-03": ("zone-a", "u"), "node-01": ("zone-b", "u")}
    assert plan.begin(requeues, position) == 1
    made = plan._zones
    assert plan.begin(dict(requeues), position) == 1
    assert plan._zones is made
    requeues["node-00"] = ("zone-a", "u")
    assert plan.begin(requeues, position) == 0
    assert plan._zones is not made


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(NAMES), st.tuples(st.sampled_from(ZONES), st.sampled_from(["u1", "u2"])), min_size=1
    ),
    st.lists(st.tuples(st.sets(st.sampled_from(NAMES), max_size=3), st.integers(0, len(NAMES))), max_size=6),
)
def test_a_plan_that_only_loses_nodes_requeues_as_a_plan_made_afresh(
    requeues: dict[str, tuple[str, str]], passes: list[tuple[set[str], int]]
) -> None:
    kept = RequeuePlan()
    position = {name: i for i, name in enumerate(NAMES)}
    planned: dict[str, RateLimitedTimedQueue] = {}
    afresh_queues: dict[str, RateLimitedTimedQueue] = {}
    for t, (gone, middle) in enumerate(passes):
        requeues = {name: v for name, v in requeues.items() if name not in gone}
        afresh = RequeuePlan()
        assert kept.begin(requeues, position) == afresh.begin(requeues, position)
        for end in (middle, END):
            nxt = kept.until(end, _queue_of(planned), lambda t=t: t)
            assert nxt == afresh.until(end, _queue_of(afresh_queues), lambda t=t: t)
        assert _state(planned) == _state(afresh_queues)
        assert kept._made_from == requeues


# RestingNodes' count of changes: a plan begun at an unchanged count is not compared again --------

_FEW = NAMES[:4]  # (few names: the operations meet the same nodes often)
_OP = st.one_of(
    st.tuples(st.just("rest"), st.sampled_from(_FEW)),
    st.tuples(
        st.just("rest requeued"), st.sampled_from(_FEW), st.sampled_from(ZONES), st.sampled_from(["u1", "u2"])
    ),
    st.tuples(st.just("wake"), st.sampled_from(_FEW)),
    st.tuples(st.just("clear")),
    st.tuples(st.just("begin")),
    st.tuples(st.just("begin")),
)


def _plan_of(plan: RequeuePlan) -> object:
    return sorted((z.zone, z.at, z.items, z.names) for z in plan._zones if z.at)


def _do(resting: RestingNodes, op: tuple[Any, ...]) -> None:
    if op[0] == "rest":
        resting.rest(op[1], 50.0, "zone-a")
    elif op[0] == "rest requeued":
        resting.rest_requeued(op[1], op[2], op[2], op[3])
    elif op[0] == "wake":
        resting.wake(op[1])
    elif op[0] == "clear":
        resting.clear()


@settings(max_examples=300, deadline=None)
@given(st.lists(_OP, max_size=30))
@example([("rest requeued", "node-01", "zone-a", "u1"), ("begin",), ("wake", "node-01"), ("begin",)])
@example([("rest requeued", "node-01", "zone-a", "u1"), ("begin",), ("rest", "node-01"), ("begin",)])
@example([("rest requeued", "node-01", "zone-a", "u1"), ("begin",), ("clear",), ("begin",)])
def test_a_plan_begun_with_the_count_of_changes_is_the_plan_made_afresh(ops: list[tuple[Any, ...]]) -> None:
    resting = RestingNodes()
    counted, compared = RequeuePlan(), RequeuePlan()
    position = {name: i for i, name in enumerate(NAMES)}
    for op in ops:
        _do(resting, op)
        if op[0] != "begin":
            continue
        first = counted.begin(resting.requeues, position, resting.requeue_changes)
        assert first == compared.begin(resting.requeues, position)
        assert first == RequeuePlan().begin(resting.requeues, position)
        assert _plan_of(counted) == _plan_of(compared)
        assert counted._made_from == resting.requeues


@pytest.mark.parametrize(
    ("op", "bumped"),
    [
        pytest.param(("rest", "node-01"), True, id="a re-queued node laid to rest otherwise"),
        pytest.param(("rest", "node-05"), False, id="another node laid to rest"),
        pytest.param(("rest requeued", "node-05", "zone-b", "u1"), True, id="a node to re-queue"),
        pytest.param(("wake", "node-01"), True, id="a re-queued node woken"),
        pytest.param(("wake", "node-05"), False, id="another node woken"),
        pytest.param(("clear",), True, id="every node woken"),
    ],
)
def test_every_change_of_the_re_queues_is_counted(op: tuple[Any, ...], bumped: bool) -> None:
    resting = RestingNodes()
    resting.rest_requeued("node-01", "zone-a", "zone-a", "u1")
    resting.rest("node-02", 50.0, "zone-a")
    before, requeues = resting.requeue_changes, dict(resting.requeues)
    _do(resting, op)
    assert (resting.requeue_changes != before) is bumped
    assert (resting.requeues != requeues) is bumped


def test_another_re_queues_dict_at_the_same_count_is_compared() -> None:
    position = {name: i for i, name in enumerate(NAMES)}
    plan = RequeuePlan()
    assert plan.begin({"node-03": ("zone-a", "u")}, position, 7) == 3
    assert plan.begin({"node-02": ("zone-a", "u")}, position, 7) == 2, "a new RestingNodes counts anew"


# re-queues made zone by zone when the zone's queue is used (the node loop's lazy re-queues) -------

_VISITORS = [f"visitor-{i}" for i in range(4)]  # never planned: visited nodes are awake
_lazy_pass = st.tuples(
    st.dictionaries(st.sampled_from(NAMES), st.tuples(st.sampled_from(ZONES), st.sampled_from(["u1", "u2"]))),
    # each visit: its loop position and the zone whose queue it uses (None: none) with what it does
    st.lists(
        st.tuples(
            st.integers(0, len(NAMES)),
            st.one_of(st.none(), st.sampled_from(ZONES)),
            st.sampled_from(["add", "requeue", "remove", "head"]),
            st.sampled_from(_VISITORS),
        ),
        max_size=6,
    ).map(lambda visits: sorted(visits, key=lambda visit: visit[0])),
)


def _use(queue: RateLimitedTimedQueue, action: str, name: str, now: int) -> object:
    if action == "add":
        return queue.add(name, "v", now)
    if action == "requeue":
        return queue.requeue(name, "v", now)
    if action == "remove":
        return queue.remove(name)
    head = queue.queue.head()
    return None if head is None else (head.value, head.process_at)


@settings(max_examples=300, deadline=None)
@given(st.lists(_lazy_pass, min_size=1, max_size=5))
def test_re_queues_made_when_their_zone_is_used_leave_the_queues_of_re_queues_made_before_each_visit(
    passes: list[Any],
) -> None:
    eager_queues: dict[str, RateLimitedTimedQueue] = {zone: RateLimitedTimedQueue(0.1) for zone in ZONES}
    lazy_queues: dict[str, RateLimitedTimedQueue] = {zone: RateLimitedTimedQueue(0.1) for zone in ZONES}
    eager, lazy = RequeuePlan(), RequeuePlan()
    position = {name: i for i, name in enumerate(NAMES)}
    for t, (requeues, visits) in enumerate(passes):
        now = 1000 + t
        eager_next = eager.begin(requeues, position)
        lazy.begin(requeues, position)
        assert lazy.zones_made(lazy_queues)
        for at, zone, action, name in visits:
            if eager_next < at:
                eager_next = eager.until(at, eager_queues.__getitem__, lambda now=now: now)
            if zone is None:
                continue
            lazy.until_in(zone, at, lazy_queues.__getitem__, lambda now=now: now)
            seen = _use(eager_queues[zone], action, name, now)
            assert _use(lazy_queues[zone], action, name, now) == seen
        eager.until(END, eager_queues.__getitem__, lambda now=now: now)
        lazy.until(END, lazy_queues.__getitem__, lambda now=now: now)
        assert _state(lazy_queues) == _state(eager_queues)


def test_a_zone_without_its_queue_is_not_made_lazily() -> None:
    plan = RequeuePlan()
    plan.begin({"node-01": ("zone-a", "u"), "node-02": ("zone-b", "u")}, {n: i for i, n in enumerate(NAMES)})
    assert plan.zones_made({"zone-a", "zone-b"})
    assert not plan.zones_made({"zone-a"})


def test_a_zone_re_queues_once_even_when_its_queue_is_asked_for_again_meanwhile() -> None:
    queues = {"zone-a": RateLimitedTimedQueue(0.1)}
    plan = RequeuePlan()
    plan.begin({"node-01": ("zone-a", "u"), "node-02": ("zone-a", "u")}, {n: i for i, n in enumerate(NAMES)})
    asked: list[str] = []

    def queue_of(zone: str) -> RateLimitedTimedQueue:
        asked.append(zone)
        plan.until_in(zone, 5, queue_of, lambda: 7)  # a hook asking again: nothing left to make
        return queues[zone]

    plan.until_in("zone-a", 5, queue_of, lambda: 7)
    assert asked == ["zone-a"], "the inner ask found nothing left to make"
    assert sorted(queues["zone-a"].queue.values) == ["node-01", "node-02"]
    assert len(queues["zone-a"].queue.heap) == 2
