"""`kubetaint scheduler` against a live API server records its events as kube-scheduler's
EventBroadcasterAdapter does: through events.k8s.io/v1 when the server serves it (discovery),
through core/v1 otherwise; read back with the real kubectl and the official Python client. The
events.k8s.io/v1 case runs the scheduler as a user RBAC lets write Events through events.k8s.io/v1
only, so an Event written through core/v1 would be refused."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import make_store, namespace, node, pod
from .tls_pair import ca_of, kubeconfig_yaml, serving_pair

KUBECTL = shutil.which("kubectl")
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine"),
]
RBAC = "rbac.authorization.k8s.io"
#: How long an asynchronous outcome may take (bounds a failure, never decides a pass).
POLL_TIMEOUT = 30.0
TOKENS = "admin-token,admin,uid-admin,system:masters\nsched-token,sched,uid-sched\n"
NOT_FOUND = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server could not find the requested resource",
    "reason": "NotFound",
    "details": {},
    "code": 404,
}


@dataclass
class Cluster:
    store: MemoryStore
    workdir: Path
    url: str

    def kubectl(self, *args: str) -> Any:
        """The real kubectl as admin (fresh KUBECACHEDIR); its JSON output."""
        assert KUBECTL is not None
        env = {"PATH": "", "HOME": str(self.workdir), "KUBECACHEDIR": str(self.workdir / "cache")}
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(self.workdir / "admin.kubeconfig"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def _not_served(request: Request) -> JSONResponse:
    return JSONResponse(NOT_FOUND, status_code=404)


#: A server whose events.k8s.io/v1 is switched off (kube-apiserver's --runtime-config=events.k8s.io/v1=false).
WITHOUT_EVENTS_V1 = [
    Route("/apis/events.k8s.io/v1", _not_served, methods=["GET", "POST"]),
    Route("/apis/events.k8s.io/v1/{rest:path}", _not_served, methods=["GET", "POST", "PUT", "PATCH"]),
]


def _scheduler_role(store: MemoryStore) -> None:
    """kube-scheduler's ClusterRole with Events written through events.k8s.io/v1 only, bound to `sched`."""
    rules = [
        {**rule, "apiGroups": ["events.k8s.io"]} if "events" in rule.get("resources", []) else rule
        for rule in store.get(f"clusterroles.{RBAC}", "", "system:kube-scheduler")["rules"]
    ]
    rules.append({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]})
    meta = {"name": "events-v1-scheduler"}
    store.create(
        f"clusterroles.{RBAC}",
        {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": meta, "rules": rules},
    )
    store.create(
        f"clusterrolebindings.{RBAC}",
        {
            "apiVersion": f"{RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "events-v1-scheduler"},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "sched"}],
        },
    )


@contextmanager
def _cluster(tmp_path: Path, *, events_v1: bool) -> Iterator[Cluster]:
    """A server (HTTPS, RBAC, tokens) with a node and a pending pod for `kubetaint scheduler`, which runs
    as `sched` (events.k8s.io/v1 only) when the server serves events.k8s.io/v1, as admin otherwise."""
    clock = VirtualClock()
    store = make_store(clock)
    store.create("namespaces", namespace("default"))
    n1 = node("n1")
    n1["status"]["allocatable"] = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    store.create("nodes", n1)
    (tmp_path / "tokens.csv").write_text(TOKENS)
    security = SecurityConfig(token_auth_file=str(tmp_path / "tokens.csv"), authorization_mode=("RBAC",))
    app = create_app(store, clock, security=security, extra_routes=() if events_v1 else WITHOUT_EVENTS_V1)
    if events_v1:
        _scheduler_role(store)
    tls = serving_pair(tmp_path / "pki")
    with BackgroundServer(app, tls=tls) as server:
        for name, token in (
            ("admin", "admin-token"),
            ("sched", "sched-token" if events_v1 else "admin-token"),
        ):
            (tmp_path / f"{name}.kubeconfig").write_text(
                kubeconfig_yaml(server.url, ca_pem=ca_of(tls), token=token)
            )
        scheduler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kubetaint",
                "scheduler",
                "--kubeconfig",
                str(tmp_path / "sched.kubeconfig"),
                "--scheduler-name",
                "kubetaint",
                "--leader-elect=false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            web = pod("web")
            store.create("pods", {**web, "spec": {**web["spec"], "schedulerName": "kubetaint"}})
            (tmp_path / "ca.crt").write_bytes(ca_of(tls))
            yield Cluster(store, tmp_path, server.url)
        finally:
            scheduler.terminate()
            _, errors = scheduler.communicate(timeout=30)
            assert "Traceback" not in errors, errors


def _scheduled(cluster: Cluster, resource: str) -> dict[str, Any]:
    """The Scheduled event kubectl lists as `resource`, once there is one."""
    deadline = time.monotonic() + POLL_TIMEOUT
    while True:
        items = cluster.kubectl("get", resource, "-o", "json")["items"]
        found = [e for e in items if e.get("reason") == "Scheduled"]
        if found:
            (event,) = found
            return dict(event)
        assert time.monotonic() < deadline, f"no Scheduled event among {items}"
        time.sleep(0.2)


def _official_client_reads(cluster: Cluster) -> list[Any]:
    """The Scheduled events the official Python client's EventsV1Api lists, as admin."""
    k8s = pytest.importorskip("kubernetes.client", reason="the official Python client is not installed")
    config = k8s.Configuration(host=cluster.url)
    config.api_key = {"authorization": "admin-token"}
    config.api_key_prefix = {"authorization": "Bearer"}
    config.ssl_ca_cert = str(cluster.workdir / "ca.crt")
    with k8s.ApiClient(config) as api_client:
        listed = k8s.EventsV1Api(api_client).list_namespaced_event("default")
    return [e for e in listed.items if e.reason == "Scheduled"]


def test_on_a_server_serving_events_v1_the_scheduler_writes_events_v1_events(tmp_path: Path) -> None:
    with _cluster(tmp_path, events_v1=True) as cluster:
        event = _scheduled(cluster, "events.v1.events.k8s.io")
        (read,) = _official_client_reads(cluster)
    assert (read.reporting_controller, read.action, read.note, read.series) == (
        "kubetaint",
        "Binding",
        "Successfully assigned default/web to n1",
        None,
    )
    assert event["apiVersion"] == "events.k8s.io/v1"
    assert {k: event.get(k) for k in ("reportingController", "reportingInstance", "action", "type")} == {
        "reportingController": "kubetaint",
        "reportingInstance": f"kubetaint-{socket.gethostname()}",
        "action": "Binding",
        "type": "Normal",
    }
    assert event["note"] == "Successfully assigned default/web to n1"
    assert {k: event["regarding"][k] for k in ("kind", "namespace", "name")} == {
        "kind": "Pod",
        "namespace": "default",
        "name": "web",
    }
    assert event["eventTime"].endswith("Z") and len(event["eventTime"]) == len("2026-01-01T00:00:00.000000Z")
    assert "deprecatedCount" not in event


def test_on_a_server_without_events_v1_the_scheduler_writes_core_v1_events(tmp_path: Path) -> None:
    """record.EventRecorderAdapter: the scheduler name is the source component; no action."""
    with _cluster(tmp_path, events_v1=False) as cluster:
        event = _scheduled(cluster, "events")
    assert event["source"] == {"component": "kubetaint"}
    assert event["message"] == "Successfully assigned default/web to n1"
    assert event["involvedObject"]["name"] == "web"
    assert (event["count"], event["type"]) == (1, "Normal")
    assert event["firstTimestamp"] == event["lastTimestamp"]
    assert "action" not in event
    assert event.get("eventTime") is None
