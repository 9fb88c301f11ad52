"""A rolling update of a DaemonSet none of whose pods is old (findUpdatedPodsOnNode: not being
deleted, IsPodUpdated false) plans nothing, with surge or without."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.daemonset.update import rolling_update

JSON = dict[str, Any]


def pod(name: str, node: str | None, revision: str, deleting: bool) -> JSON:
    meta: JSON = {"name": name, "namespace": "d", "labels": {"controller-revision-hash": revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}}


@pytest.mark.parametrize(
    "rolling",
    [
        pytest.param({"maxUnavailable": 1, "maxSurge": 0}, id="without surge"),
        pytest.param({"maxUnavailable": 0, "maxSurge": 1}, id="with surge"),
    ],
)
def test_a_rolling_update_without_old_pods_plans_nothing(rolling: JSON) -> None:
    ds = {
        "metadata": {"name": "ds"},
        "spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}},
    }
    by_node = {"n1": [pod("a", "n1", "r1", False)], "n2": [pod("b", "n2", "r2", True)]}
    plan = rolling_update(ds, by_node, {"n1": True, "n2": True, "n3": True}, "r1", 0.0)
    assert (plan.delete, plan.create) == ([], [])
