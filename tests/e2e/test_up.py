"""`kubetaint up` end to end: the real kubectl, the `kubetaint clock` CLI and the official Python
client against a server process; taints at work, a virtual-clock eviction, restart and shutdown."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]

PLAIN_POD = """apiVersion: v1
kind: Pod
metadata: {name: %(name)s}
spec:
  containers: [{name: web, image: nginx}]
"""
PATIENT_POD = """apiVersion: v1
kind: Pod
metadata: {name: patient}
spec:
  nodeSelector: {kubernetes.io/hostname: node-1}
  tolerations:
  - {key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 3600}
  containers: [{name: web, image: nginx}]
"""


def _write(server: UpServer, name: str, text: str) -> str:
    path = server.workdir / name
    path.write_text(text)
    return str(path)


def _node_of(server: UpServer, pod: str) -> str:
    return server.kubectl("get", "pod", pod, "-o", "jsonpath={.spec.nodeName}").stdout.strip()


def _rows(output: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in output.splitlines()[1:]}


def test_readyz_and_livez_answer_ok(real_server: UpServer) -> None:
    for path in ("/readyz", "/livez"):
        response = real_server.get(path)
        assert (response.status_code, response.text) == (200, "ok")


def test_the_banner_names_the_kubeconfig_and_the_next_commands(real_server: UpServer) -> None:
    text = "\n".join(real_server.banner)
    assert f"export KUBECONFIG={real_server.kubeconfig}" in text
    assert "kubectl taint nodes node-1 dedicated=gpu:NoSchedule" in text
    assert real_server.kubeconfig.exists()


def test_get_nodes_shows_the_control_plane_and_the_workers_with_their_roles(real_server: UpServer) -> None:
    rows = _rows(real_server.kubectl("get", "nodes").stdout)
    assert sorted(rows) == ["control-plane", "node-1", "node-2", "node-3"]
    assert rows["control-plane"][1:3] == ["Ready", "control-plane"]
    assert all(rows[f"node-{i}"][1:3] == ["Ready", "<none>"] for i in (1, 2, 3))
    # every node shows its kubelet's version, the control plane's too (its kubelet adopts the Node)
    versions = {name: row[4] if len(row) > 4 else "" for name, row in rows.items()}
    assert len(set(versions.values())) == 1 and versions["node-1"].startswith("v1."), versions
    taints = real_server.kubectl("get", "node", "control-plane", "-o", "jsonpath={.spec.taints}").stdout
    assert '"key":"node-role.kubernetes.io/control-plane"' in taints and '"effect":"NoSchedule"' in taints


def test_a_pod_without_the_toleration_lands_on_an_untainted_worker(real_server: UpServer) -> None:
    tainted = real_server.kubectl("taint", "nodes", "node-1", "dedicated=gpu:NoSchedule").stdout
    assert tainted.strip() == "node/node-1 tainted"
    created = real_server.kubectl(
        "create", "-f", _write(real_server, "web.yaml", PLAIN_POD % {"name": "web"})
    )
    assert created.stdout.strip() == "pod/web created"
    node = eventually(lambda: _node_of(real_server, "web"), "pod web to be scheduled")
    assert node in ("node-2", "node-3")
    status = eventually(
        lambda: (
            real_server.kubectl("get", "pod", "web", "-o", "jsonpath={.status.phase}").stdout == "Running"
        ),
        "pod web to run",
    )
    assert status


def test_a_toleration_less_pod_stays_pending_when_every_worker_is_tainted(real_server: UpServer) -> None:
    for node in ("node-1", "node-2", "node-3"):
        real_server.kubectl("taint", "nodes", node, "lockdown=yes:NoSchedule")
    real_server.kubectl("create", "-f", _write(real_server, "stuck.yaml", PLAIN_POD % {"name": "stuck"}))
    message = eventually(
        lambda: (
            real_server.kubectl(
                "get",
                "pod",
                "stuck",
                "-o",
                "jsonpath={.status.conditions[?(@.type=='PodScheduled')].message}",
            ).stdout
        ),
        "a FailedScheduling condition",
    )
    assert message.startswith("0/4 nodes are available:")
    assert "untolerated taint" in message
    for node in ("node-1", "node-2", "node-3"):
        real_server.kubectl("taint", "nodes", node, "lockdown-")
    assert eventually(lambda: _node_of(real_server, "stuck"), "pod stuck to be scheduled once untainted")


def test_the_python_client_lists_the_nodes(real_server: UpServer) -> None:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(real_server.kubeconfig))
    try:
        names = sorted(n.metadata.name for n in client.CoreV1Api(api_client).list_node().items)
    finally:
        api_client.close()
    assert names == ["control-plane", "node-1", "node-2", "node-3"]


def test_an_invalid_taint_is_refused_with_kube_apiservers_message(real_server: UpServer) -> None:
    body = _write(
        real_server,
        "bad-node.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nspec:\n  taints: [{key: k, effect: Sometimes}]\n",
    )
    result = real_server.kubectl("create", "-f", body, ok=False)
    assert result.returncode == 1
    assert (
        'The Node "bad" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes"'
        in result.stderr
    )


def test_advancing_the_virtual_clock_evicts_a_pod_when_its_toleration_seconds_run_out(
    virtual_server: UpServer,
) -> None:
    virtual_server.kubectl("create", "-f", _write(virtual_server, "patient.yaml", PATIENT_POD))
    assert eventually(lambda: _node_of(virtual_server, "patient") == "node-1", "pod patient on node-1")
    virtual_server.kubectl("taint", "nodes", "node-1", "maintenance=now:NoExecute")
    before = virtual_server.kubetaint("clock", "advance", "59m")
    assert before.returncode == 0, before.stderr
    assert "59m0s since the server started" in before.stdout
    assert "patient" in virtual_server.kubectl("get", "pods").stdout
    after = virtual_server.kubetaint("clock", "advance", "1m1s")
    assert after.returncode == 0, after.stderr
    assert virtual_server.kubectl("get", "pods", "-o", "name").stdout.strip() == ""
    events = virtual_server.kubectl("get", "events", "--field-selector", "involvedObject.name=patient").stdout
    assert "TaintManagerEviction" in events
    assert "Marking for deletion Pod default/patient" in events


def test_clock_now_reads_the_virtual_clock(virtual_server: UpServer) -> None:
    result = virtual_server.kubetaint("clock", "now")
    assert result.returncode == 0, result.stderr
    assert "(virtual clock, " in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(
            ("advance", "soon"),
            2,
            'error: time: invalid duration "soon"',
            id="a bad duration is a usage error",
        ),
        pytest.param(
            ("advance", "1h", "--kubeconfig", "/nonexistent/kubeconfig"),
            1,
            "error: cannot read kubeconfig /nonexistent/kubeconfig",
            id="a missing kubeconfig is named",
        ),
    ],
)
def test_clock_errors_are_one_line(
    virtual_server: UpServer, args: tuple[str, ...], code: int, message: str
) -> None:
    result = virtual_server.kubetaint("clock", *args)
    assert result.returncode == code
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_real_clock_cannot_be_advanced(real_server: UpServer) -> None:
    result = real_server.kubetaint("clock", "advance", "1h")
    assert result.returncode == 1
    assert "kubetaint up --clock virtual" in result.stderr


def test_a_restart_on_the_same_data_dir_resumes_the_cluster(workdir: Path) -> None:
    first = UpServer(workdir, "--nodes", "2").start()
    try:
        first.kubectl("taint", "nodes", "node-2", "dedicated=gpu:NoSchedule")
        first.kubectl("create", "-f", _write(first, "web.yaml", PLAIN_POD % {"name": "web"}))
        uid = first.kubectl("get", "node", "node-1", "-o", "jsonpath={.metadata.uid}").stdout
        assert eventually(lambda: _node_of(first, "web"), "pod web to be scheduled") == "node-1"
    finally:
        code, out, err = first.stop(signal.SIGTERM)
    assert (code, err) == (0, "")
    assert out.strip().endswith("kubetaint stopped.")
    second = UpServer(workdir, "--nodes", "2").start()
    try:
        assert "resumed: 3 nodes already stored" in second.banner[0]
        assert second.kubectl("get", "node", "node-1", "-o", "jsonpath={.metadata.uid}").stdout == uid
        taints = second.kubectl("get", "node", "node-2", "-o", "jsonpath={.spec.taints[*].key}").stdout
        assert taints == "dedicated"
        assert _node_of(second, "web") == "node-1"
    finally:
        code, _, _ = second.stop(signal.SIGINT)
    assert code == 0


def test_a_restarted_virtual_clock_resumes_past_what_the_cluster_stamped(workdir: Path) -> None:
    first = UpServer(workdir, "--nodes", "1", "--clock", "virtual").start()
    try:
        first.kubetaint("clock", "advance", "1h")
        first.kubectl("create", "-f", _write(first, "web.yaml", PLAIN_POD % {"name": "web"}))
        assert eventually(lambda: _node_of(first, "web"), "pod web to be scheduled") == "node-1"
    finally:
        first.stop(signal.SIGTERM)
    second = UpServer(workdir, "--nodes", "1", "--clock", "virtual").start()
    try:
        ages = [row[3] for row in _rows(second.kubectl("get", "events").stdout).values()]
        assert ages and "<invalid>" not in ages
        assert _rows(second.kubectl("get", "pods").stdout)["web"][4] != "<invalid>"
    finally:
        code, _, _ = second.stop(signal.SIGINT)
    assert code == 0


def test_a_second_server_on_a_data_dir_in_use_fails_with_one_line(workdir: Path) -> None:
    first = UpServer(workdir, "--nodes", "1").start()
    try:
        second = UpServer(workdir, "--nodes", "1")
        result = second.kubetaint("up", "--data-dir", str(first.data_dir), "--port", "0")
    finally:
        first.stop()
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"error: data directory {first.data_dir} is in use by another kubetaint process"
    )
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_memory_store_serves_a_fresh_cluster(workdir: Path) -> None:
    server = UpServer(workdir, "--store", "memory", "--nodes", "1").start()
    try:
        assert sorted(_rows(server.kubectl("get", "nodes").stdout)) == ["control-plane", "node-1"]
    finally:
        code, _, _ = server.stop()
    assert code == 0
