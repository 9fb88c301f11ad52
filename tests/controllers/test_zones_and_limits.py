"""Zones (GetZoneKey, ComputeZoneState, limiter rates), the token bucket, the rate-limited timed
queue and the controller settings."""

from __future__ import annotations

import pytest

from kubetaint.controllers.nodelifecycle.rate_limited_queue import (
    NeverRateLimiter,
    RateLimitedTimedQueue,
    TimedValue,
    TokenBucketRateLimiter,
    UniqueQueue,
    float32,
)
from kubetaint.controllers.nodelifecycle.settings import NodeLifecycleSettings, parse_duration
from kubetaint.controllers.nodelifecycle.zones import (
    ZoneState,
    compute_zone_state,
    get_zone_key,
    zone_qps,
)

from .builders import node

S = 1_000_000_000  # one second in nanoseconds


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param({}, "", id="no labels: the empty zone"),
        pytest.param({"topology.kubernetes.io/zone": "z1"}, ":\x00:z1", id="zone only"),
        pytest.param({"topology.kubernetes.io/region": "r1"}, "r1:\x00:", id="region only"),
        pytest.param(
            {"topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "z1"},
            "r1:\x00:z1",
            id="region and zone",
        ),
        pytest.param(
            {
                "failure-domain.beta.kubernetes.io/region": "r0",
                "failure-domain.beta.kubernetes.io/zone": "z0",
            },
            "r0:\x00:z0",
            id="beta failure-domain labels as fallback",
        ),
        pytest.param(
            {"topology.kubernetes.io/zone": "", "failure-domain.beta.kubernetes.io/zone": "z0"},
            "",
            id="a present but empty stable label wins over the beta one",
        ),
    ],
)
def test_zone_key(labels: dict[str, str], expected: str) -> None:
    assert get_zone_key(node("n", labels=labels)) == expected


def ready(*statuses: str | None) -> list[dict | None]:
    return [None if s is None else {"type": "Ready", "status": s} for s in statuses]


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param(ready("True", "True"), (0, ZoneState.NORMAL), id="all ready"),
        pytest.param(ready("Unknown"), (1, ZoneState.FULL_DISRUPTION), id="the only node not ready"),
        pytest.param(
            ready(None, "False"), (2, ZoneState.FULL_DISRUPTION), id="missing condition counts as not ready"
        ),
        pytest.param(
            ready("True", "False", "False"), (2, ZoneState.NORMAL), id="two not ready is never partial"
        ),
        pytest.param(
            ready("True", "False", "False", "Unknown"),
            (3, ZoneState.PARTIAL_DISRUPTION),
            id="3 of 4 is partial",
        ),
        pytest.param(
            ready("True", "True", "True", "False", "False", "Unknown"),
            (3, ZoneState.NORMAL),
            id="3 of 6 is below 0.55",
        ),
        pytest.param(
            ready(*["True"] * 9, *["False"] * 11),
            (11, ZoneState.PARTIAL_DISRUPTION),
            id="11 of 20 is exactly 0.55",
        ),
        pytest.param(ready(*["True"] * 10, *["False"] * 10), (10, ZoneState.NORMAL), id="10 of 20 is below"),
        pytest.param([], (0, ZoneState.NORMAL), id="an empty zone is normal"),
    ],
)
def test_compute_zone_state(conditions: list, expected: tuple[int, ZoneState]) -> None:
    assert compute_zone_state(conditions, 0.55) == expected


@pytest.mark.parametrize(
    ("state", "size", "expected"),
    [
        pytest.param(ZoneState.NORMAL, 10, 0.1, id="normal zone: nodeEvictionRate"),
        pytest.param(
            ZoneState.PARTIAL_DISRUPTION, 51, 0.01, id="large partially disrupted zone: secondary rate"
        ),
        pytest.param(ZoneState.PARTIAL_DISRUPTION, 50, 0.0, id="partially disrupted zone of 50 nodes stops"),
        pytest.param(
            ZoneState.FULL_DISRUPTION, 3, 0.1, id="fully disrupted zone (others healthy): normal rate"
        ),
        pytest.param(ZoneState.INITIAL, 3, None, id="initial state leaves the limiter alone"),
    ],
)
def test_zone_qps(state: ZoneState, size: int, expected: float | None) -> None:
    assert zone_qps(state, size, 0.1, 0.01, 50) == expected


def test_token_bucket_starts_full_and_refills_at_qps() -> None:
    bucket = TokenBucketRateLimiter(0.1, 1)
    assert bucket.qps() == float32(0.1)
    assert bucket.try_accept(100 * S)
    assert not bucket.try_accept(100 * S)
    assert not bucket.try_accept(109 * S)
    assert not bucket.try_accept(109_900_000_000)
    assert bucket.try_accept(110 * S), "a float32 0.1 qps refills a token in just under 10 s"
    assert not bucket.would_accept(110 * S)


def test_refused_requests_do_not_change_the_bucket() -> None:
    bucket = TokenBucketRateLimiter(1, 1)
    assert bucket.try_accept(0)
    for t in range(1, 10):
        assert not bucket.try_accept(t * 100_000_000)
    assert bucket.try_accept(S)


def test_next_accept_is_a_tight_lower_bound() -> None:
    bucket = TokenBucketRateLimiter(0.01, 1)
    bucket.try_accept(5 * S)
    lower = bucket.next_accept(5 * S)
    assert not bucket.would_accept(lower - 1000)
    assert bucket.would_accept(lower + 2000)
    assert NeverRateLimiter().next_accept(0) is None


