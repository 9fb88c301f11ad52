"""A kubelet's first look at the pods already running on its node admits them at once
(`AdmittedPods.start_running`) when each is bound there, Running, not being deleted and runs until
stopped: it must end exactly as looking at each in creation order does (the same admitted pods,
members and tally, the same clock callbacks, the same writes), and any other mix of pods must
take that path itself."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet.builders import container, make_store, node_config, pod
from kubelet.test_start_replay import RecordingClock
from kubetaint.kubelet import HollowNodePool
from kubetaint.kubelet.running import AdmittedPods
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
NODES = ("n1", "n2")


def _running(
    name: str, node: str, *, phase: str = "Running", namespace: str = "default", **spec: Any
) -> JSON:
    cpu = ("100m", "250m", None)[len(name) % 3]
    obj = pod(name, node, namespace=namespace, containers=[container(cpu=cpu, memory="64Mi")], **spec)
    obj["status"] = {"phase": phase}
    return obj


def _state(pool: HollowNodePool, clock: RecordingClock, store: MemoryStore) -> list[Any]:
    state: list[Any] = [[label for _, label, _ in clock.scheduled]]
    for name, kubelet in pool.kubelets.items():
        view = kubelet._admitted.view
        assert view is not None
        state.append((name, dict(kubelet._admitted.uids), dict(view._members), dict(view.used())))
    state.append([obj for resource in ("pods", "events") for obj in store.list(resource).items])
    return state


def _run(pods: list[JSON], *, shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], int]:
    taken: list[bool] = []
    start_running = AdmittedPods.start_running

    def recording(self: AdmittedPods, batch: list[JSON]) -> bool:
        done = start_running(self, batch) if shortcut else False
        taken.append(done)
        return done

    monkeypatch.setattr(AdmittedPods, "start_running", recording)
    clock = RecordingClock()
    store = make_store(clock)
    for obj in pods:
        store.create("pods", obj)
    pool = HollowNodePool(store, clock, [node_config(n) for n in NODES])
    pool.start()
    clock.run_until(clock.now() + 30)
    return _state(pool, clock, store), sum(taken)


MIXES = [
    pytest.param([_running(n, "n1") for n in ("b", "a", "cc", "ddd")], 1, id="running pods on one node"),
    pytest.param(
        [_running("a", "n1"), _running("b", "n2"), _running("c", "n2", namespace="x"), _running("d", "n1")],
        2,
        id="running pods on every node, several namespaces",
    ),
    pytest.param(
        [_running("a", "n1"), _running("b", "n1", phase="Pending"), _running("c", "n2"), _running("d", "n2")],
        1,
        id="a pod to admit beside running ones: that node looks at each in turn",
    ),
    pytest.param(
        [_running("a", "n1"), _running("b", "n1", restartPolicy="Never")],
        0,
        id="a running pod whose containers exit: its exit is scheduled in turn",
    ),
    pytest.param(
        [_running("a", "n1"), _running("b", "n1", phase="Succeeded")],
        0,
        id="a finished pod beside a running one",
    ),
]


@pytest.mark.parametrize(("pods", "shortcuts"), MIXES)
def test_admitting_running_pods_at_once_changes_nothing(
    pods: list[JSON], shortcuts: int, monkeypatch: pytest.MonkeyPatch, default_mode: None
) -> None:
    with monkeypatch.context() as patch:
        expected, _ = _run(pods, shortcut=False, monkeypatch=patch)
    with monkeypatch.context() as patch:
        found, taken = _run(pods, shortcut=True, monkeypatch=patch)
    assert found == expected
    assert taken == shortcuts
