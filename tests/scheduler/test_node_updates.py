"""Node updates in the scheduler cache keep the parse of quantities they carry again (a status
update mostly re-posts the very same allocatable) and leave a slot's allocatable columns alone
when the amounts did not change: after any sequence of node updates the cache must hold what a
cache built from the final nodes holds — the same NodeInfo allocatable, the same columns, the
same slot versions where the amounts moved — and a malformed quantity is refused as before."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.resources import InputError, node_allocatable

from .builders import node, pod

JSON = dict[str, Any]
NAMES = ("n1", "n2", "n3")

_amounts = st.fixed_dictionaries(
    {"cpu": st.sampled_from(["1", "2", "2000m", "4"]), "pods": st.sampled_from(["10", "110"])},
    optional={
        "memory": st.sampled_from(["1Gi", "1024Mi", "2Gi"]),
        "example.com/gpu": st.sampled_from(["0", "1", "2"]),
    },
)
_update = st.tuples(
    st.sampled_from(NAMES),
    _amounts,
    st.sampled_from(["allocatable", "capacity", "both"]),
    st.booleans(),  # tainted
    st.booleans(),  # the update carries the previous allocatable object itself
)


def _node(name: str, amounts: dict[str, str], where: str, tainted: bool) -> JSON:
    body = node(name, taints=[{"key": "k", "effect": "NoSchedule"}] if tainted else None)
    status: JSON = {}
    if where in ("allocatable", "both"):
        status["allocatable"] = dict(amounts)
    if where in ("capacity", "both"):
        status["capacity"] = dict(amounts)
    body["status"] = status
    return body


def _columns(cache: Cache, name: str) -> tuple[Any, ...]:
    ni = cache.nodes[name]
    s = ni.slot
    alloc = {col: int(cache.alloc[s, i]) for col, i in cache.columns.items() if int(cache.alloc[s, i])}
    return (
        ni.allocatable,
        ni.allowed_pods,
        alloc,
        int(cache.allowed_pods[s]),
        cache.taint_sets[int(cache.taint_set[s])],
        bool(cache.unschedulable[s]),
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(_update, min_size=1, max_size=25))
def test_a_cache_after_node_updates_holds_what_the_final_nodes_give(updates: list[Any]) -> None:
    cache = Cache()
    for p in (pod("a", cpu="500m", node_name="n1"), pod("b", cpu="1", node_name="n2")):
        cache.add_pod(p)
    latest: dict[str, JSON] = {}
    for name, amounts, where, tainted, reuse in updates:
        body = _node(name, amounts, where, tainted)
        previous = latest.get(name)
        if reuse and previous is not None:
            body["status"] = previous["status"]  # a status re-posting the same objects
        versions = {n: int(cache.slot_version[ni.slot]) for n, ni in cache.nodes.items()}
        before = cache.nodes[name].allocatable if name in cache.nodes else None
        cache.update_node(body)
        latest[name] = body
        after = cache.nodes[name].allocatable
        moved = before is not None and after != before
        version = int(cache.slot_version[cache.nodes[name].slot])
        if before is not None:
            assert version == versions[name] + (1 if moved else 0), "a version moves with the amounts"
    fresh = Cache()
    for body in latest.values():
        fresh.add_node(body)
    for name, body in latest.items():
        assert cache.nodes[name].allocatable == node_allocatable(body)
        assert _columns(cache, name)[1:] == _columns(fresh, name)[1:]


def test_a_node_info_reparses_only_quantities_that_differ() -> None:
    body = _node("n1", {"cpu": "2", "pods": "10"}, "allocatable", False)
    ni = NodeInfo(body)
    parsed = ni.allocatable
    ni.set_node({**body, "status": {"allocatable": {"cpu": "2", "pods": "10"}}})
    assert ni.allocatable is parsed, "equal quantities keep their parse"
    ni.set_node({**body, "status": {"allocatable": {"cpu": "2000m", "pods": "10"}}})
    assert ni.allocatable == {"cpu": 2000, "pods": 10}
    assert ni.allocatable is not parsed
    ni.set_node({**body, "status": {"capacity": {"cpu": "3", "pods": "10"}}})
    assert ni.allocatable == {"cpu": 3000, "pods": 10}, "capacity stands in for a missing allocatable"


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"cpu": "lots", "pods": "10"}, id="a malformed cpu"),
        pytest.param({"cpu": "2", "pods": "ten"}, id="a malformed pod count"),
    ],
)
def test_a_malformed_quantity_is_refused_after_good_ones(bad: dict[str, str]) -> None:
    ni = NodeInfo(_node("n1", {"cpu": "2", "pods": "10"}, "allocatable", False))
    with pytest.raises(InputError):
        ni.set_node(_node("n1", bad, "allocatable", False))
    with pytest.raises(InputError):  # and again: a refused parse is not remembered
        ni.set_node(_node("n1", bad, "allocatable", False))


# a status post that moves only heartbeat times (the very spec, labels and quantities objects) ---

#: a step: (node, what the update changes) — "beat" re-posts the node with new heartbeat times
#: (sharing every other part), "taint", "label", "resize", "cordon" change that part
_steps = st.lists(
    st.tuples(
        st.sampled_from(NAMES), st.sampled_from(["beat", "beat", "taint", "label", "resize", "cordon"])
    ),
    min_size=1,
    max_size=20,
)


def _changed(previous: JSON, change: str, number: int) -> JSON:
    """`previous` with `change` made, sharing every part it leaves alone (as a stored update does)."""
    meta = {**previous["metadata"], "resourceVersion": str(number)}
    spec, status = previous["spec"], previous["status"]
    if change == "beat":
        conditions = [{"type": "Ready", "status": "True", "lastHeartbeatTime": f"t{number}"}]
        status = {**status, "conditions": conditions}
    elif change == "taint":
        spec = {**spec, "taints": [{"key": f"k{number % 2}", "effect": "NoSchedule"}]}
    elif change == "label":
        meta["labels"] = {"topology.kubernetes.io/zone": f"z{number % 2}"}
    elif change == "resize":
        status = {**status, "allocatable": {"cpu": str(2 + number % 2), "pods": "110"}}
    else:
        spec = {**spec, "unschedulable": not spec.get("unschedulable")}
    return {**previous, "metadata": meta, "spec": spec, "status": status}


def _state(cache: Cache) -> tuple[Any, ...]:
    infos = {
        name: (ni.node, ni.name, ni.labels, ni.taints, ni.unschedulable, ni.allocatable, ni.allowed_pods)
        for name, ni in cache.nodes.items()
    }
    return (
        infos,
        {name: _columns(cache, name) for name in cache.nodes},
        [ni.name for ni in cache.node_list()],
        cache.generation,
        cache.slot_version.tolist(),
        cache.taint_set.tolist(),
    )


@settings(max_examples=150, deadline=None)
@given(_steps)
def test_a_heartbeat_only_post_leaves_the_cache_as_an_update_of_copied_parts(steps: list[Any]) -> None:
    import copy

    shared, copied = Cache(), Cache()  # the second is given deep copies: never the same objects
    latest: dict[str, JSON] = {}
    for name in NAMES:
        latest[name] = node(name, labels={"topology.kubernetes.io/zone": "z0"})
        shared.update_node(latest[name])
        copied.update_node(copy.deepcopy(latest[name]))
    for number, (name, change) in enumerate(steps):
        latest[name] = _changed(latest[name], change, number)
        shared.update_node(latest[name])
        copied.update_node(copy.deepcopy(latest[name]))
        assert shared.nodes[name].node is latest[name]
    assert _state(shared) == _state(copied)
