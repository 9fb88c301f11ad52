"""The hollow runtime's rule for run-to-completion pods: containers of a `Never` or `OnFailure`
pod exit `kubetaint.io/run-seconds` after they start with `kubetaint.io/exit-code`; `Always` pods
run until stopped."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.batch_builders import get, running_plane
from kubetaint.kubelet import runtime


def _pod(restart_policy: str | None, **annotations: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if restart_policy is not None:
        spec["restartPolicy"] = restart_policy
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@pytest.mark.parametrize(
    ("annotations", "seconds", "code"),
    [
        pytest.param({}, 0.0, 0, id="no annotations: exits at once with 0"),
        pytest.param({runtime.RUN_SECONDS_ANNOTATION: "30"}, 30.0, 0, id="run seconds"),
        pytest.param({runtime.RUN_SECONDS_ANNOTATION: "2.5"}, 2.5, 0, id="fractional run seconds"),
        pytest.param({runtime.RUN_SECONDS_ANNOTATION: "-4"}, 0.0, 0, id="negative seconds: at once"),
        pytest.param({runtime.RUN_SECONDS_ANNOTATION: "soon"}, 0.0, 0, id="not a number: at once"),
        pytest.param({runtime.RUN_SECONDS_ANNOTATION: "inf"}, 0.0, 0, id="infinite: at once"),
        pytest.param({runtime.EXIT_CODE_ANNOTATION: "3"}, 0.0, 3, id="exit code"),
        pytest.param({runtime.EXIT_CODE_ANNOTATION: "x"}, 0.0, 0, id="exit code not an integer: 0"),
    ],
)
def test_run_seconds_and_exit_code_come_from_the_annotations(
    annotations: dict[str, str], seconds: float, code: int
) -> None:
    pod = _pod("Never")
    pod["metadata"]["annotations"] = annotations
    assert (runtime.run_seconds(pod), runtime.exit_code(pod)) == (seconds, code)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("Never", True, id="Never"),
        pytest.param("OnFailure", True, id="OnFailure"),
        pytest.param("Always", False, id="Always"),
        pytest.param(None, False, id="unset (Always)"),
    ],
)
def test_only_run_to_completion_pods_exit(policy: str | None, expected: bool) -> None:
    assert runtime.runs_to_completion(_pod(policy)) is expected


def test_restart_back_off_doubles_from_ten_seconds_to_five_minutes() -> None:
    assert [runtime.restart_backoff(n) for n in range(7)] == [10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0]


def _create(plane: Any, policy: str, **annotations: str) -> None:
    pod = _pod(policy)
    pod["metadata"]["annotations"] = dict(annotations)
    plane.registry.create("pods", pod)


def test_a_never_pod_succeeds_after_its_run_seconds_on_the_cluster_clock() -> None:
    plane = running_plane("n1")
    _create(plane, "Never", **{runtime.RUN_SECONDS_ANNOTATION: "30"})
    plane.clock.advance(29)
    assert get(plane, "pods", "p")["status"]["phase"] == "Running"
    plane.clock.advance(1)
    status = get(plane, "pods", "p")["status"]
    assert status["phase"] == "Succeeded"
    (container,) = status["containerStatuses"]
    terminated = container["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert (terminated["startedAt"], terminated["finishedAt"]) == (
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:30Z",
    )
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")


def test_a_never_pod_with_a_nonzero_exit_code_fails() -> None:
    plane = running_plane("n1")
    _create(plane, "Never", **{runtime.EXIT_CODE_ANNOTATION: "7"})
    plane.clock.advance(1)
    status = get(plane, "pods", "p")["status"]
    assert status["phase"] == "Failed"
    assert status["containerStatuses"][0]["state"]["terminated"]["reason"] == "Error"


def test_an_on_failure_pod_restarts_its_failing_containers_after_a_back_off() -> None:
    plane = running_plane("n1")
    _create(plane, "OnFailure", **{runtime.EXIT_CODE_ANNOTATION: "1", runtime.RUN_SECONDS_ANNOTATION: "5"})
    plane.clock.advance(6)
    waiting = get(plane, "pods", "p")["status"]
    assert waiting["phase"] == "Running"
    assert waiting["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert waiting["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 1
    plane.clock.advance(10)
    restarted = get(plane, "pods", "p")["status"]
    assert restarted["containerStatuses"][0]["restartCount"] == 1
    assert "running" in restarted["containerStatuses"][0]["state"]


def test_an_always_pod_runs_until_stopped() -> None:
    plane = running_plane("n1")
    _create(plane, "Always", **{runtime.RUN_SECONDS_ANNOTATION: "5"})
    plane.clock.advance(3600)
    assert get(plane, "pods", "p")["status"]["phase"] == "Running"
