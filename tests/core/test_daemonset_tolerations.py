"""DaemonSet default tolerations (AddOrUpdateDaemonPodTolerations, semantics §8)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.core.daemonset import add_or_update_daemon_pod_tolerations


def exists(key: str, effect: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists", "effect": effect}


DEFAULTS = [
    exists("node.kubernetes.io/not-ready", "NoExecute"),
    exists("node.kubernetes.io/unreachable", "NoExecute"),
    exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
    exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
    exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
    exists("node.kubernetes.io/unschedulable", "NoSchedule"),
]
NETWORK = exists("node.kubernetes.io/network-unavailable", "NoSchedule")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, DEFAULTS, id="a spec without tolerations gets the six defaults in upstream order"),
        pytest.param({"hostNetwork": False}, DEFAULTS, id="hostNetwork false adds no network-unavailable toleration"),
        pytest.param({"hostNetwork": True}, [*DEFAULTS, NETWORK],
                     id="a host-network pod also tolerates network-unavailable"),
        pytest.param({"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]},
                     [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, *DEFAULTS],
                     id="user tolerations stay first and the defaults are appended"),
        pytest.param({"tolerations": [{**DEFAULTS[0], "tolerationSeconds": 30}]}, DEFAULTS,
                     id="a matching user toleration with seconds is replaced, so it becomes infinite"),
        pytest.param({"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}]},
                     [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}, *DEFAULTS],
                     id="the same key with another effect is kept alongside the default"),
        pytest.param({"tolerations": [{"operator": "Exists"}]}, [{"operator": "Exists"}, *DEFAULTS],
                     id="a match-everything toleration does not stop the defaults being added"),
        pytest.param({"tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "effect": "NoExecute"}]},
                     [{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "effect": "NoExecute"}, *DEFAULTS],
                     id="a toleration differing only in operator is not a match and is kept"),
    ],
)  # fmt: skip
def test_daemon_pod_tolerations(spec: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    assert add_or_update_daemon_pod_tolerations(spec)["tolerations"] == expected


def test_replacing_keeps_the_position_of_the_user_toleration() -> None:
    spec = {"tolerations": [{"key": "a", "operator": "Exists"}, {**DEFAULTS[3], "tolerationSeconds": 5}]}
    result = add_or_update_daemon_pod_tolerations(spec)["tolerations"]
    assert result[:2] == [{"key": "a", "operator": "Exists"}, DEFAULTS[3]]
    assert len(result) == 7


def test_the_input_spec_is_not_modified_and_other_fields_are_kept() -> None:
    spec = {"containers": [{"name": "c"}], "tolerations": [{**DEFAULTS[0], "tolerationSeconds": 30}]}
    before = copy.deepcopy(spec)
    result = add_or_update_daemon_pod_tolerations(spec)
    assert spec == before
    assert result["containers"] == spec["containers"]


def test_applying_twice_changes_nothing() -> None:
    once = add_or_update_daemon_pod_tolerations({"hostNetwork": True})
    assert add_or_update_daemon_pod_tolerations(once) == once
