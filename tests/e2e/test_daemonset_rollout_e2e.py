"""DaemonSet rolling updates on `kubetaint up` with the real kubectl: `kubectl rollout status`
waits for the update as on a real cluster, and `kubectl set image`, `kubectl rollout undo` and
`kubectl rollout restart` replace every daemon pod (update.go's rollingUpdate)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

DAEMON_SET = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:1"}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-ds-rollout"), "--nodes", "3").start()
    yield up
    up.kill()


def _images(server: UpServer) -> list[str]:
    out = server.kubectl(
        "get",
        "pods",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image}{' '}{end}",
    ).stdout
    return sorted(out.split())


def _rolled_out(server: UpServer) -> str:
    return server.kubectl("rollout", "status", "ds/agent", "--timeout=90s").stdout.strip()


def test_set_image_undo_and_restart_roll_every_daemon_pod(server: UpServer) -> None:
    path = server.workdir / "ds.yaml"
    path.write_text(DAEMON_SET)
    assert server.kubectl("apply", "-f", str(path)).stdout.strip() == "daemonset.apps/agent created"
    strategy = server.kubectl("get", "ds", "agent", "-o", "jsonpath={.spec.updateStrategy}").stdout
    assert '"maxSurge":0' in strategy and '"type":"RollingUpdate"' in strategy
    assert _rolled_out(server).endswith('daemon set "agent" successfully rolled out')

    server.kubectl("set", "image", "ds/agent", "agent=agent:2")
    assert _rolled_out(server).endswith('daemon set "agent" successfully rolled out')
    eventually(lambda: _images(server) == ["agent:2"] * 3 or None, "three agent:2 pods")

    assert server.kubectl("rollout", "undo", "ds/agent").stdout.strip() == "daemonset.apps/agent rolled back"
    assert _rolled_out(server).endswith('daemon set "agent" successfully rolled out')
    eventually(lambda: _images(server) == ["agent:1"] * 3 or None, "three agent:1 pods again")

    assert server.kubectl("rollout", "restart", "ds/agent").stdout.strip() == "daemonset.apps/agent restarted"
    assert _rolled_out(server).endswith('daemon set "agent" successfully rolled out')

    def restarted() -> bool | None:
        out = server.kubectl(
            "get",
            "pods",
            "-l",
            "app=agent",
            "-o",
            "jsonpath={range .items[*]}{.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}{'|'}{end}",
        ).stdout
        stamps = [s for s in out.split("|") if s]
        return True if len(stamps) == 3 and len(out.split("|")) == 4 else None

    eventually(restarted, "three restarted pods")
    status = server.kubectl(
        "get",
        "ds",
        "agent",
        "-o",
        "jsonpath={.status.updatedNumberScheduled} {.status.numberAvailable} {.status.desiredNumberScheduled}",
    ).stdout
    assert status.split() == ["3", "3", "3"]


def test_the_template_generation_annotation_and_pod_label_follow_template_changes(server: UpServer) -> None:
    path = server.workdir / "gen.yaml"
    path.write_text(DAEMON_SET.replace("name: agent}", "name: gen}").replace("app: agent", "app: gen"))
    server.kubectl("apply", "-f", str(path))
    annotation = "jsonpath={.metadata.annotations.deprecated\\.daemonset\\.template\\.generation}"

    def pod_generations() -> list[str]:
        out = server.kubectl(
            "get",
            "pods",
            "-l",
            "app=gen",
            "-o",
            "jsonpath={.items[*].metadata.labels.pod-template-generation}",
        ).stdout
        return sorted(out.split())

    assert server.kubectl("get", "ds", "gen", "-o", annotation).stdout == "1"
    eventually(lambda: pod_generations() == ["1"] * 3 or None, "three pods at template generation 1")
    server.kubectl("patch", "ds", "gen", "--type", "merge", "-p", '{"spec":{"minReadySeconds":1}}')
    assert server.kubectl("get", "ds", "gen", "-o", annotation).stdout == "1"
    server.kubectl("set", "image", "ds/gen", "agent=agent:2")
    assert server.kubectl("get", "ds", "gen", "-o", annotation).stdout == "2"
    eventually(lambda: pod_generations() == ["2"] * 3 or None, "three pods at template generation 2")
    refused = server.kubectl(
        "annotate", "ds", "gen", "deprecated.daemonset.template.generation=abc", "--overwrite", ok=False
    )
    assert refused.returncode != 0
    assert 'strconv.ParseInt: parsing "abc": invalid syntax' in refused.stderr
