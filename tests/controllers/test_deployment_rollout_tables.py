"""Deployment rollout arithmetic, with upstream's test tables as data
(deployment_util_test.go TestResolveFenceposts, TestNewRSNewReplicas, TestGetReplicaCountForReplicaSets,
TestMaxUnavailable; rolling_test.go reconcileNewReplicaSet, reconcileOldReplicaSets,
cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.controllers.deployment import rolling, util

JSON = dict[str, Any]


def dep(
    replicas: int, surge: int | str | None = 0, unavailable: int | str | None = 0, kind: str = "RollingUpdate"
) -> JSON:
    rolling_update: JSON = {}
    if surge is not None:
        rolling_update["maxSurge"] = surge
    if unavailable is not None:
        rolling_update["maxUnavailable"] = unavailable
    strategy: JSON = {"type": kind}
    if kind == "RollingUpdate":
        strategy["rollingUpdate"] = rolling_update
    return {
        "metadata": {"name": "foo", "generation": 1},
        "spec": {"replicas": replicas, "strategy": strategy},
    }


def rs(
    name: str, replicas: int, available: int = 0, created: str = "2026-01-01T00:00:00Z", **annotations: str
) -> JSON:
    return {
        "metadata": {"name": name, "creationTimestamp": created, "annotations": dict(annotations)},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "availableReplicas": available},
    }


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        pytest.param("0%", "0%", 0, (0, 1), id="both zero percent forces one unavailable"),
        pytest.param("39%", "39%", 10, (4, 3), id="percentages round surge up and unavailable down"),
        pytest.param(None, None, 10, (0, 1), id="both unset forces one unavailable"),
        pytest.param(3, 2, 10, (3, 2), id="integers are taken as they are"),
        pytest.param("25%", "25%", 8, (2, 2), id="the defaults on 8 replicas"),
        pytest.param("50%", "50%", 5, (3, 2), id="half of an odd count rounds apart"),
    ],
)
def test_resolve_fenceposts(surge: Any, unavailable: Any, desired: int, expected: tuple[int, int]) -> None:
    assert util.resolve_fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize(
    ("surge", "unavailable"),
    [
        pytest.param("oops", "39%", id="a surge that is not a number"),
        pytest.param("55%", "urg", id="an unavailable that is not a number"),
        pytest.param("5", "1", id="a number in a string without a percent sign"),
    ],
)
def test_resolve_fenceposts_rejects_malformed_values(surge: str, unavailable: str) -> None:
    with pytest.raises(ValueError, match="invalid value for IntOrString"):
        util.resolve_fenceposts(surge, unavailable, 10)


@pytest.mark.parametrize(
    ("deployment", "expected"),
    [
        pytest.param(dep(10, 0, 10), 10, id="unavailable above replicas is capped at replicas"),
        pytest.param(dep(10, 0, 2), 2, id="an integer unavailable"),
        pytest.param(dep(10, "0%", "30%"), 3, id="a percentage unavailable"),
        pytest.param(dep(0, 0, 2), 0, id="zero replicas allow none unavailable"),
        pytest.param(dep(10, kind="Recreate"), 0, id="Recreate has no maxUnavailable"),
        pytest.param(dep(3, 0, 10), 3, id="three replicas with ten unavailable"),
    ],
)
def test_max_unavailable(deployment: JSON, expected: int) -> None:
    assert util.max_unavailable(deployment) == expected


def test_defaults_are_25_percent_surge_and_unavailable() -> None:
    d = {"spec": {"replicas": 10}}
    assert (util.max_surge(d), util.max_unavailable(d)) == (3, 2)


@pytest.mark.parametrize(
    ("kind", "dep_replicas", "new_replicas", "surge", "expected"),
    [
        pytest.param("RollingUpdate", 1, 5, 1, 5, id="can not scale up past the surge: stays at new RS size"),
        pytest.param("RollingUpdate", 6, 2, 10, 6, id="scale up to the deployment size"),
        pytest.param("Recreate", 3, 1, 1, 3, id="recreate goes straight to the deployment size"),
    ],
)
def test_new_rs_new_replicas(
    kind: str, dep_replicas: int, new_replicas: int, surge: int, expected: int
) -> None:
    deployment = dep(dep_replicas, surge, 0, kind)
    new = rs("new", new_replicas)
    assert util.new_rs_new_replicas(deployment, [new, rs("other", 5)], new) == expected


def test_replica_counts_sum_spec_and_status() -> None:
    one = {**rs("a", 1), "status": {"replicas": 2}}
    two = {**rs("b", 2), "status": {"replicas": 3}}
    assert (util.spec_replicas_sum([one]), util.status_sum([one], "replicas")) == (1, 2)
    assert (util.spec_replicas_sum([one, two]), util.status_sum([one, two], "replicas")) == (3, 5)


@pytest.mark.parametrize(
    ("replicas", "surge", "old", "new", "expected"),
    [
        pytest.param(10, 0, 10, 0, None, id="no surge: the new replica set cannot grow"),
        pytest.param(10, 2, 10, 0, 2, id="grows by the surge"),
        pytest.param(10, 2, 5, 0, 7, id="grows into the room the old one left"),
        pytest.param(10, 2, 10, 2, None, id="already at the surge limit"),
        pytest.param(10, 2, 2, 11, 10, id="a new replica set above the deployment size is scaled down"),
    ],
)
def test_reconcile_new_replica_set(
    replicas: int, surge: int, old: int, new: int, expected: int | None
) -> None:
    deployment = dep(replicas, surge, 0)
    new_rs, old_rs = rs("foo-v2", new), rs("foo-v1", old)
    assert rolling.reconcile_new(deployment, [new_rs, old_rs], new_rs) == expected


@pytest.mark.parametrize(
    ("replicas", "unavailable", "old", "new", "old_ready", "new_ready", "expected_old"),
    [
        pytest.param(10, 0, 10, 0, 10, 0, 9, id="no unavailable still allows one step"),
        pytest.param(10, 2, 10, 0, 10, 0, 8, id="scale down by the unavailable budget"),
        pytest.param(10, 2, 10, 0, 8, 0, 8, id="unhealthy old replicas are cleaned up first"),
        pytest.param(10, 2, 10, 0, 9, 0, 8, id="one unhealthy cleaned up and one ready scaled down"),
        pytest.param(10, 2, 8, 2, 8, 0, None, id="unavailable new pods block further scale down"),
    ],
)
def test_reconcile_old_replica_sets(
    replicas: int,
    unavailable: int,
    old: int,
    new: int,
    old_ready: int,
    new_ready: int,
    expected_old: int | None,
) -> None:
    deployment = dep(replicas, 0, unavailable)
    new_rs, old_rs = rs("foo-new", new, new_ready), rs("foo-old", old, old_ready)
    budget = rolling.max_scaled_down(deployment, [old_rs, new_rs], [old_rs], new_rs)
    if expected_old is None:
        assert budget <= 0
        return
    cleaned = rolling.cleanup_unhealthy([old_rs], budget)
    after_cleanup = [{**old_rs, "spec": {**old_rs["spec"], "replicas": cleaned.get("foo-old", old)}}]
    scaled = rolling.scale_down_old(deployment, [*after_cleanup, new_rs], after_cleanup)
    final = {**cleaned, **scaled}
    assert final["foo-old"] == expected_old


@pytest.mark.parametrize(
    ("old", "ready", "max_cleanup", "expected"),
    [
        pytest.param(10, 8, 1, 1, id="cleanup capped by the budget"),
        pytest.param(10, 8, 3, 2, id="cleanup capped by the unhealthy count"),
        pytest.param(10, 8, 0, 0, id="no budget, no cleanup"),
        pytest.param(10, 10, 3, 0, id="nothing unhealthy"),
    ],
)
def test_cleanup_unhealthy_replicas(old: int, ready: int, max_cleanup: int, expected: int) -> None:
    sizes = rolling.cleanup_unhealthy([rs("foo-v2", old, ready)], max_cleanup)
    assert old - sizes.get("foo-v2", old) == expected


@pytest.mark.parametrize(
    ("unavailable", "ready", "old", "expected"),
    [
        pytest.param(0, 10, 10, 9, id="one step with no unavailable budget"),
        pytest.param(2, 10, 10, 8, id="two steps with an unavailable budget of two"),
        pytest.param(2, 8, 10, None, id="already at the minimum available"),
        pytest.param(2, 10, 0, None, id="nothing left to scale down"),
        pytest.param(2, 1, 10, None, id="below the minimum available"),
    ],
)
def test_scale_down_old_replica_sets_for_rolling_update(
    unavailable: int, ready: int, old: int, expected: int | None
) -> None:
    deployment = dep(10, 0, unavailable)
    old_rs = rs("foo-v2", old, ready)
    sizes = rolling.scale_down_old(deployment, [old_rs], [old_rs])
    assert sizes.get("foo-v2") == expected


def test_proportional_scaling_gives_leftovers_to_the_largest_replica_set() -> None:
    deployment = {**dep(20, 3, 0), "status": {"replicas": 13}}
    old = rs("old", 10, created="2026-01-01T00:00:00Z", **{util.MAX_REPLICAS: "13"})
    new = rs("new", 3, created="2026-01-01T00:01:00Z", **{util.MAX_REPLICAS: "13"})
    sizes, operation = rolling.proportional(deployment, new, [old])
    assert (sizes, operation) == ({"old": 18, "new": 5}, "up")


def test_proportional_scaling_down_never_goes_below_zero() -> None:
    deployment = {**dep(0, 3, 0), "status": {"replicas": 13}}
    old = rs("old", 10, **{util.MAX_REPLICAS: "13"})
    new = rs("new", 3, created="2026-01-01T00:01:00Z", **{util.MAX_REPLICAS: "13"})
    sizes, operation = rolling.proportional(deployment, new, [old])
    assert (sizes, operation) == ({"old": 0, "new": 0}, "down")


@given(
    replicas=st.integers(0, 200),
    surge=st.integers(0, 100),
    unavailable=st.integers(0, 100),
)
def test_fenceposts_never_leave_a_rollout_without_room_to_move(
    replicas: int, surge: int, unavailable: int
) -> None:
    s, u = util.resolve_fenceposts(f"{surge}%", f"{unavailable}%", replicas)
    assert s >= 0 and u >= 0 and (s > 0 or u > 0)
    assert (s * 100 >= surge * replicas and u * 100 <= unavailable * replicas) or (s == 0 and u == 1)


@pytest.mark.parametrize(
    ("existing", "new_revision", "expected_revision", "expected_history"),
    [
        pytest.param({}, 1, "1", None, id="a fresh replica set gets the new revision"),
        pytest.param(
            {util.REVISION: "1"}, 3, "3", "1", id="a rollback keeps the old revision in the history"
        ),
        pytest.param({util.REVISION: "2", util.REVISION_HISTORY: "1"}, 4, "4", "1,2", id="history appends"),
        pytest.param({util.REVISION: "5"}, 3, "5", None, id="a higher revision is kept"),
    ],
)
def test_new_replica_set_annotations(
    existing: dict[str, str], new_revision: int, expected_revision: str, expected_history: str | None
) -> None:
    deployment = {**dep(3, 1, 0), "metadata": {"annotations": {"team": "a", util.LAST_APPLIED: "{}"}}}
    result = util.new_rs_annotations(deployment, rs("x", 3, **existing), new_revision, exists=True)
    assert result is not None
    assert result[util.REVISION] == expected_revision
    assert result.get(util.REVISION_HISTORY) == expected_history
    assert result["team"] == "a" and util.LAST_APPLIED not in result


def test_a_new_replica_set_gets_the_replicas_annotations() -> None:
    result = util.new_rs_annotations(dep(10, 2, 0), rs("x", 0), 1, exists=False)
    assert result == {util.REVISION: "1", util.DESIRED_REPLICAS: "10", util.MAX_REPLICAS: "12"}
