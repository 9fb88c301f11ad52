"""RBAC objects through the real kubectl against an HTTPS server with token users: a user with
no binding is refused with upstream's 403 until an admin binds it, `kubectl auth can-i` (also
`--list`) and `kubectl auth whoami` answer from the stored roles, and a user who may write roles
cannot grant what it does not hold (issue 22)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.apiserver.tls import TLSFiles
from kubetaint.clock import VirtualClock

from .test_auth import cluster_store, secure_app
from .tls_pair import ca_of, kubeconfig_yaml, serving_pair

KUBECTL = shutil.which("kubectl")
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]


class Cluster:
    def __init__(self, tmp_path: Path, server: BackgroundServer, tls: TLSFiles) -> None:
        self.tmp_path, self.server, self.ca = tmp_path, server, ca_of(tls)

    def kubectl(self, token: str, *args: str) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        config = self.tmp_path / f"kubeconfig-{token}"
        config.write_text(kubeconfig_yaml(self.server.url, ca_pem=self.ca, token=token))
        env = {
            "KUBECONFIG": str(config),
            "KUBECACHEDIR": str(self.tmp_path / f"cache-{token}"),
            "HOME": str(self.tmp_path),
        }
        return subprocess.run(
            [KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    def admin(self, *args: str) -> str:
        done = self.kubectl("admin-token", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp_path = tmp_path_factory.mktemp("rbac-kubectl")
    clock = VirtualClock()
    tls = serving_pair(tmp_path / "pki")
    with BackgroundServer(secure_app(tmp_path, cluster_store(clock), clock), tls=tls) as server:
        yield Cluster(tmp_path, server, tls)


def test_an_unbound_user_is_refused_until_bound(cluster: Cluster) -> None:
    denied = cluster.kubectl("viewer-token", "get", "pods", "-n", "default")
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        'Error from server (Forbidden): pods is forbidden: User "viewer" cannot list resource "pods" '
        'in API group "" in the namespace "default"'
    )
    can_i = cluster.kubectl("viewer-token", "auth", "can-i", "list", "pods", "-n", "default")
    assert (can_i.returncode, can_i.stdout.strip()) == (1, "no")

    assert cluster.admin(
        "create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods", "-n", "default"
    ).strip() == ("role.rbac.authorization.k8s.io/pod-reader created")
    assert (
        cluster.admin(
            "create", "rolebinding", "viewer-reads", "--role=pod-reader", "--user=viewer", "-n", "default"
        ).strip()
        == "rolebinding.rbac.authorization.k8s.io/viewer-reads created"
    )

    allowed = cluster.kubectl("viewer-token", "get", "pods", "-n", "default")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stderr.strip() == "No resources found in default namespace."
    can_i = cluster.kubectl("viewer-token", "auth", "can-i", "list", "pods", "-n", "default")
    assert (can_i.returncode, can_i.stdout.strip()) == (0, "yes")
    elsewhere = cluster.kubectl("viewer-token", "auth", "can-i", "list", "pods", "-n", "kube-node-lease")
    assert (elsewhere.returncode, elsewhere.stdout.strip()) == (1, "no")


def test_bindings_print_their_role_and_subjects(cluster: Cluster) -> None:
    cluster.admin("create", "clusterrolebinding", "qa-view", "--clusterrole=view", "--group=qa")
    out = cluster.admin("get", "clusterrolebinding", "qa-view", "-o", "wide").splitlines()
    assert out[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert out[1].split()[:2] == ["qa-view", "ClusterRole/view"]
    assert out[1].split()[-1] == "qa"


def test_bootstrap_roles_are_served(cluster: Cluster) -> None:
    names = cluster.admin("get", "clusterroles", "-o", "name").split()
    for name in ("cluster-admin", "admin", "edit", "view", "system:basic-user", "system:node"):
        assert f"clusterrole.rbac.authorization.k8s.io/{name}" in names
    header = cluster.admin("get", "clusterroles", "cluster-admin").splitlines()[0]
    assert header.split() == ["NAME", "CREATED", "AT"]


def test_whoami_and_can_i_list(cluster: Cluster) -> None:
    whoami = cluster.kubectl("alice-token", "auth", "whoami")
    assert whoami.returncode == 0, whoami.stderr
    assert whoami.stdout.split("\n")[0].split() == ["ATTRIBUTE", "VALUE"]
    assert "alice" in whoami.stdout
    assert "[dev qa system:authenticated]" in whoami.stdout
    listed = cluster.kubectl("alice-token", "auth", "can-i", "--list", "-n", "default")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/version]", "[]", "[get]"] in rows


def test_a_user_cannot_grant_permissions_it_does_not_hold(cluster: Cluster) -> None:
    cluster.admin("create", "namespace", "team-a")
    cluster.admin(
        "create", "role", "role-writer", "--verb=create,get", "--resource=roles,rolebindings", "-n", "team-a"
    )
    cluster.admin(
        "create", "rolebinding", "alice-writes-roles", "--role=role-writer", "--user=alice", "-n", "team-a"
    )

    refused = cluster.kubectl(
        "alice-token", "create", "role", "deleter", "--verb=delete", "--resource=pods", "-n", "team-a"
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "deleter" is forbidden: '
        'user "alice" (groups=["dev" "qa" "system:authenticated"]) is attempting to grant RBAC permissions '
        'not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}'
    )
    # what alice holds she may grant
    held = cluster.kubectl(
        "alice-token", "create", "role", "reader", "--verb=get", "--resource=roles", "-n", "team-a"
    )
    assert held.returncode == 0, held.stderr
    # binding a role she does not hold is refused too
    bind = cluster.kubectl(
        "alice-token",
        "create",
        "rolebinding",
        "alice-admin",
        "--clusterrole=admin",
        "--user=alice",
        "-n",
        "team-a",
    )
    assert bind.returncode == 1
    assert 'rolebindings.rbac.authorization.k8s.io "alice-admin" is forbidden: user "alice"' in bind.stderr


def test_can_i_as_another_user_is_impersonation(cluster: Cluster) -> None:
    cluster.admin("create", "namespace", "team-b")
    cluster.admin("create", "role", "lister", "--verb=list", "--resource=pods", "-n", "team-b")
    cluster.admin("create", "rolebinding", "carol-lists", "--role=lister", "--user=carol", "-n", "team-b")
    yes = cluster.kubectl("admin-token", "auth", "can-i", "list", "pods", "-n", "team-b", "--as=carol")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes")
    no = cluster.kubectl("admin-token", "auth", "can-i", "delete", "pods", "-n", "team-b", "--as=carol")
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    # a user who may not impersonate is refused before anything else
    refused = cluster.kubectl("viewer-token", "auth", "can-i", "list", "pods", "--as=carol")
    assert refused.returncode == 1
    assert 'users "carol" is forbidden: User "viewer" cannot impersonate resource "users"' in refused.stderr
