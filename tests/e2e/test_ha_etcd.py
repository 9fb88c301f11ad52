"""Two `kubetaint up --leader-elect` replicas on one private etcd (Debian's etcd-server, free
ports, stopped by PID): the replica holding the kube-scheduler and kube-controller-manager Leases
is killed with SIGKILL, the other takes both over, schedules and evicts, and no pod is evicted
twice (exactly one DELETED watch event per pod; every pod marked by TaintManagerEviction)."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from .harness import KUBECTL, UpServer, eventually


def _etcd_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "store" / "etcd_server.py"
    spec = importlib.util.spec_from_file_location("kubetaint_tests_etcd_server_ha", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ETCD = _etcd_module()
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(ETCD.ETCD_BINARY is None, reason=ETCD.SKIP_REASON),
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

#: Short leases so a failover takes seconds (kube-scheduler's flags).
FAST_ELECTION = (
    "--leader-elect",
    "--leader-elect-lease-duration=2",
    "--leader-elect-renew-deadline=1.5",
    "--leader-elect-retry-period=0.25",
)
LEASES = ("kube-scheduler", "kube-controller-manager")
POD = """apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  nodeSelector: {kubernetes.io/hostname: %(node)s}
  containers: [{name: web, image: nginx}]
"""


class Replica(UpServer):
    """A `kubetaint up` replica whose later output lines are kept to tell whether it leads."""

    def __init__(self, workdir: Path, name: str, store: str, *args: str) -> None:
        super().__init__(
            workdir, "--store", store, "--nodes", "2", *FAST_ELECTION, *args, data_dir=workdir / name
        )
        self.output: list[str] = []

    def leads(self) -> bool:
        """Both Leases acquired ("<lease>: started leading" printed for each)."""
        while not self._lines.empty():
            self.output.append(self._lines.get())
        seen = self.elections + self.output
        return all(f"{lease}: started leading" in seen for lease in LEASES)


@pytest.fixture
def etcd_store(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "etcd").mkdir()
    server = ETCD.EtcdServer(tmp_path / "etcd")
    try:
        yield "etcd://" + server.url.removeprefix("http://")
    finally:
        server.stop()


def _create_pod(server: UpServer, name: str, node: str) -> None:
    path = server.workdir / f"{name}.yaml"
    path.write_text(POD % {"name": name, "node": node})
    server.kubectl("apply", "-f", str(path))


def _node_of(server: UpServer, name: str) -> str:
    return server.kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName}", ok=False).stdout.strip()


def _deletions(server: UpServer, resource_version: str) -> Counter[str]:
    """DELETED watch events per pod name after `resource_version` (a 1 s watch)."""
    params = {"watch": "true", "resourceVersion": resource_version, "timeoutSeconds": "1"}
    deleted: Counter[str] = Counter()
    with server.stream("/api/v1/pods", params) as response:
        for line in response.iter_lines():
            if line.strip():
                event = json.loads(line)
                if event["type"] == "DELETED":
                    deleted[str(event["object"]["metadata"]["name"])] += 1
    return deleted


def _evictions(server: UpServer) -> Counter[str]:
    """TaintManagerEviction events per pod (their counts summed)."""
    events = server.get("/api/v1/namespaces/default/events").json()["items"]
    counted: Counter[str] = Counter()
    for event in events:
        if event.get("reason") == "TaintManagerEviction":
            counted[str(event["involvedObject"]["name"])] += int(event.get("count") or 1)
    return counted


def test_the_leader_replica_killed_the_other_takes_over_and_no_pod_is_evicted_twice(
    tmp_path: Path, etcd_store: str
) -> None:
    # The replica started first takes both Leases; the kubelets run on the other one only.
    first = Replica(tmp_path, "first", etcd_store, "--no-kubelets").start()
    second: Replica | None = None
    try:
        eventually(first.leads, "the first replica to lead")
        second = Replica(tmp_path, "second", etcd_store).start()
        for i in range(3):
            _create_pod(second, f"web-{i}", "node-1")
        for i in range(3):
            eventually(lambda i=i: _node_of(second, f"web-{i}") == "node-1", f"web-{i} scheduled")
        assert not second.leads()
        first.kill()
        taint_rv = second.get("/api/v1/pods").json()["metadata"]["resourceVersion"]
        second.kubectl("taint", "nodes", "node-1", "maintenance=true:NoExecute")
        _create_pod(second, "late", "node-2")
        eventually(second.leads, "the second replica to take both Leases")
        eventually(lambda: _node_of(second, "late") == "node-2", "the new leader binds a pod")
        eventually(
            lambda: "web-" not in second.kubectl("get", "pods", "-o", "name").stdout,
            "the new leader evicts the pods on node-1",
        )
        web = {f"web-{i}": 1 for i in range(3)}
        deletions = _deletions(second, taint_rv)
        assert {k: v for k, v in deletions.items() if k.startswith("web-")} == web
        # Every pod was marked for eviction by the new leader (TaintManagerEviction), none by the
        # killed one; the count per pod is what benchmarks/reliability.py reports.
        evictions = _evictions(second)
        assert set(evictions) == set(web), evictions
        transitions = second.kubectl(
            "get",
            "leases",
            "-n",
            "kube-system",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.spec.leaseTransitions}{'\\n'}{end}",
        ).stdout.split()
        assert sorted(transitions) == ["kube-controller-manager=1", "kube-scheduler=1"]
    finally:
        if second is not None:
            second.kill()
        first.kill()
