"""A zone outage at small scale follows upstream's node lifecycle arithmetic (semantics.md §12):
heartbeats stop at 60 s; Ready goes Unknown at the first 5 s monitor pass after the last observed
renewal + 50 s grace; the unreachable NoExecute taint is queued one pass later; each zone's queue
taints through a token bucket of `nodeEvictionRate` per second (burst 1); a fully disrupted zone
beside healthy ones taints at the normal rate; when every zone is fully disrupted the controller
stops tainting and removes the NoExecute taints."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kubetaint.sim.api import simulate

UNREACHABLE_NO_EXECUTE = "node.kubernetes.io/unreachable:NoExecute"


def scenario(
    *, zones: list[str], per_zone: int, down: list[str], rate: float, until: str, later: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "zone-outage-small"},
        "spec": {
            "seed": 3,
            "until": until,
            "settings": {"nodeEvictionRate": rate},
            "nodeGroups": [
                {
                    "name": zone,
                    "count": per_zone,
                    "zones": [zone],
                    "template": {"status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                }
                for zone in zones
            ],
            "events": [
                {"at": "60s" if i == 0 or not later else later, "zone": zone, "fault": "stop"}
                for i, zone in enumerate(down)
            ],
        },
    }


def taint_times(doc: dict[str, Any], prefix: str) -> list[float]:
    return [
        r["t"]
        for r in doc["timeline"]
        if r["reason"] == "TaintAdded"
        and r["message"] == UNREACHABLE_NO_EXECUTE
        and r["name"].startswith(prefix)
    ]


@pytest.mark.parametrize(
    ("rate", "spacing"),
    [
        pytest.param(0.1, 10.0, id="the default 0.1 nodes per second taints one node every ten seconds"),
        pytest.param(0.5, 2.0, id="a faster rate shortens the spacing to two seconds"),
    ],
)
def test_a_failed_zone_beside_healthy_ones_is_tainted_at_the_zone_rate(rate: float, spacing: float) -> None:
    doc = simulate(scenario(zones=["za", "zb", "zc"], per_zone=4, down=["za"], rate=rate, until="3m"))
    times = taint_times(doc, "za-")
    assert len(times) == 4
    # Every node of the zone is queued in the same monitor pass; the bucket then releases them.
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times)]
    assert gaps == [spacing] * 3
    # Ready goes Unknown 50 s after the pass that saw the last renewal (renewals every 10 s, passes
    # every 5 s); the NoExecute taint is queued one pass later and the bucket releases the first at once.
    not_ready = {
        r["t"] for r in doc["timeline"] if r["reason"] == "NodeNotReady" and r["name"].startswith("za-")
    }
    assert len(not_ready) == 1
    (went_unknown,) = not_ready
    assert 60 + 40 <= went_unknown <= 60 + 50
    assert times[0] == went_unknown + 5
    assert taint_times(doc, "zb-") == [] and taint_times(doc, "zc-") == []


def test_when_every_zone_is_fully_disrupted_tainting_stops_and_the_taints_are_removed() -> None:
    doc = simulate(
        scenario(zones=["za", "zb"], per_zone=3, down=["za", "zb"], rate=0.1, until="10m", later="200s")
    )
    tainted = taint_times(doc, "za-")
    assert len(tainted) == 3 and max(tainted) < 200  # zone a alone: tainted at the normal rate
    removed = [
        r for r in doc["timeline"] if r["reason"] == "TaintRemoved" and r["message"] == UNREACHABLE_NO_EXECUTE
    ]
    assert sorted(r["name"] for r in removed) == ["za-0", "za-1", "za-2"]
    # Removed in the very pass that sees zone b's nodes go NotReady (every zone then fully disrupted).
    zb_not_ready = {
        r["t"] for r in doc["timeline"] if r["reason"] == "NodeNotReady" and r["name"].startswith("zb-")
    }
    assert len(zb_not_ready) == 1
    assert {r["t"] for r in removed} == zb_not_ready
    assert taint_times(doc, "zb-") == []
    for node in doc["final"]["nodes"]:
        assert [t for t in node["spec"].get("taints", []) if t["effect"] == "NoExecute"] == []
