"""`kubetaint up --config FILE`: the scheduler runs the KubeSchedulerConfiguration's profile (an
addedAffinity keeps pods off a node), says on stderr what it does not apply, and records a
Warning event NotModelled on a pod whose volumes it cannot judge, as kubectl shows it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import UpServer, eventually

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 4
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchFields: [{key: metadata.name, operator: NotIn, values: [node-1]}]
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  containers: [{name: db, image: postgres}]
  volumes: [{name: data, awsElasticBlockStore: {volumeID: vol-1}}]
"""


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    workdir = tmp_path_factory.mktemp("up-config")
    config = workdir / "scheduler.yaml"
    config.write_text(CONFIG)
    server = UpServer(workdir, "--nodes", "2", "--config", str(config)).start()
    yield server
    server.kill()


def test_the_profile_applies_and_the_pod_gets_a_not_modelled_event(configured: UpServer) -> None:
    path = Path(configured.workdir / "db.yaml")
    path.write_text(POD)
    configured.kubectl("apply", "-f", str(path))
    node = eventually(
        lambda: (
            configured.kubectl("get", "pod", "db", "-o", "jsonpath={.spec.nodeName}").stdout.strip() or None
        ),
        "the pod bound",
    )
    assert node == "node-2"
    events = eventually(
        lambda: (
            out
            if "NotModelled"
            in (out := configured.kubectl("get", "events", "--field-selector", "reason=NotModelled").stdout)
            else None
        ),
        "the NotModelled event",
    )
    assert "spec.volumes[0].awsElasticBlockStore: not modelled" in events


def test_the_unapplied_setting_is_said_on_stderr(configured: UpServer) -> None:
    _code, _out, err = configured.stop()
    assert "warning: parallelism: not modelled: kubetaint's scheduler does not apply this setting" in err
