"""Node-pressure eviction under the memory-pressure fault: upstream ranking, one pod per 10 s pass,
exact status and message strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubelet.builders import container, events, make_pool, pod
from kubetaint.kubelet.eviction import format_binary, memory_eviction_message, rank_memory_pressure


def names(pods):
    return [p["metadata"]["name"] for p in pods]


def test_ranking_puts_pods_exceeding_requests_first_then_priority_then_usage_above_request() -> None:
    pods = [
        pod("guaranteed-low", containers=[container(memory="1Gi")], priority=0),
        pod("besteffort-high", priority=1000),
        pod("besteffort-low", priority=0),
        pod(
            "heavy-user",
            containers=[container(memory="1Gi")],
            priority=0,
            annotations={"kubetaint.dev/memory-usage": "3Gi"},
        ),
        pod(
            "light-user",
            containers=[container(memory="1Gi")],
            priority=0,
            annotations={"kubetaint.dev/memory-usage": "2Gi"},
        ),
    ]
    assert names(rank_memory_pressure(pods)) == [
        "heavy-user",
        "light-user",
        "besteffort-low",
        "besteffort-high",
        "guaranteed-low",
    ]


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        pytest.param(0, "0", id="zero"),
        pytest.param(1024 * 1024, "1Mi", id="one mebibyte"),
        pytest.param(3 * 2**30, "3Gi", id="gibibytes"),
        pytest.param(1500, "1500", id="not a binary multiple"),
    ],
)
def test_format_binary(amount, text) -> None:
    assert format_binary(amount) == text


def test_eviction_message_names_containers_over_their_request() -> None:
    obj = pod("a", containers=[container("web"), container("side", memory="64Mi")])
    assert memory_eviction_message(obj, "50Mi") == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container web was using 1Mi, request is 0, has larger consumption of memory. "
    )


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4), st.booleans()), min_size=1, max_size=8))
def test_ranking_law_exceeding_pods_always_come_before_the_others(specs) -> None:
    pods = []
    for i, (prio, mem, annotate) in enumerate(specs):
        memory = f"{mem}Gi" if mem else None
        annotations = {"kubetaint.dev/memory-usage": f"{mem + 1}Gi"} if annotate and mem else None
        pods.append(
            pod(f"p{i}", containers=[container(memory=memory)], priority=prio, annotations=annotations)
        )
    ranked = rank_memory_pressure(pods)
    flags = [
        bool(not p["spec"]["containers"][0]["resources"] or p["metadata"].get("annotations")) for p in ranked
    ]
    assert flags == sorted(flags, reverse=True)


def test_memory_pressure_evicts_one_pod_per_pass_in_rank_order_until_relieved() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    store.create("pods", pod("critical", "n1", priority=2_000_000_000))
    store.create("pods", pod("guaranteed", "n1", containers=[container(memory="1Gi", limits=True)]))
    store.create("pods", pod("besteffort", "n1"))
    store.create("pods", pod("burstable", "n1", containers=[container(cpu="100m")], priority=10))
    clock.run_pending()
    clock.advance(3)
    pool.fault(["n1"], "memory-pressure", available="50Mi")
    clock.run_pending()
    first = store.get("pods", "default", "besteffort")["status"]
    assert first["phase"] == "Failed" and first["reason"] == "Evicted"
    message = (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 1Mi, request is 0, has larger consumption of memory. "
    )
    assert first["message"] == message
    target = next(c for c in first["conditions"] if c["type"] == "DisruptionTarget")
    assert target == {
        "type": "DisruptionTarget",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "2026-01-01T00:00:03Z",
        "reason": "TerminationByKubelet",
        "message": message,
    }
    assert store.get("pods", "default", "burstable")["status"]["phase"] == "Running"
    clock.advance(9.9)
    assert store.get("pods", "default", "burstable")["status"]["phase"] == "Running"
    clock.advance(0.1)
    assert store.get("pods", "default", "burstable")["status"]["phase"] == "Failed"
    clock.advance(10)
    assert store.get("pods", "default", "guaranteed")["status"]["phase"] == "Failed"
    clock.advance(50)
    assert store.get("pods", "default", "critical")["status"]["phase"] == "Running"
    evicted = events(store, "Evicted")
    assert [e["involvedObject"]["name"] for e in evicted] == ["besteffort", "burstable", "guaranteed"]
    assert all(e["type"] == "Warning" for e in evicted)
    assert events(store, "EvictionThresholdMet")[0]["message"] == "Attempting to reclaim memory"


def test_relieve_stops_evictions_at_once() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    for name in ("a", "b"):
        store.create("pods", pod(name, "n1"))
    clock.run_pending()
    pool.fault(["n1"], "memory-pressure")
    clock.run_pending()
    pool.fault(["n1"], "relieve")
    clock.advance(600)
    phases = sorted(p["status"]["phase"] for p in store.list("pods").items)
    assert phases == ["Failed", "Running"]


def test_disk_pressure_evicts_nothing() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    store.create("pods", pod("a", "n1"))
    clock.run_pending()
    pool.fault(["n1"], "disk-pressure")
    clock.advance(120)
    assert store.get("pods", "default", "a")["status"]["phase"] == "Running"
