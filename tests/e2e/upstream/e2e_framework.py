"""The pieces of upstream's e2e framework the ported e2e tests use, with the official Python
client on a virtual-clock `kubetaint up`: a namespace per test, RunPodAndGetNodeName, the
e2enode taint helpers, an informer reporting deletions (createTestController) and timers that
run on the cluster's clock (a wait of N seconds advances the virtual clock by N seconds in
steps, looking for what the informer saw after each)."""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..harness import POLL_TIMEOUT, UpServer, eventually

#: one virtual-clock step of a timer: fine enough for the tests' 5-second granularity
STEP_SECONDS = 2.5
#: real time given to the cluster after each step to act on it (watches, kubelets)
SETTLE_SECONDS = 0.15
_NAMES = itertools.count()


class Framework:
    """framework.Framework: the client set and a fresh namespace per test."""

    def __init__(self, server: UpServer, api_client: Any, base_name: str) -> None:
        from kubernetes import client

        self.server = server
        self.api_client = api_client
        self.cs = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.namespace = f"{base_name}-{next(_NAMES)}"
        self.cs.create_namespace({"metadata": {"name": self.namespace}})

    # the clock ---------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        with self.server.client() as http:
            response = http.post("/kubetaint/v1/clock/advance", json={"seconds": seconds})
        assert response.status_code == 200, response.text

    def wait(self, seconds: float, until: Callable[[], bool]) -> bool:
        """A timer of `seconds` on the cluster's clock racing `until`: True when `until` held
        before the timer fired."""
        elapsed = 0.0
        while True:
            time.sleep(SETTLE_SECONDS)
            if until():
                return True
            if elapsed >= seconds:
                return False
            step = min(STEP_SECONDS, seconds - elapsed)
            self.advance(step)
            elapsed += step

    # pods and nodes ---------------------------------------------------------------------

    def run_pod_and_get_node_name(self, pod: dict[str, Any]) -> str:
        """testutils.RunPodAndGetNodeName: create the pod, wait until it runs, its node."""
        name = pod["metadata"]["name"]
        self.cs.create_namespaced_pod(self.namespace, pod)
        self.wait_for_pod_running(name)
        return str(self.cs.read_namespaced_pod(name, self.namespace).spec.node_name)

    def wait_for_pod_running(self, name: str) -> None:
        def running() -> bool:
            return self.cs.read_namespaced_pod(name, self.namespace).status.phase == "Running"

        assert self.wait(120, running), f"pod {name} did not run"

    def wait_for_total_healthy(self) -> None:
        """e2enode.WaitForTotalHealthy: every node Ready."""

        def ready() -> bool:
            nodes = self.cs.list_node().items
            return all(
                any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
                for n in nodes
            )

        eventually(ready, "every node to be Ready")

    def add_or_update_taint_on_node(self, node_name: str, taint: dict[str, Any]) -> None:
        """e2enode.AddOrUpdateTaintOnNode (controller.AddOrUpdateTaintOnNode)."""

        def update(taints: list[dict[str, Any]]) -> list[dict[str, Any]]:
            kept = [t for t in taints if (t["key"], t["effect"]) != (taint["key"], taint["effect"])]
            return [*kept, taint]

        self._update_taints(node_name, update)

    def remove_taint_off_node(self, node_name: str, taint: dict[str, Any]) -> None:
        """e2enode.RemoveTaintOffNode, then verifies the taint is gone."""
        self._update_taints(
            node_name,
            lambda taints: [t for t in taints if (t["key"], t["effect"]) != (taint["key"], taint["effect"])],
        )
        assert not self.node_has_taint(node_name, taint), f"failed to remove the taint from {node_name}"

    def _update_taints(
        self, node_name: str, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    ) -> None:
        from kubernetes.client.rest import ApiException

        for _ in range(5):  # retry.RetryOnConflict
            node = self.api_client.sanitize_for_serialization(self.cs.read_node(node_name))
            node["spec"]["taints"] = change(node["spec"].get("taints") or [])
            try:
                self.cs.replace_node(node_name, node)
                return
            except ApiException as err:
                if err.status != 409:
                    raise
        raise AssertionError(f"could not update the taints of {node_name}")

    def node_has_taint(self, node_name: str, taint: dict[str, Any]) -> bool:
        """e2enode.NodeHasTaint: a taint with the same key, value and effect."""
        taints = self.cs.read_node(node_name).spec.taints or []
        return any(
            (t.key, t.value, t.effect) == (taint["key"], taint.get("value"), taint["effect"]) for t in taints
        )

    def expect_node_has_taint(self, node_name: str, taint: dict[str, Any]) -> None:
        assert self.node_has_taint(node_name, taint), f"failed to find taint {taint} on node {node_name}"

    # the informer -----------------------------------------------------------------------

    @contextmanager
    def events(self) -> Iterator[queue.Queue[Any]]:
        """An informer on the namespace's events: every event added from now on, in a queue."""
        with self._informer(self.cs.list_namespaced_event, "", "ADDED", lambda event: event) as added:
            yield added

    @contextmanager
    def deletions(self, pod_label: str) -> Iterator[queue.Queue[str]]:
        """createTestController: an informer on the pods labelled group=<pod_label> that puts the
        name of every pod it sees deleted in the queue it yields."""
        selector = f"group={pod_label}"
        with self._informer(
            self.cs.list_namespaced_pod, selector, "DELETED", lambda pod: pod.metadata.name
        ) as names:
            yield names

    @contextmanager
    def _informer(
        self, list_call: Callable[..., Any], selector: str, kind: str, keep: Callable[[Any], Any]
    ) -> Iterator[queue.Queue[Any]]:
        """A list then watches resumed from the last resourceVersion seen, in a thread: `keep` of
        the object of every `kind` event (ADDED, DELETED) in the queue it yields."""
        from kubernetes import watch

        observed: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()
        version = list_call(self.namespace, label_selector=selector).metadata.resource_version

        def run() -> None:
            nonlocal version
            while not stop.is_set():
                stream = watch.Watch()
                for event in stream.stream(
                    list_call,
                    self.namespace,
                    label_selector=selector,
                    resource_version=version,
                    timeout_seconds=1,
                ):
                    version = event["object"].metadata.resource_version
                    if event["type"] == kind:
                        observed.put(keep(event["object"]))
                    if stop.is_set():
                        stream.stop()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            yield observed
        finally:
            stop.set()
            thread.join(POLL_TIMEOUT)


def get_test_taint(server: UpServer) -> dict[str, Any]:
    """getTestTaint: the NoExecute taint the tests put on a node, TimeAdded now (on the
    cluster's clock)."""
    now = server.get("/kubetaint/v1/clock").json()["now"]
    return {
        "key": "kubernetes.io/e2e-evict-taint-key",
        "value": "evictTaintVal",
        "effect": "NoExecute",
        "timeAdded": now.split(".")[0].rstrip("Z") + "Z",
    }