def test_unique_queue_orders_by_process_time_and_keeps_processed_values() -> None:
    queue = UniqueQueue()
    assert queue.add(TimedValue("b", "", 0, 5))
    assert queue.add(TimedValue("a", "", 0, 3))
    assert not queue.add(TimedValue("a", "", 0, 1)), "a value can be added only once"
    head = queue.head()
    assert head is not None and head.value == "a"
    assert queue.remove_from_queue("a")
    assert not queue.add(TimedValue("a", "", 0, 1)), "still in the set after processing"
    assert queue.remove("a"), "Remove reports a value known to the set"
    assert queue.add(TimedValue("a", "", 0, 1)), "and re-arms it"
    assert [v.value for v in queue.heap] == ["a", "b"]


def test_heap_ties_break_as_go_container_heap_does() -> None:
    queue = UniqueQueue()
    for name in "abcde":
        queue.add(TimedValue(name, "", 0, 0))
    order = []
    while queue.heap:
        head = queue.head()
        assert head is not None
        order.append(head.value)
        queue.remove_from_queue(head.value)
    # heap.Remove(0) swaps the last element to the root; with equal keys it never sinks.
    assert order == ["a", "e", "d", "c", "b"]


def test_try_is_rate_limited_to_one_value_per_token() -> None:
    queue = RateLimitedTimedQueue(0.1)
    for name in ("n1", "n2", "n3"):
        queue.add(name, "", 0)
    processed: list[tuple[int, str]] = []

    def action(now: int) -> object:
        return lambda v: (processed.append((now // S, v.value)), (True, 0))[1]

    for second in range(0, 31):
        queue.try_(second * S, action(second * S))  # type: ignore[arg-type]
    assert processed == [(0, "n1"), (10, "n3"), (20, "n2")]
    assert not queue.pending
    assert not queue.add("n1", "", 31 * S), "processed values stay in the set"


def test_failed_action_is_retried_after_its_wait() -> None:
    queue = RateLimitedTimedQueue(100)
    queue.add("n1", "", 0)
    calls: list[int] = []

    def action(now: int) -> object:
        def run(value: TimedValue) -> tuple[bool, int]:
            calls.append(now)
            return len(calls) > 1, 50_000_000

        return run

    queue.try_(0, action(0))  # type: ignore[arg-type]
    head = queue.queue.head()
    assert head is not None and head.process_at == 50_000_001
    queue.try_(50_000_000, action(50_000_000))  # type: ignore[arg-type]
    assert calls == [0], "not due yet (and the token is spent)"
    queue.try_(100_000_000, action(100_000_000))  # type: ignore[arg-type]
    assert calls == [0, 100_000_000] and not queue.pending


def test_swap_limiter() -> None:
    queue = RateLimitedTimedQueue(0.1)
    assert queue.limiter.try_accept(0)
    queue.swap_limiter(0.1, 0)
    assert not queue.limiter.would_accept(0), "the same qps keeps the (exhausted) limiter"
    queue.swap_limiter(1, 0)
    assert not queue.limiter.would_accept(0), "an exhausted bucket makes the new one start empty"
    assert queue.limiter.would_accept(S)
    queue.swap_limiter(0, S)
    assert isinstance(queue.limiter, NeverRateLimiter) and not queue.limiter.would_accept(100 * S)
    queue.swap_limiter(0.01, 100 * S)
    assert not queue.limiter.would_accept(100 * S), (
        "the never limiter refuses, so the new bucket starts empty"
    )
    assert not queue.limiter.would_accept(200 * S), "float32(0.01) is a little under 0.01"
    assert queue.limiter.would_accept(200 * S + 100_000_000)


def test_settings_defaults_and_flag_names() -> None:
    default = NodeLifecycleSettings()
    assert (
        default.node_monitor_period,
        default.node_monitor_grace_period,
        default.node_startup_grace_period,
        default.node_eviction_rate,
        default.secondary_node_eviction_rate,
        default.unhealthy_zone_threshold,
        default.large_cluster_size_threshold,
    ) == (5.0, 50.0, 60.0, 0.1, 0.01, 0.55, 50)
    custom = NodeLifecycleSettings.from_mapping(
        {
            "nodeMonitorGracePeriod": "40s",
            "nodeMonitorPeriod": "500ms",
            "nodeStartupGracePeriod": "1m30s",
            "nodeEvictionRate": 0.5,
            "largeClusterSizeThreshold": 10,
            "percentageOfNodesToScore": 0,
        }
    )
    assert custom.node_monitor_grace_period == 40.0
    assert custom.node_monitor_period == 0.5
    assert custom.node_startup_grace_period == 90.0
    assert custom.node_eviction_rate == 0.5
    assert custom.large_cluster_size_threshold == 10


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param(
            {"nodeMonitorGracePeriod": "5x"},
            'nodeMonitorGracePeriod: time: unknown unit "x" in duration "5x"',
            id="bad duration",
        ),
        pytest.param({"nodeMonitorPeriod": 0}, "nodeMonitorPeriod: must be greater than 0", id="zero period"),
        pytest.param(
            {"unhealthyZoneThreshold": 2},
            "unhealthyZoneThreshold: must be between 0 and 1",
            id="bad threshold",
        ),
        pytest.param(
            {"largeClusterSizeThreshold": 1.5},
            "largeClusterSizeThreshold: expected an integer, got 1.5",
            id="fraction",
        ),
        pytest.param(
            {"nodeEvictionRate": "fast"}, "nodeEvictionRate: expected a number, got 'fast'", id="not a number"
        ),
    ],
)
def test_settings_errors(settings: dict, message: str) -> None:
    with pytest.raises(ValueError) as err:
        NodeLifecycleSettings.from_mapping(settings)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("50s", 50.0), ("1h30m", 5400.0), ("100ms", 0.1), ("300", 300.0), (2.5, 2.5), ("1.5m", 90.0)],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text, "x") == pytest.approx(seconds)
