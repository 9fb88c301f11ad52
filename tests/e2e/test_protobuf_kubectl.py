"""kubectl's typed clients send protobuf bodies (kubectl-wire.md G4): the generator
subcommands `create namespace|priorityclass|pdb|deployment` and the DeleteOptions of
`drain --disable-eviction` work against `kubetaint up` with kubectl's normal messages (issue 8)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-protobuf"), "--nodes", "2").start()
    yield up
    up.kill()


def _get(server: UpServer, *args: str) -> Any:
    return json.loads(server.kubectl("get", *args, "-o", "json").stdout)


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        pytest.param(("namespace", "foo"), "namespace/foo created", id="create namespace"),
        pytest.param(
            ("priorityclass", "high", "--value=1000", "--description=important"),
            "priorityclass.scheduling.k8s.io/high created",
            id="create priorityclass",
        ),
        pytest.param(
            ("priorityclass", "zero", "--value=0"),
            "priorityclass.scheduling.k8s.io/zero created",
            id="create priorityclass with value 0",
        ),
        pytest.param(
            ("pdb", "web", "--selector=app=web", "--min-available=1"),
            "poddisruptionbudget.policy/web created",
            id="create pdb",
        ),
    ],
)
def test_generator_subcommands_create(server: UpServer, args: tuple[str, ...], printed: str) -> None:
    assert server.kubectl("create", *args).stdout.strip() == printed


def test_created_objects_carry_what_was_asked(server: UpServer) -> None:
    server.kubectl("create", "namespace", "team-a")
    assert _get(server, "namespace", "team-a")["status"] == {"phase": "Active"}
    server.kubectl("create", "priorityclass", "mid", "--value=500", "--preemption-policy=Never")
    mid = _get(server, "priorityclass", "mid")
    assert (mid["value"], mid["preemptionPolicy"]) == (500, "Never")
    server.kubectl("create", "pdb", "api", "--selector=app=api", "--max-unavailable=25%")
    pdb = _get(server, "pdb", "api")
    assert pdb["spec"] == {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "api"}}}


def test_server_dry_run_creates_nothing(server: UpServer) -> None:
    out = server.kubectl("create", "namespace", "ghost", "--dry-run=server").stdout.strip()
    assert out == "namespace/ghost created (server dry run)"
    assert server.kubectl("get", "namespace", "ghost", ok=False).returncode == 1


def test_a_duplicate_is_already_exists(server: UpServer) -> None:
    server.kubectl("create", "namespace", "twice")
    again = server.kubectl("create", "namespace", "twice", ok=False)
    assert again.returncode == 1
    assert again.stderr.strip() == 'Error from server (AlreadyExists): namespaces "twice" already exists'


def _running_on(server: UpServer, selector: str) -> list[str] | None:
    pods = _get(server, "pods", "-l", selector)["items"]
    nodes = [p["spec"].get("nodeName") for p in pods if p["status"].get("phase") == "Running"]
    return nodes if pods and all(nodes) and len(nodes) == len(pods) else None


def test_create_deployment_is_scheduled_then_drain_deletes_with_delete_options(server: UpServer) -> None:
    printed = server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2").stdout.strip()
    assert printed == "deployment.apps/web created"
    nodes = eventually(lambda: _running_on(server, "app=web"), "the deployment's pods running")
    assert len(nodes) == 2
    target = nodes[0]
    drained = server.kubectl(
        "drain", target, "--disable-eviction", "--ignore-daemonsets", "--grace-period=0", "--timeout=60s"
    )
    lines = drained.stdout.splitlines()
    assert lines[0] == f"node/{target} cordoned"
    assert lines[-1] == f"node/{target} drained"
    assert any(line.startswith("pod/web-") and line.endswith(" deleted") for line in lines)
    again = eventually(lambda: _running_on(server, "app=web"), "the replacement pods running")
    assert target not in again
