"""TaintToleration filter and score, upstream taint_toleration_test.go tables as data."""

from __future__ import annotations

import numpy as np
import pytest

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.plugins.taint_toleration import TaintToleration
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code
from scheduler.builders import node, pod, taint, toleration

UNTOLERATED = "node(s) had untolerated taint(s)"

FILTER_CASES = [
    pytest.param(
        [],
        [taint("dedicated", "user1")],
        False,
        id="a pod without tolerations is rejected by a NoSchedule taint",
    ),
    pytest.param(
        [toleration("dedicated", "Equal", "user1", "NoSchedule")],
        [taint("dedicated", "user1")],
        True,
        id="a pod tolerating the exact taint fits",
    ),
    pytest.param(
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1")],
        False,
        id="a toleration with another value does not fit",
    ),
    pytest.param(
        [toleration("foo", "Exists", "", "NoSchedule")],
        [taint("foo", "bar")],
        True,
        id="operator Exists tolerates any value of the key",
    ),
    pytest.param(
        [
            toleration("dedicated", "Equal", "user2", "NoSchedule"),
            toleration("foo", "Exists", "", "NoSchedule"),
        ],
        [taint("dedicated", "user2"), taint("foo", "bar")],
        True,
        id="several tolerations cover several taints",
    ),
    pytest.param(
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [taint("foo", "bar")],
        False,
        id="a PreferNoSchedule toleration does not cover a NoSchedule taint",
    ),
    pytest.param(
        [toleration("foo", "Equal", "bar")],
        [taint("foo", "bar")],
        True,
        id="an empty toleration effect matches every effect",
    ),
    pytest.param(
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
        id="PreferNoSchedule taints never reject",
    ),
    pytest.param([], [taint("k", "v", "NoExecute")], False, id="NoExecute taints reject too"),
    pytest.param(
        [toleration("", "Exists")],
        [taint("a", "b"), taint("c", "", "NoExecute")],
        True,
        id="empty key with Exists tolerates everything",
    ),
]


@pytest.mark.parametrize(("tolerations", "taints", "fits"), FILTER_CASES)
def test_filter(tolerations: list, taints: list, fits: bool) -> None:
    plugin = TaintToleration()
    status = plugin.filter(
        CycleState(), PodInfo(pod("p", tolerations=tolerations)), NodeInfo(node("n", taints=taints))
    )
    assert status.is_success() == fits
    if not fits:
        assert status.code == Code.UnschedulableAndUnresolvable
        assert status.reasons == (UNTOLERATED,)


@pytest.mark.parametrize(("tolerations", "taints", "fits"), FILTER_CASES)
def test_batch_filter_agrees(tolerations: list, taints: list, fits: bool) -> None:
    cache = Cache()
    cache.add_node(node("plain"))
    cache.add_node(node("n", taints=taints))
    plugin = TaintToleration()
    mask = plugin.filter_batch(CycleState(), PodInfo(pod("p", tolerations=tolerations)), cache)
    verdict = True if mask is None else bool(mask[cache.nodes["n"].slot])
    assert verdict == fits


SCORE_CASES = [
    pytest.param(
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [[taint("foo", "bar", "PreferNoSchedule")], [taint("foo", "blah", "PreferNoSchedule")]],
        [100, 0],
        id="the node whose PreferNoSchedule taint is tolerated scores best",
    ),
    pytest.param(
        [
            toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule"),
            toleration("disk-type", "Equal", "ssd", "PreferNoSchedule"),
        ],
        [
            [],
            [taint("cpu-type", "arm64", "PreferNoSchedule")],
            [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")],
        ],
        [100, 100, 100],
        id="all taints tolerated gives every node the maximum",
    ),
    pytest.param(
        [toleration("foo", "Equal", "bar", "NoSchedule")],
        [
            [],
            [taint("cpu-type", "arm64", "PreferNoSchedule")],
            [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("cpu-type", "arm32", "PreferNoSchedule")],
        ],
        [100, 50, 0],
        id="intolerable PreferNoSchedule taints are counted and reverse normalised",
    ),
    pytest.param(
        [toleration("cpu-type", "Equal", "arm64", "NoSchedule")],
        [[], [taint("cpu-type", "arm64", "NoSchedule")], [taint("cpu-type", "arm64", "PreferNoSchedule")]],
        [100, 100, 0],
        id="a NoSchedule toleration does not count for scoring",
    ),
    pytest.param(
        [],
        [
            [],
            [taint("a", "1", "PreferNoSchedule")],
            [
                taint("a", "1", "PreferNoSchedule"),
                taint("b", "", "PreferNoSchedule"),
                taint("c", "", "PreferNoSchedule"),
            ],
        ],
        [100, 67, 0],
        id="raw counts 0 1 3 normalise to 100 67 0 with integer division",
    ),
]


@pytest.mark.parametrize(("tolerations", "node_taints", "expected"), SCORE_CASES)
def test_score(tolerations: list, node_taints: list, expected: list[int]) -> None:
    plugin = TaintToleration()
    pi = PodInfo(pod("p", tolerations=tolerations))
    cache = Cache()
    infos = [cache.add_node(node(f"n{i}", taints=t)) for i, t in enumerate(node_taints)]
    raw = np.array([plugin.score(CycleState(), pi, ni) for ni in infos], np.int64)
    batch = plugin.score_batch(CycleState(), pi, cache, np.array([ni.slot for ni in infos]))
    assert raw.tolist() == batch.tolist()
    assert plugin.normalize_score(CycleState(), pi, raw).tolist() == expected
