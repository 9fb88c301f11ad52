"""Issue 22's reproducers against a `kubetaint up` process, as users run it (HTTPS, Node,RBAC):
repeated query parameters read as upstream reads them, a self-copying JSON patch bounded, idle
connections that do not lock a client out, and an unknown field the real kubectl is warned about
and that is not stored."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator

import httpx
import pytest

from .harness import KUBECTL, UpServer, eventually

PODS = "/api/v1/namespaces/default/pods"
TOKENS = "n1-token,system:node:node-1,uid-n1,system:nodes\nviewer-token,viewer,uid-viewer\n"
RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    workdir = tmp_path_factory.mktemp("up-robust")
    tokens = workdir / "tokens.csv"
    tokens.write_text(TOKENS)
    server = UpServer(workdir, "--nodes", "2", "--token-auth-file", str(tokens)).start()
    try:
        with server.client() as admin:
            for name, node in (("on-1", "node-1"), ("on-2", "node-2")):
                body = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name},
                    "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]},
                }
                assert admin.post(PODS, json=body).status_code == 201
            role = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "pod-lister"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}],
            }
            binding = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "viewer-lists-pods"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-lister"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "viewer"}],
            }
            assert admin.post(f"{RBAC}/roles", json=role).status_code == 201
            assert admin.post(f"{RBAC}/rolebindings", json=binding).status_code == 201
        yield server
    finally:
        server.kill()


def _as(up: UpServer, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=up.url,
        verify=up.connection.ssl_context(),
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_a_second_empty_field_selector_does_not_let_a_node_list_every_pod(up: UpServer) -> None:
    with _as(up, "n1-token") as node:
        response = node.get(f"{PODS}?fieldSelector=spec.nodeName%3Dnode-1&fieldSelector=")
        assert response.status_code == 200, response.text
        assert [p["metadata"]["name"] for p in response.json()["items"]] == ["on-1"]


def test_watch_0_then_1_is_a_list_and_watch_1_then_0_a_watch(up: UpServer) -> None:
    with _as(up, "viewer-token") as viewer:
        response = viewer.get(f"{PODS}?watch=0&watch=1")
        assert response.status_code == 200, response.text
        assert response.json()["kind"] == "PodList"
        with viewer.stream("GET", f"{PODS}?watch=1&watch=0&timeoutSeconds=1") as watch:
            assert watch.status_code == 200
            assert [json.loads(line)["type"] for line in watch.iter_lines() if line] == ["ADDED", "ADDED"]


@pytest.mark.parametrize("params", [{}, {"dryRun": "All"}], ids=["stored", "dry run"])
def test_a_self_copying_json_patch_gets_422_and_health_stays(up: UpServer, params: dict[str, str]) -> None:
    patch = [{"op": "add", "path": "/spec/x", "value": ["a" * 30] * 10}]
    patch += [{"op": "copy", "from": "/spec/x", "path": "/spec/x/-"}] * 20
    with up.client(timeout=30) as admin:
        response = admin.patch(
            f"{PODS}/on-1",
            params=params,
            content=json.dumps(patch),
            headers={"Content-Type": "application/json-patch+json"},
        )
        assert response.status_code == 422, response.text
        assert response.json()["message"] == "the server rejected our request due to an error in our request"
        assert admin.get("/healthz").text == "ok"
        assert "x" not in admin.get(f"{PODS}/on-1").json()["spec"]


def test_hundreds_of_idle_connections_do_not_lock_out_a_new_client(up: UpServer) -> None:
    host, port = up.url.removeprefix("https://").rsplit(":", 1)
    idle = [socket.create_connection((host.strip("[]"), int(port))) for _ in range(300)]
    try:
        with up.client(timeout=30) as admin:
            assert admin.get("/api/v1/nodes").status_code == 200
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.kubectl
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")
def test_kubectl_is_warned_of_an_unknown_field_outside_latin_1_that_is_not_stored(up: UpServer) -> None:
    manifest = up.workdir / "euro.json"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "euro"},
        "spec": {"x€": 1, "containers": [{"name": "c", "image": "nginx"}]},
    }
    manifest.write_text(json.dumps(pod, ensure_ascii=False))
    created = up.kubectl("create", "--validate=warn", "-f", str(manifest))
    assert 'unknown field "spec.x€"' in created.stderr
    stored = json.loads(up.kubectl("get", "pod", "euro", "-o", "json").stdout)
    assert "x€" not in stored["spec"]


def test_tls_is_what_the_reproducers_went_through(up: UpServer) -> None:
    assert up.url.startswith("https://")
    assert isinstance(up.connection.ssl_context(), ssl.SSLContext)


def test_a_pod_with_the_largest_grace_period_is_gone_after_its_delete(up: UpServer) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "forever"},
        "spec": {
            "nodeName": "node-2",
            "terminationGracePeriodSeconds": 2**63 - 1,
            "containers": [{"name": "c", "image": "nginx"}],
        },
    }
    with up.client() as admin:
        assert admin.post(PODS, json=body).status_code == 201
        deleted = admin.delete(f"{PODS}/forever")
        assert deleted.status_code == 200, deleted.text
        eventually(lambda: admin.get(f"{PODS}/forever").status_code == 404, "the kubelet to remove the pod")
