"""The real kubectl against an HTTPS server with a generated self-signed certificate and token
kubeconfigs: the node identity may not remove its own taint, an admin may (issue 10)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock

from .test_auth import cluster_store, secure_app
from .tls_pair import ca_of, kubeconfig_yaml, serving_pair

KUBECTL = shutil.which("kubectl")
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]


def kubectl(
    tmp_path: Path, server: str, ca: bytes, token: str, *args: str
) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    config = tmp_path / f"kubeconfig-{token}"
    config.write_text(kubeconfig_yaml(server, ca_pem=ca, token=token))
    env = {"KUBECONFIG": str(config), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return subprocess.run([KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_kubectl_taint_with_node_and_admin_tokens(tmp_path: Path) -> None:
    clock = VirtualClock()
    tls = serving_pair(tmp_path / "pki")
    with BackgroundServer(secure_app(tmp_path, cluster_store(clock), clock), tls=tls) as server:
        ca = ca_of(tls)
        denied = kubectl(tmp_path, server.url, ca, "n1-token", "taint", "nodes", "n1", "dedicated-")
        assert denied.returncode != 0
        assert denied.stderr.strip() == (
            'Error from server (Forbidden): nodes "n1" is forbidden: node "n1" is not allowed to modify taints'
        )
        anonymous = kubectl(tmp_path, server.url, ca, "", "get", "nodes")
        assert anonymous.returncode != 0
        # kubectl reacts to a 401 with no credentials by prompting for basic-auth credentials
        assert "Please enter Username" in anonymous.stdout
        allowed = kubectl(tmp_path, server.url, ca, "admin-token", "taint", "nodes", "n1", "dedicated-")
        assert allowed.returncode == 0, allowed.stderr
        assert allowed.stdout.strip() == "node/n1 untainted"
