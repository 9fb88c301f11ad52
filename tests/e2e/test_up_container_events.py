"""`kubetaint up` end to end: kubectl sees the hollow kubelet's container events of a pod it
started and of the pod's deletion, with the real kubelet's reasons, messages and field paths."""

from __future__ import annotations

import time

from .harness import UpServer

TEMPLATE = (
    "{{range .items}}{{.involvedObject.fieldPath}}|{{.reason}}|{{.message}}|{{.source.component}}\n{{end}}"
)


def _kubelet_events(server: UpServer, pod: str) -> list[str]:
    listed = server.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={pod}", "-o", f"go-template={TEMPLATE}"
    ).stdout
    return [line for line in listed.splitlines() if line.endswith("|kubelet")]


def _wait_for(server: UpServer, pod: str, count: int) -> list[str]:
    deadline = time.monotonic() + 30
    while len(events := _kubelet_events(server, pod)) < count:
        assert time.monotonic() < deadline, events
        time.sleep(0.5)
    return events


def test_a_started_then_deleted_pod_has_the_kubelets_container_events(real_server: UpServer) -> None:
    real_server.kubectl("run", "hollow", "--image=nginx:1.25")
    assert sorted(_wait_for(real_server, "hollow", 4)) == sorted(
        [
            'spec.containers{hollow}|Pulling|Pulling image "nginx:1.25"|kubelet',
            'spec.containers{hollow}|Pulled|Successfully pulled image "nginx:1.25" in 0s (0s including '
            "waiting). Image size: 0 bytes.|kubelet",
            "spec.containers{hollow}|Created|Container created|kubelet",
            "spec.containers{hollow}|Started|Container started|kubelet",
        ]
    )
    real_server.kubectl("delete", "pod", "hollow", "--wait=false")
    assert "spec.containers{hollow}|Killing|Stopping container hollow|kubelet" in _wait_for(
        real_server, "hollow", 5
    )
