"""A Job's pod failure policy on `kubetaint up` with the real kubectl: a Job whose policy ignores
the `DisruptionTarget` condition survives a NoExecute taint eviction of its pod (the pod is
replaced, `status.failed` stays unset although `backoffLimit` is 0), while a FailJob rule on an
exit code fails the Job at once with upstream's reason and message."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

IGNORES_EVICTIONS = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  backoffLimit: 0
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget, status: "True"}]
  template:
    metadata:
      annotations: {kubetaint.io/run-seconds: "600"}
    spec:
      restartPolicy: Never
      containers: [{name: train, image: trainer}]
"""

FAILS_ON_42 = """apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 6
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: migrate, operator: In, values: [42]}
  template:
    metadata:
      annotations: {kubetaint.io/exit-code: "42"}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: migrator}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-job-policies"), "--nodes", "2").start()
    yield up
    up.kill()


def _apply(server: UpServer, name: str, text: str) -> str:
    path = server.workdir / name
    path.write_text(text)
    return server.kubectl("apply", "-f", str(path)).stdout.strip()


def _pods(server: UpServer, job: str) -> list[list[str]]:
    out = server.kubectl(
        "get",
        "pods",
        "-l",
        f"batch.kubernetes.io/job-name={job}",
        "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{'\\n'}{end}",
    ).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def test_a_job_ignoring_disruptions_survives_a_taint_eviction(server: UpServer) -> None:
    assert _apply(server, "train.yaml", IGNORES_EVICTIONS) == "job.batch/train created"

    def running() -> list[list[str]] | None:
        rows = _pods(server, "train")
        return rows if rows and rows[0][2] == "Running" else None

    ((first, node, _),) = eventually(running, "the train pod")
    server.kubectl("taint", "nodes", node, "maintenance=now:NoExecute")
    try:

        def replaced() -> list[str] | None:
            running = [r for r in _pods(server, "train") if r[0] != first and r[2] == "Running"]
            return running[0] if running else None

        second = eventually(replaced, "a new train pod on the other node")
        assert second[1] != node
        evicted = server.kubectl(
            "get",
            "events",
            "--field-selector",
            f"involvedObject.name={first},reason=TaintManagerEviction",
            "-o",
            "jsonpath={.items[*].reason}",
        ).stdout
        assert "TaintManagerEviction" in evicted
        status = server.kubectl(
            "get",
            "job",
            "train",
            "-o",
            "jsonpath={.status.failed}|{.status.conditions[*].type}|{.status.active}",
        ).stdout
        assert status == "||1"  # not failed, no condition, one pod running
    finally:
        server.kubectl("taint", "nodes", node, "maintenance=now:NoExecute-")


def test_a_fail_job_rule_fails_the_job_with_upstreams_message(server: UpServer) -> None:
    assert _apply(server, "migrate.yaml", FAILS_ON_42) == "job.batch/migrate created"
    waited = server.kubectl("wait", "--for=condition=failed", "job/migrate", "--timeout=30s")
    assert waited.stdout.strip() == "job.batch/migrate condition met"
    ((pod, _, phase),) = _pods(server, "migrate")
    assert phase == "Failed"
    reasons = server.kubectl(
        "get",
        "job",
        "migrate",
        "-o",
        "jsonpath={range .status.conditions[*]}{.type}={.reason}={.message}{'\\n'}{end}",
    ).stdout.splitlines()
    message = (
        f"Container migrate for pod default/{pod} failed with exit code 42 matching FailJob rule at index 0"
    )
    assert reasons == [f"FailureTarget=PodFailurePolicy={message}", f"Failed=PodFailurePolicy={message}"]
    row = server.kubectl("get", "job", "migrate", "--no-headers").stdout.split()
    assert row[:2] == ["migrate", "Failed"]
