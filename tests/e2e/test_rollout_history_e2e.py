"""ControllerRevisions on `kubetaint up` with the real kubectl: `kubectl get controllerrevisions`
prints them as kube-apiserver does, `kubectl rollout history` lists a StatefulSet's and a
DaemonSet's revisions and shows one, and `kubectl rollout undo` brings an older template back
(the StatefulSet rolling its pods to it, the old revision renumbered as the newest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

STATEFUL_SET = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 2
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.25"}]
"""

DAEMON_SET = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:1"}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-rollout"), "--nodes", "2").start()
    yield up
    up.kill()


def _apply(server: UpServer, name: str, text: str) -> str:
    path = server.workdir / name
    path.write_text(text)
    return server.kubectl("apply", "-f", str(path)).stdout.strip()


def _jsonpath(server: UpServer, *args: str) -> str:
    return server.kubectl("get", *args).stdout.strip()


def _revisions(server: UpServer, selector: str) -> list[tuple[str, str, str]]:
    """(name, controller, revision) of `kubectl get controllerrevisions`, by revision."""
    out = server.kubectl("get", "controllerrevisions", "-l", selector, "--no-headers").stdout
    rows = [tuple(line.split()[:3]) for line in out.splitlines() if line.strip()]
    return sorted(((r[0], r[1], r[2]) for r in rows), key=lambda r: int(r[2]))


def _pod_images(server: UpServer, selector: str) -> list[str]:
    out = _jsonpath(
        server,
        "pods",
        "-l",
        selector,
        "-o",
        "jsonpath={range .items[*]}{.spec.containers[0].image}{' '}{end}",
    )
    return sorted(out.split())


def test_a_stateful_sets_revisions_are_listed_rolled_and_undone(server: UpServer) -> None:
    assert _apply(server, "sts.yaml", STATEFUL_SET) == "statefulset.apps/web created"
    eventually(lambda: _pod_images(server, "app=web") == ["nginx:1.25"] * 2 or None, "two web pods")
    header = server.kubectl("get", "controllerrevisions", "-l", "app=web").stdout.splitlines()[0]
    assert header.split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    ((first, controller, number),) = _revisions(server, "app=web")
    assert (first.startswith("web-"), controller, number) == (True, "statefulset.apps/web", "1")
    status = _jsonpath(
        server, "sts", "web", "-o", "jsonpath={.status.currentRevision} {.status.updateRevision}"
    )
    assert status == f"{first} {first}"
    labels = _jsonpath(
        server, "pods", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.labels.controller-revision-hash}"
    )
    assert labels.split() == [first, first]

    server.kubectl("set", "image", "statefulset/web", "web=nginx:1.27")
    eventually(lambda: _pod_images(server, "app=web") == ["nginx:1.27"] * 2 or None, "web rolled to 1.27")
    (_, _, one), (second, _, two) = _revisions(server, "app=web")
    assert (one, two) == ("1", "2")
    history = server.kubectl("rollout", "history", "statefulset/web").stdout
    assert history.splitlines()[:4] == [
        "statefulset.apps/web ",
        "REVISION  CHANGE-CAUSE",
        "1         <none>",
        "2         <none>",
    ]
    shown = server.kubectl("rollout", "history", "statefulset/web", "--revision=1").stdout
    assert "nginx:1.25" in shown and "revision #1" in shown

    undone = server.kubectl("rollout", "undo", "statefulset/web", "--to-revision=1").stdout.strip()
    assert undone == "statefulset.apps/web rolled back"
    eventually(
        lambda: _pod_images(server, "app=web") == ["nginx:1.25"] * 2 or None, "web rolled back to 1.25"
    )
    # the first revision is the newest again (upstream renumbers it): no third revision
    assert _revisions(server, "app=web") == [
        (second, "statefulset.apps/web", "2"),
        (first, "statefulset.apps/web", "3"),
    ]
    update = _jsonpath(server, "sts", "web", "-o", "jsonpath={.status.updateRevision}")
    assert update == first


def test_a_daemon_sets_revisions_are_listed_and_undone(server: UpServer) -> None:
    assert _apply(server, "ds.yaml", DAEMON_SET) == "daemonset.apps/agent created"
    eventually(lambda: _pod_images(server, "app=agent") == ["agent:1"] * 2 or None, "two agent pods")
    ((first, controller, number),) = _revisions(server, "app=agent")
    assert (controller, number) == ("daemonset.apps/agent", "1")
    hashes = _jsonpath(
        server,
        "pods",
        "-l",
        "app=agent",
        "-o",
        "jsonpath={.items[*].metadata.labels.controller-revision-hash}",
    )
    assert [f"agent-{h}" for h in hashes.split()] == [first, first]

    server.kubectl("set", "image", "daemonset/agent", "agent=agent:2")

    def two_revisions() -> list[tuple[str, str, str]] | None:
        listed = _revisions(server, "app=agent")
        return listed if len(listed) == 2 else None

    revisions = eventually(two_revisions, "a second revision")
    assert [r[2] for r in revisions] == ["1", "2"]
    history = server.kubectl("rollout", "history", "daemonset/agent").stdout
    assert history.splitlines()[:4] == [
        "daemonset.apps/agent ",
        "REVISION  CHANGE-CAUSE",
        "1         <none>",
        "2         <none>",
    ]

    undone = server.kubectl("rollout", "undo", "daemonset/agent").stdout.strip()
    assert undone == "daemonset.apps/agent rolled back"
    image = _jsonpath(server, "ds", "agent", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image == "agent:1"
    eventually(
        lambda: [r[0] for r in _revisions(server, "app=agent")] == [revisions[1][0], first] or None,
        "the first revision renumbered as the newest",
    )
