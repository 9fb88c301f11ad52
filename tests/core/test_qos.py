"""QoS class tables ported from pkg/apis/core/v1/helper/qos/qos_test.go (both the per-container
and the older named-case versions of TestComputePodQOS), plus GetPodQOS's use of status.qosClass."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.core.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, compute_pod_qos, pod_qos_class


def rl(cpu: str = "", memory: str = "", **extra: str) -> dict[str, str]:
    res = {name: value for name, value in (("cpu", cpu), ("memory", memory)) if value}
    res.update({k.replace("_", "-"): v for k, v in extra.items()})
    return res


def req(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def pod(
    *containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (), resources: Any = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(containers)]
    }
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "resources": r} for i, r in enumerate(init)]
    if resources is not None:
        spec["resources"] = resources
    return {"metadata": {"name": "p"}, "spec": spec}


GUARANTEED_RES = req({"cpu": "100m", "memory": "100Mi", "ephemeral-storage": "10Gi"}, rl("100m", "100Mi"))
BEST_EFFORT_RES = [req(), req(rl("0", "0")), req({"ephemeral-storage": "10Gi"})]
BURSTABLE_RES = [
    req(rl("100m", "100Mi"), rl("200m", "200Mi")),
    req(rl("100m", "100Mi"), rl("100m", "200Mi")),
    req(rl("100m", "100Mi"), rl("200m", "100Mi")),
    req(rl("100m", "100Mi")),
    req(rl("100m", "100Mi"), {"cpu": "100m"}),
]

SINGLE = [
    pytest.param(pod(GUARANTEED_RES), GUARANTEED, id="equal cpu and memory requests and limits are Guaranteed"),
    *[pytest.param(pod(r), BEST_EFFORT, id=f"best-effort shape {i} is BestEffort") for i, r in enumerate(BEST_EFFORT_RES)],
    *[pytest.param(pod(r), BURSTABLE, id=f"burstable shape {i} is Burstable") for i, r in enumerate(BURSTABLE_RES)],
]  # fmt: skip
TWO = [
    pytest.param(pod(GUARANTEED_RES, GUARANTEED_RES), GUARANTEED, id="two Guaranteed containers are Guaranteed"),
    pytest.param(pod(BEST_EFFORT_RES[0], BEST_EFFORT_RES[1]), BEST_EFFORT, id="two BestEffort containers are BestEffort"),
    pytest.param(pod(BURSTABLE_RES[0], BURSTABLE_RES[1]), BURSTABLE, id="two Burstable containers are Burstable"),
    *[
        pytest.param(pod(a, b), BURSTABLE, id=f"mixed container shapes {i}-{j} are Burstable")
        for i, a in enumerate([GUARANTEED_RES, BEST_EFFORT_RES[0], BURSTABLE_RES[0]])
        for j, b in enumerate([GUARANTEED_RES, BEST_EFFORT_RES[1], BURSTABLE_RES[1]])
        if i != j
    ],
]  # fmt: skip


def _as_init_variant(case: Any) -> Any:
    p = copy.deepcopy(case.values[0])
    containers = p["spec"]["containers"]
    p["spec"]["containers"], p["spec"]["initContainers"] = containers[:1], containers[1:]
    return pytest.param(p, case.values[1], id=f"{case.id} (second container as an init container)")


def _pod_level_variant(case: Any) -> Any:
    p = copy.deepcopy(case.values[0])
    p["spec"]["resources"] = p["spec"]["containers"][0]["resources"]
    p["spec"]["containers"][0]["resources"] = GUARANTEED_RES
    return pytest.param(
        p, case.values[1], id=f"{case.id} (as pod-level resources over a Guaranteed container)"
    )


@pytest.mark.parametrize(("p", "expected"), [*SINGLE, *TWO, *[_as_init_variant(c) for c in TWO]])
def test_compute_pod_qos_per_container(p: dict[str, Any], expected: str) -> None:
    assert compute_pod_qos(p) == expected


@pytest.mark.parametrize(("p", "expected"), [_pod_level_variant(c) for c in SINGLE])
def test_pod_level_resources_decide_when_the_gate_is_on(p: dict[str, Any], expected: str) -> None:
    assert compute_pod_qos(p, feature_gates={"PodLevelResources": True}) == expected


@pytest.mark.parametrize(("case",), [pytest.param(c, id=c.id) for c in SINGLE])
def test_pod_level_resources_are_ignored_when_the_gate_is_off(case: Any) -> None:
    p = copy.deepcopy(case.values[0])
    p["spec"]["resources"] = GUARANTEED_RES
    assert compute_pod_qos(p, feature_gates={"PodLevelResources": False}) == case.values[1]


NAMED = [
    ("guaranteed", pod(req(rl("100m", "100Mi"), rl("100m", "100Mi"))), GUARANTEED),
    ("guaranteed-guaranteed", pod(req(rl("100m", "100Mi"), rl("100m", "100Mi")), req(rl("100m", "100Mi"), rl("100m", "100Mi"))), GUARANTEED),
    ("best-effort-best-effort", pod(req(), req()), BEST_EFFORT),
    ("best-effort", pod(req()), BEST_EFFORT),
    ("best-effort-burstable", pod(req(), req(rl("1"), rl("2"))), BURSTABLE),
    ("best-effort-guaranteed", pod(req(), req(rl("10m", "100Mi"), rl("10m", "100Mi"))), BURSTABLE),
    ("burstable-cpu-guaranteed-memory", pod(req(rl("", "100Mi"), rl("", "100Mi"))), BURSTABLE),
    ("burstable-no-limits", pod(req(rl("100m", "100Mi"))), BURSTABLE),
    ("burstable-guaranteed", pod(req(rl("1", "100Mi"), rl("2", "100Mi")), req(rl("100m", "100Mi"), rl("100m", "100Mi"))), BURSTABLE),
    ("burstable-unbounded-but-requests-match-limits", pod(req(rl("100m", "100Mi"), rl("200m", "200Mi")), req(rl("100m", "100Mi"))), BURSTABLE),
    ("burstable-1", pod(req(rl("10m", "100Mi"), rl("100m", "200Mi"))), BURSTABLE),
    ("burstable-2", pod(req(rl("0", "0"), rl("100m", "200Mi"))), BURSTABLE),
    ("best-effort-hugepages", pod(req(rl("0", "0", hugepages_2Mi="1Gi"), rl("0", "0", hugepages_2Mi="1Gi"))), BEST_EFFORT),
    ("init-container", pod(req(), init=(req(rl("10m", "100Mi"), rl("100m", "200Mi")),)), BURSTABLE),
    ("guaranteed-with-pod-level-resources", pod(req(), resources=req(rl("10m", "100Mi"), rl("10m", "100Mi"))), GUARANTEED),
    ("guaranteed-with-pod-and-container-level-resources", pod(req(rl("3m", "10Mi"), rl("5m", "20Mi")), resources=req(rl("10m", "100Mi"), rl("10m", "100Mi"))), GUARANTEED),
    ("burstable-with-pod-level-resources", pod(req(), resources=req(rl("10m", "10Mi"), rl("20m", "50Mi"))), BURSTABLE),
    ("burstable-with-pod-and-container-level-resources", pod(req(rl("5m", "10Mi"), rl("5m", "10Mi")), resources=req(rl("10m", "10Mi"), rl("20m", "50Mi"))), BURSTABLE),
    ("burstable-with-pod-and-container-level-requests", pod(req(rl("5m", "10Mi")), resources=req(rl("10m", "10Mi"))), BURSTABLE),
    ("burstable-with-pod-and-container-level-resources-2", pod(req(rl("5m", "10Mi")), req(rl("5m", "10Mi"), rl("5m", "10Mi")), resources=req(rl("10m", "10Mi"), rl("5m"))), BURSTABLE),
]  # fmt: skip


@pytest.mark.parametrize(
    ("p", "expected"), [pytest.param(p, e, id=f"upstream case {n}") for n, p, e in NAMED]
)
def test_compute_pod_qos_named_cases(p: dict[str, Any], expected: str) -> None:
    assert compute_pod_qos(p) == expected


def test_quantities_compare_by_value_not_by_spelling() -> None:
    assert compute_pod_qos(pod(req(rl("1", "1Gi"), rl("1000m", "1024Mi")))) == GUARANTEED


def test_a_pod_without_containers_is_best_effort() -> None:
    assert compute_pod_qos({"spec": {}}) == BEST_EFFORT


def test_get_pod_qos_prefers_the_persisted_status_class() -> None:
    p = {**pod(req()), "status": {"qosClass": "Guaranteed"}}
    assert pod_qos_class(p) == GUARANTEED
    assert compute_pod_qos(p) == BEST_EFFORT


def test_get_pod_qos_computes_when_no_class_is_persisted() -> None:
    assert pod_qos_class(pod(req(rl("1")))) == BURSTABLE
