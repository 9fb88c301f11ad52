"""PodInfo, make_pod_info and PodInfo.refreshed take the pod's key when the caller has worked it
out already (Scheduler.add_pod, the scheduler cache): the result must be exactly the PodInfo
made without it, and the scheduler cache must end up the same either way."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.podinfo import PodInfo, make_pod_info, pod_key
from scheduler.builders import node, pod, scheduler

JSON = dict[str, Any]


def _slots(pi: PodInfo) -> dict[str, Any]:
    return {name: getattr(pi, name) for name in PodInfo.__slots__}


def _with_uid(p: JSON, uid: str | None) -> JSON:
    if uid is not None:
        p["metadata"]["uid"] = uid
    return p


CASES = [
    pytest.param(_with_uid(pod("a", cpu="100m", node_name="n1"), "uid-a"), id="a stored pod: keyed by uid"),
    pytest.param(pod("b", cpu="1", namespace="x"), id="a pod without uid: keyed by namespace/name"),
    pytest.param({"metadata": {"name": "c"}, "spec": {}}, id="no namespace: keyed under default"),
    pytest.param(_with_uid(pod("d", start="2026-01-01T00:00:05Z"), "uid-d"), id="a pod with a start time"),
]


@pytest.mark.parametrize("p", CASES)
def test_make_pod_info_with_its_key_equals_without(p: JSON) -> None:
    assert _slots(make_pod_info(p, pod_key(p))) == _slots(make_pod_info(p))
    assert _slots(PodInfo(p, pod_key(p))) == _slots(PodInfo(p))


@pytest.mark.parametrize("p", CASES)
def test_refreshed_with_its_key_equals_without(p: JSON) -> None:
    prior = make_pod_info(p)
    newer = {**p, "status": {"phase": "Running"}}
    assert _slots(PodInfo.refreshed(prior, newer, pod_key(newer))) == _slots(PodInfo.refreshed(prior, newer))


def _cache_state(pods: list[JSON]) -> Any:
    s = scheduler([node("n1"), node("n2")])
    for p in pods:
        s.add_pod(p)
    cache = s.cache
    return (
        dict(cache.pod_nodes),
        {ni.name: (sorted(ni.pods), dict(ni.requested), ni.nonzero_cpu) for ni in cache.node_list()},
        sorted(cache.assumed),
    )


def test_scheduler_add_pod_fills_the_cache_as_the_cache_itself_does() -> None:
    pods = [
        _with_uid(pod("a", cpu="100m", node_name="n1"), "uid-a"),
        _with_uid(pod("b", cpu="200m", node_name="n2"), "uid-b"),
        _with_uid(pod("a", cpu="100m", node_name="n2"), "uid-a"),  # moved: the prior entry goes
    ]
    s = scheduler([node("n1"), node("n2")])
    for p in pods:
        s.cache.add_pod(p)
    expected = (
        dict(s.cache.pod_nodes),
        {ni.name: (sorted(ni.pods), dict(ni.requested), ni.nonzero_cpu) for ni in s.cache.node_list()},
        sorted(s.cache.assumed),
    )
    assert _cache_state(pods) == expected
    assert expected[0] == {"uid-a": "n2", "uid-b": "n2"}
