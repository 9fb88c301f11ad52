"""kubectl 1.27, 1.30 and 1.33 (the bundled binaries the `kubectl` dispatcher picks from) against
`kubetaint up`, each with a fresh cache: discovery, CRUD, `get --watch`, the three patch types,
eviction through `drain`, `taint` and `cordon`, and server-side apply with its conflicts."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..harness import KUBECTL, POLL_TIMEOUT, UpServer, eventually

MINORS = ("27", "30", "33")
NAMESPACES = itertools.count()
NODE = "node-2"


@dataclass
class Kubectl:
    binary: str
    env: dict[str, str]
    namespace: str
    workdir: Path

    def run(self, *args: str, ok: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.binary, "--namespace", self.namespace, *args],
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if ok:
            assert result.returncode == 0, result.stderr
        return result

    def out(self, *args: str, stdin: str | None = None) -> str:
        return self.run(*args, stdin=stdin).stdout


def _bundled(minor: str) -> str | None:
    if KUBECTL is None:
        return None
    candidate = Path(os.path.realpath(KUBECTL)).parent / f"kubectl.1.{minor}"
    return str(candidate) if candidate.exists() else None


@pytest.fixture(params=MINORS, ids=[f"kubectl 1.{m}" for m in MINORS])
def kubectl(request: pytest.FixtureRequest, cluster: UpServer, tmp_path: Path) -> Iterator[Kubectl]:
    binary = _bundled(request.param)
    if binary is None:
        pytest.skip(f"kubectl 1.{request.param} is not installed on this machine")
    env = {**cluster.env, "KUBECACHEDIR": str(tmp_path / "kubecache")}
    tool = Kubectl(binary, env, f"kubectl-1-{request.param}-{next(NAMESPACES)}", tmp_path)
    subprocess.run([binary, "create", "namespace", tool.namespace], env=env, check=True, capture_output=True)
    yield tool


def test_discovery(kubectl: Kubectl) -> None:
    resources = kubectl.out("api-resources", "-o", "name").split()
    assert {"pods", "nodes", "deployments.apps", "poddisruptionbudgets.policy"} <= set(resources)
    assert {"v1", "apps/v1", "policy/v1"} <= set(kubectl.out("api-versions").split())


def test_create_get_replace_delete(kubectl: Kubectl) -> None:
    kubectl.run("create", "configmap", "crud", "--from-literal=colour=blue")
    manifest = kubectl.out("get", "configmap", "crud", "-o", "yaml").replace("colour: blue", "colour: green")
    kubectl.run("replace", "-f", "-", stdin=manifest)
    assert kubectl.out("get", "configmap", "crud", "-o", "jsonpath={.data.colour}") == "green"
    assert kubectl.out("delete", "configmap", "crud").strip() == 'configmap "crud" deleted'
    missing = kubectl.run("get", "configmap", "crud", ok=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): configmaps "crud" not found'


def test_get_watch_sees_what_happens_after_its_list(kubectl: Kubectl) -> None:
    watcher = subprocess.Popen(
        [
            kubectl.binary,
            "-n",
            kubectl.namespace,
            "get",
            "configmaps",
            "--watch",
            "--output-watch-events",
            "--no-headers",
        ],
        env=kubectl.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in watcher.stdout or ()], daemon=True).start()
    events = []
    try:
        time.sleep(1)  # the list part: kubectl then watches from its resourceVersion
        kubectl.run("create", "configmap", "watched")
        kubectl.run("delete", "configmap", "watched")
        while ("DELETED", "watched") not in events:
            events.append(tuple(lines.get(timeout=POLL_TIMEOUT).split()[:2]))
    finally:
        watcher.kill()
        watcher.communicate(timeout=10)
    assert [e for e in events if e[1] == "watched"] == [("ADDED", "watched"), ("DELETED", "watched")]


@pytest.mark.parametrize(
    ("kind", "patch", "expected"),
    [
        pytest.param("strategic", '{"data":{"b":"2"}}', '{"a":"1","b":"2"}', id="strategic"),
        pytest.param("merge", '{"data":{"a":null}}', "", id="merge"),
        pytest.param("json", '[{"op":"replace","path":"/data/a","value":"9"}]', '{"a":"9"}', id="json"),
    ],
)
def test_patch_types(kubectl: Kubectl, kind: str, patch: str, expected: str) -> None:
    kubectl.run("create", "configmap", "patched", "--from-literal=a=1")
    assert kubectl.out("patch", "configmap", "patched", "--type", kind, "-p", patch).strip() == (
        "configmap/patched patched"
    )
    assert kubectl.out("get", "configmap", "patched", "-o", "jsonpath={.data}") == expected


def test_drain_evicts_the_selected_pod_and_uncordon_undoes_the_cordon(kubectl: Kubectl) -> None:
    kubectl.run(
        "run",
        "drained",
        "--image=registry.k8s.io/pause:3.10",
        "--labels=drain=me",
        "--overrides",
        json.dumps({"spec": {"nodeSelector": {"kubernetes.io/hostname": NODE}}}),
    )
    kubectl.run("wait", "--for=condition=Ready", "pod/drained", "--timeout=30s")
    drained = kubectl.run("drain", NODE, "--pod-selector=drain=me", "--force", "--timeout=30s")
    assert f"node/{NODE} cordoned" in drained.stdout
    assert f"evicting pod {kubectl.namespace}/drained" in drained.stderr + drained.stdout
    assert f"node/{NODE} drained" in drained.stdout
    assert kubectl.run("get", "pod", "drained", ok=False).returncode == 1
    assert kubectl.out("uncordon", NODE).strip() == f"node/{NODE} uncordoned"
    assert kubectl.out("get", "node", NODE, "-o", "jsonpath={.spec.unschedulable}") == ""


def test_taint_and_cordon(kubectl: Kubectl) -> None:
    key = f"kubectl-{kubectl.binary[-2:]}"
    assert kubectl.out("taint", "node", NODE, f"{key}=yes:NoSchedule").strip() == f"node/{NODE} tainted"
    taints = kubectl.out("get", "node", NODE, "-o", "jsonpath={.spec.taints[*].key}").split()
    assert key in taints
    assert kubectl.out("taint", "node", NODE, f"{key}-").strip() == f"node/{NODE} untainted"
    assert kubectl.out("cordon", NODE).strip() == f"node/{NODE} cordoned"
    assert kubectl.out("get", "node", NODE, "-o", "jsonpath={.spec.unschedulable}") == "true"
    assert kubectl.out("uncordon", NODE).strip() == f"node/{NODE} uncordoned"
    eventually(
        lambda: (
            "node.kubernetes.io/unschedulable"
            not in kubectl.out("get", "node", NODE, "-o", "jsonpath={.spec.taints[*].key}")
        ),
        "the node lifecycle controller to take its unschedulable taint away",
    )


def test_server_side_apply_and_its_conflicts(kubectl: Kubectl) -> None:
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {owner: %s}\n"
    applied = kubectl.out("apply", "--server-side", "-f", "-", stdin=manifest % "kubectl")
    assert applied.strip() == "configmap/applied serverside-applied"
    conflict = kubectl.run(
        "apply", "--server-side", "--field-manager=other", "-f", "-", stdin=manifest % "other", ok=False
    )
    assert conflict.returncode == 1
    assert 'conflict with "kubectl"' in conflict.stderr and ".data.owner" in conflict.stderr
    kubectl.run(
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
        stdin=manifest % "other",
    )
    assert kubectl.out("get", "configmap", "applied", "-o", "jsonpath={.data.owner}") == "other"
