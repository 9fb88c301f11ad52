"""The Job controller's pod failure policy, success policy and backoff limit per index with the
scheduler, taint evictions and hollow kubelets: what upstream's job_controller_test.go checks of
them, on running pods."""

from __future__ import annotations

from typing import Any

from controllers.batch_builders import conditions, create_job, events, get, job, pods, running_plane
from kubetaint.controlplane import ControlPlane

IGNORE_DISRUPTIONS = {
    "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
}


def _taint_node_of(plane: ControlPlane, pod: dict[str, Any]) -> None:
    node = get(plane, "nodes", pod["spec"]["nodeName"], namespace="")
    node["spec"]["taints"] = [{"key": "maintenance", "effect": "NoExecute"}]
    plane.registry.update("nodes", node)


def test_a_taint_eviction_does_not_count_against_a_job_that_ignores_disruptions() -> None:
    plane = running_plane("n1", "n2")
    create_job(plane, job("batch", run_seconds=600, backoffLimit=0, podFailurePolicy=IGNORE_DISRUPTIONS))
    plane.clock.advance(1)
    (first,) = pods(plane)
    _taint_node_of(plane, first)
    plane.clock.advance(15)
    (second,) = pods(plane)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert second["spec"]["nodeName"] != first["spec"]["nodeName"]
    status = get(plane, "jobs.batch", "batch")["status"]
    assert "failed" not in status
    assert conditions(get(plane, "jobs.batch", "batch")) == []


def test_without_the_policy_the_same_eviction_fails_a_job_with_no_backoff_left() -> None:
    plane = running_plane("n1", "n2")
    create_job(plane, job("batch", run_seconds=600, backoffLimit=0))
    plane.clock.advance(1)
    (first,) = pods(plane)
    _taint_node_of(plane, first)
    plane.clock.advance(15)
    failed = get(plane, "jobs.batch", "batch")
    assert failed["status"]["failed"] == 1
    assert [c[:3] for c in conditions(failed)] == [
        ("FailureTarget", "True", "BackoffLimitExceeded"),
        ("Failed", "True", "BackoffLimitExceeded"),
    ]


def test_a_fail_job_rule_on_an_exit_code_fails_the_job_with_upstreams_message() -> None:
    plane = running_plane("n1")
    policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
    create_job(plane, job("fatal", exit_code=42, backoffLimit=6, podFailurePolicy=policy))
    plane.clock.advance(1)
    failed = get(plane, "jobs.batch", "fatal")
    (pod,) = pods(plane)
    message = (
        f"Container c for pod default/{pod['metadata']['name']} failed with exit code 42 matching FailJob "
        "rule at index 0"
    )
    assert conditions(failed) == [
        ("FailureTarget", "True", "PodFailurePolicy", message),
        ("Failed", "True", "PodFailurePolicy", message),
    ]
    assert failed["status"]["failed"] == 1
    assert events(plane, "job-controller")[-1] == ("Warning", "PodFailurePolicy", message)


def test_an_ignored_exit_code_is_retried_after_the_back_off_without_counting() -> None:
    plane = running_plane("n1")
    policy = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}
    create_job(plane, job("flaky", exit_code=3, backoffLimit=0, podFailurePolicy=policy))
    plane.clock.advance(1)
    flaky = get(plane, "jobs.batch", "flaky")
    assert "failed" not in flaky["status"] and conditions(flaky) == []
    plane.clock.advance(10)  # the pod failure back-off applies to ignored failures too
    flaky = get(plane, "jobs.batch", "flaky")
    assert "failed" not in flaky["status"] and conditions(flaky) == []
    assert [e[1] for e in events(plane, "job-controller")] == ["SuccessfulCreate", "SuccessfulCreate"]


def test_a_success_policy_completes_an_indexed_job_before_its_completions() -> None:
    plane = running_plane("n1")
    create_job(
        plane,
        job(
            "leader",
            run_seconds=10,
            completionMode="Indexed",
            completions=3,
            parallelism=1,
            successPolicy={"rules": [{"succeededIndexes": "0", "succeededCount": 1}]},
        ),
    )
    plane.clock.advance(12)
    done = get(plane, "jobs.batch", "leader")
    assert conditions(done) == [
        ("SuccessCriteriaMet", "True", "SuccessPolicy", "Matched rules at index 0"),
        ("Complete", "True", "SuccessPolicy", "Matched rules at index 0"),
    ]
    assert (done["status"]["succeeded"], done["status"]["completedIndexes"]) == (1, "0")
    assert len(pods(plane)) == 1


def _indexes_of(plane: ControlPlane) -> list[tuple[str, str, str]]:
    """(index, failure count, phase) of the pods, by index then failure count."""
    return sorted(
        (
            p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
            p["metadata"]["annotations"].get("batch.kubernetes.io/job-index-failure-count", ""),
            p["status"].get("phase", ""),
        )
        for p in pods(plane)
    )


def test_backoff_limit_per_index_retries_each_index_then_fails_the_job_with_its_failed_indexes() -> None:
    plane = running_plane("n1")
    create_job(
        plane,
        job(
            "per-index",
            exit_code=1,
            completionMode="Indexed",
            completions=2,
            parallelism=2,
            backoffLimitPerIndex=1,
        ),
    )
    plane.clock.advance(1)
    first = get(plane, "jobs.batch", "per-index")["status"]
    assert ("failed" not in first, first["failedIndexes"]) == (True, "")
    plane.clock.advance(12)  # the first failure of an index backs off 10 s
    retried = get(plane, "jobs.batch", "per-index")
    assert (retried["status"]["failedIndexes"], retried["status"]["failed"]) == ("0,1", 4)
    assert conditions(retried) == [
        ("FailureTarget", "True", "FailedIndexes", "Job has failed indexes"),
        ("Failed", "True", "FailedIndexes", "Job has failed indexes"),
    ]
    assert _indexes_of(plane) == [
        ("0", "0", "Failed"),
        ("0", "1", "Failed"),
        ("1", "0", "Failed"),
        ("1", "1", "Failed"),
    ]


def test_max_failed_indexes_fails_the_job_at_the_first_index_past_it() -> None:
    plane = running_plane("n1")
    create_job(
        plane,
        job(
            "strict",
            exit_code=1,
            completionMode="Indexed",
            completions=4,
            parallelism=1,
            backoffLimitPerIndex=0,
            maxFailedIndexes=0,
        ),
    )
    plane.clock.advance(1)
    failed = get(plane, "jobs.batch", "strict")
    assert failed["status"]["failedIndexes"] == "0"
    assert conditions(failed) == [
        (
            "FailureTarget",
            "True",
            "MaxFailedIndexesExceeded",
            "Job has exceeded the specified maximal number of failed indexes",
        ),
        (
            "Failed",
            "True",
            "MaxFailedIndexesExceeded",
            "Job has exceeded the specified maximal number of failed indexes",
        ),
    ]


def test_a_fail_index_rule_fails_the_index_at_its_first_failure() -> None:
    plane = running_plane("n1")
    policy = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [7]}}]}
    create_job(
        plane,
        job(
            "index-fail",
            exit_code=7,
            completionMode="Indexed",
            completions=2,
            parallelism=2,
            backoffLimitPerIndex=5,
            podFailurePolicy=policy,
        ),
    )
    plane.clock.advance(1)
    failed = get(plane, "jobs.batch", "index-fail")
    assert failed["status"]["failedIndexes"] == "0,1"
    assert [c[:3] for c in conditions(failed)][-1] == ("Failed", "True", "FailedIndexes")
