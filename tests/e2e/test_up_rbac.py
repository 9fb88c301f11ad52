"""RBAC against the real `kubetaint up` process (HTTPS, Node,RBAC by default) with the real
kubectl: a token user from --token-auth-file is refused with upstream's 403 until an admin binds
it, `kubectl auth can-i` (also `--list` and `--as`) and `kubectl auth whoami` answer, the
bootstrap roles are there, and the hollow kubelets run pods as system:node:<name> without a
refused write (issue 22)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from .harness import KUBECTL, UpServer, eventually

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]
TOKENS = "admin-token,admin,uid-admin,system:masters\nbob-token,bob,uid-bob\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    workdir = tmp_path_factory.mktemp("up-rbac")
    tokens = workdir / "tokens.csv"
    tokens.write_text(TOKENS)
    up = UpServer(workdir, "--nodes", "1", "--token-auth-file", str(tokens)).start()
    yield up
    up.kill()


def _bob(server: UpServer, *args: str) -> Any:
    """kubectl as bob: the server's kubeconfig with bob's token as its only credential."""
    document = yaml.safe_load(server.kubeconfig.read_text())
    document["users"][0]["user"] = {"token": "bob-token"}
    path = server.workdir / "kubeconfig-bob"
    path.write_text(yaml.safe_dump(document))
    return server.kubectl("--kubeconfig", str(path), *args, ok=False)


def test_bob_is_refused_until_bound(server: UpServer) -> None:
    denied = _bob(server, "get", "pods", "-n", "default")
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" '
        'in API group "" in the namespace "default"'
    )
    assert _bob(server, "auth", "can-i", "list", "pods").stdout.strip() == "no"
    server.kubectl(
        "create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods", "-n", "default"
    )
    server.kubectl("create", "rolebinding", "bob-reads", "--role=pod-reader", "--user=bob", "-n", "default")
    allowed = _bob(server, "get", "pods", "-n", "default")
    assert allowed.returncode == 0, allowed.stderr
    assert _bob(server, "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    assert server.kubectl("auth", "can-i", "list", "pods", "--as=bob").stdout.strip() == "yes"
    assert server.kubectl("auth", "can-i", "delete", "pods", "--as=bob", ok=False).stdout.strip() == "no"
    listed = _bob(server, "auth", "can-i", "--list")
    assert ["pods", "[]", "[]", "[get", "list", "watch]"] in [
        line.split() for line in listed.stdout.splitlines()
    ]


def test_bob_cannot_grant_himself_more(server: UpServer) -> None:
    server.kubectl("create", "role", "role-maker", "--verb=create", "--resource=roles", "-n", "default")
    server.kubectl(
        "create", "rolebinding", "bob-makes-roles", "--role=role-maker", "--user=bob", "-n", "default"
    )
    refused = _bob(server, "create", "role", "deleter", "--verb=delete", "--resource=pods", "-n", "default")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "deleter" is forbidden: user "bob" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'
    )


def test_whoami_names_the_caller(server: UpServer) -> None:
    rows = [line.split() for line in _bob(server, "auth", "whoami").stdout.splitlines()]
    assert ["Username", "bob"] in rows
    assert ["UID", "uid-bob"] in rows
    assert ["Groups", "[system:authenticated]"] in rows


def test_the_bootstrap_roles_are_stored(server: UpServer) -> None:
    names = server.kubectl("get", "clusterroles", "-o", "name").stdout.split()
    for name in ("cluster-admin", "admin", "edit", "view", "system:node", "system:kube-scheduler"):
        assert f"clusterrole.rbac.authorization.k8s.io/{name}" in names
    binding = server.kubectl("get", "clusterrolebinding", "cluster-admin", "-o", "wide").stdout.splitlines()
    assert binding[1].split()[:2] == ["cluster-admin", "ClusterRole/cluster-admin"]
    assert binding[1].split()[-1] == "system:masters"
    # admin aggregates edit and view: the controller filled its rules
    admin = yaml.safe_load(server.kubectl("get", "clusterrole", "admin", "-o", "yaml").stdout)
    resources = [rule.get("resources", []) for rule in admin["rules"]]
    assert ["rolebindings", "roles"] in resources  # system:aggregate-to-admin
    assert any("pods/eviction" in r for r in resources)  # edit, aggregated into admin
    assert any("controllerrevisions" in r for r in resources)  # view, aggregated into edit


def test_kubelets_run_pods_as_nodes_without_a_refused_write(server: UpServer) -> None:
    server.kubectl("run", "web", "--image=nginx", "-n", "default")

    def running() -> bool:
        pod = server.get("/api/v1/namespaces/default/pods/web").json()
        return pod.get("status", {}).get("phase") == "Running"

    eventually(running, "the pod to run")
    nodes = server.get("/api/v1/nodes").json()["items"]
    ready = [next(c["status"] for c in n["status"]["conditions"] if c["type"] == "Ready") for n in nodes]
    assert ready == ["True", "True"]
    code, _, stderr = server.stop()
    assert code == 0
    assert "write refused" not in stderr
