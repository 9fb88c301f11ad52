"""kopf, the operator framework built on CustomResourceDefinitions, against `kubetaint up`: an
operator of a CronTab CRD (operators/crontab_operator.py, run as `kopf run --all-namespaces` in its
own process, with kopf's peering falling back to standalone) sees a custom resource created,
writes its status through the status subresource, sees a spec change, holds the object with its
finalizer until its deletion handler ran, and stops cleanly without errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import KUBECTL, START_TIMEOUT, UpServer, eventually
from .test_up_custom_resources import CRD, CRONTAB, established

pytestmark = [
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
OPERATOR = Path(__file__).parent / "operators" / "crontab_operator.py"
KOPF_CRD = CRD.replace(
    """          status:
            type: object
            properties:
              replicas: {type: integer}""",
    """          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true""",
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    pytest.importorskip("kopf")
    up = UpServer(tmp_path_factory.mktemp("up-kopf-crd"), "--nodes", "0").start()
    (up.workdir / "crd.yaml").write_text(KOPF_CRD)
    up.kubectl("apply", "-f", "crd.yaml")
    eventually(lambda: established(up), "the CRD to be established")
    yield up
    up.kill()


@pytest.fixture(scope="module")
def operator(cluster: UpServer) -> Iterator[subprocess.Popen[str]]:
    log = cluster.workdir / "kopf.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kopf", "run", "--all-namespaces", str(OPERATOR)],
            env=cluster.env,
            cwd=cluster.workdir,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        eventually(lambda: "Initial authentication has finished" in log.read_text() or None, "kopf to log in")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=START_TIMEOUT)


def _crontab(cluster: UpServer) -> dict[str, Any] | None:
    result = cluster.kubectl("get", "ct", "my-cron", "-o", "json", ok=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def test_kopf_handles_a_custom_resources_lifecycle(
    cluster: UpServer, operator: subprocess.Popen[str]
) -> None:
    (cluster.workdir / "ct.yaml").write_text(CRONTAB.replace("NS", "default"))
    cluster.kubectl("apply", "-f", "ct.yaml")
    handled = eventually(
        lambda: (
            ((obj := _crontab(cluster)) is not None and "created" in (obj.get("status") or {}) and obj)
            or None
        ),
        "kopf's creation handler",
    )
    assert handled["status"] == {"created": {"message": "created"}, "schedule": "* * * * */5"}
    assert handled["metadata"]["finalizers"] == ["kopf.zalando.org/KopfFinalizerMarker"]

    cluster.kubectl("patch", "ct", "my-cron", "--type=merge", "-p", '{"spec":{"image":"v2"}}')
    log = cluster.workdir / "kopf.log"
    eventually(lambda: "change spec.image: my-cron-image -> v2" in log.read_text() or None, "the update")

    cluster.kubectl("delete", "ct", "my-cron", "--wait=false")
    eventually(lambda: _crontab(cluster) is None or None, "the custom resource to go")
    assert "cleaning up after my-cron" in log.read_text()

    operator.send_signal(signal.SIGTERM)
    assert operator.wait(timeout=START_TIMEOUT) == 0
    output = log.read_text()
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "[ERROR" in line] == []
