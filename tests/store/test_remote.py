"""RemoteStore against the API server over real HTTP (uvicorn in a thread, memory store behind):
paths, reads, writes split between the object and its status subresource, binding, eviction,
preconditions, informers fed by list+watch, re-list on 410, kubeconfigs (token, CA, https)."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import TypeVar

import pytest

from apiserver.tls_pair import ca_of, serving_pair
from kubetaint.api.errors import StatusError
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.security import SecurityConfig
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, ListResult, StoreError, StoreOptions, WatchEvent
from kubetaint.store.memory import MemoryStore
from kubetaint.store.remote import RemoteStore, resource_path
from kubetaint.store.remote_config import Connection, load_kubeconfig
from kubetaint.store.remote_watch import Reflector

T = TypeVar("T")


def eventually(probe: Callable[[], T], what: str) -> T:
    """Watch delivery is asynchronous: poll (the deadline only bounds a failure)."""
    deadline = time.monotonic() + 10
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def node(name: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}}


def pod(name: str, node_name: str = "") -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def backing_store(clock: VirtualClock, history: int = 100_000) -> MemoryStore:
    uids = count()
    store = MemoryStore(
        clock, options=StoreOptions(history_size=history), uid_factory=lambda: f"uid-{next(uids)}"
    )
    for name in ("default", "kube-system"):
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    store.create("nodes", node("n1"))
    return store


@pytest.fixture
def served() -> Iterator[tuple[MemoryStore, RemoteStore]]:
    clock = VirtualClock()
    store = backing_store(clock)
    with BackgroundServer(create_app(store, clock)) as server:
        remote = RemoteStore(Connection(server.url))
        yield store, remote
        remote.close()


@pytest.mark.parametrize(
    ("args", "path"),
    [
        pytest.param(
            ("pods", "default", "p"), "/api/v1/namespaces/default/pods/p", id="a namespaced core object"
        ),
        pytest.param(("nodes", "", "n1", "status"), "/api/v1/nodes/n1/status", id="a cluster-scoped status"),
        pytest.param(("pods",), "/api/v1/pods", id="pods of every namespace"),
        pytest.param(
            ("leases.coordination.k8s.io", "kube-system", "kube-scheduler"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
            id="a lease in a named group",
        ),
        pytest.param(
            ("deployments.apps", "ns"), "/apis/apps/v1/namespaces/ns/deployments", id="a group list"
        ),
        pytest.param(("pods", "d", "p", "binding"), "/api/v1/namespaces/d/pods/p/binding", id="the binding"),
    ],
)
def test_resource_paths(args: tuple[str, ...], path: str) -> None:
    assert resource_path(*args) == path


def test_reads_and_a_create_round_trip(served: tuple[MemoryStore, RemoteStore]) -> None:
    backing, remote = served
    created = remote.create("pods", pod("p1"))
    assert created["metadata"]["uid"] and created["status"]["phase"] == "Pending"
    assert remote.get("pods", "default", "p1")["metadata"]["uid"] == created["metadata"]["uid"]
    listed = remote.list("pods")
    assert [p["metadata"]["name"] for p in listed.items] == ["p1"]
    assert listed.items[0]["kind"] == "Pod"
    assert int(listed.resource_version) == backing.current_resource_version()
    assert remote.current_resource_version() == backing.current_resource_version()
    with pytest.raises(StatusError) as info:
        remote.get("pods", "default", "missing")
    assert info.value.code == 404


def test_a_stale_update_is_a_conflict(served: tuple[MemoryStore, RemoteStore]) -> None:
    _, remote = served
    old = remote.get("nodes", "", "n1")
    remote.update("nodes", {**old, "metadata": {**old["metadata"], "labels": {"a": "1"}}})
    with pytest.raises(StatusError) as info:
        remote.update("nodes", {**old, "metadata": {**old["metadata"], "labels": {"a": "2"}}})
    assert info.value.code == 409


def test_spec_changes_go_to_the_object_and_status_changes_to_the_status_subresource(
    served: tuple[MemoryStore, RemoteStore],
) -> None:
    backing, remote = served
    current = remote.get("nodes", "", "n1")
    taints = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    after_spec = remote.update("nodes", {**current, "spec": {"taints": taints}})
    assert backing.get("nodes", "", "n1")["spec"]["taints"] == taints
    conditions = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]
    remote.update(
        "nodes", {**after_spec, "status": {**after_spec.get("status", {}), "conditions": conditions}}
    )
    stored = backing.get("nodes", "", "n1")
    assert stored["status"]["conditions"] == conditions and stored["spec"]["taints"] == taints


def test_a_change_of_both_writes_both(served: tuple[MemoryStore, RemoteStore]) -> None:
    backing, remote = served
    current = remote.get("nodes", "", "n1")
    remote.update(
        "nodes",
        {
            **current,
            "spec": {"unschedulable": True},
            "status": {**current.get("status", {}), "phase": "Running"},
        },
    )
    stored = backing.get("nodes", "", "n1")
    assert stored["spec"]["unschedulable"] is True and stored["status"]["phase"] == "Running"


def test_setting_a_pods_node_binds_it_and_a_second_binding_conflicts(
    served: tuple[MemoryStore, RemoteStore],
) -> None:
    backing, remote = served
    created = remote.create("pods", pod("p1"))
    bound = remote.update("pods", {**created, "spec": {**created["spec"], "nodeName": "n1"}})
    assert bound["spec"]["nodeName"] == "n1"
    conditions = backing.get("pods", "default", "p1")["status"]["conditions"]
    assert {"type": "PodScheduled", "status": "True"}.items() <= conditions[-1].items()
    with pytest.raises(StatusError) as info:
        remote.bind("default", "p1", "n1")
    assert info.value.code == 409


def test_eviction_and_deletion_with_preconditions(served: tuple[MemoryStore, RemoteStore]) -> None:
    backing, remote = served
    remote.create("pods", pod("a", "n1"))
    b = remote.create("pods", pod("b", "n1"))
    remote.evict("default", "a")
    with pytest.raises(StatusError) as info:
        remote.delete("pods", "default", "b", uid="not-its-uid")
    assert info.value.code == 409
    remote.delete("pods", "default", "b", uid=b["metadata"]["uid"])
    # bound pods with no kubelet to finish them: both are Terminating (graceful deletion)
    terminating = backing.list("pods").items
    assert [p["metadata"]["deletionGracePeriodSeconds"] for p in terminating] == [30, 30]
    for name in ("a", "b"):
        remote.delete("pods", "default", name, grace_period_seconds=0)
    assert backing.list("pods").items == []


def test_an_informer_over_the_remote_store_follows_every_change(
    served: tuple[MemoryStore, RemoteStore],
) -> None:
    backing, remote = served
    backing.create("pods", pod("before"))
    seen: list[str] = []
    informer = Informer(remote, "pods")
    informer.add_handlers(
        EventHandlers(
            on_add=lambda p: seen.append(f"add {p['metadata']['name']}"),
            on_update=lambda old, new: seen.append(f"update {new['metadata']['name']}"),
            on_delete=lambda p: seen.append(f"delete {p['metadata']['name']}"),
        )
    )
    informer.start()
    backing.create("pods", pod("after"))
    current = backing.get("pods", "default", "after")
    backing.update("pods", {**current, "metadata": {**current["metadata"], "labels": {"x": "y"}}})
    backing.delete("pods", "default", "before")
    eventually(lambda: len(seen) == 4, "four events")
    assert seen == ["add before", "add after", "update after", "delete before"]
    assert [p["metadata"]["name"] for p in informer.items()] == ["after"]
    assert remote.known("pods", "default", "after") is not None


def test_a_remote_watch_resumes_from_a_resource_version(served: tuple[MemoryStore, RemoteStore]) -> None:
    backing, remote = served
    start = str(backing.current_resource_version())
    backing.create("pods", pod("p1"))
    watch = remote.watch("pods", resource_version=start)
    events = eventually(lambda: watch.wait(0.2), "the ADDED event")
    watch.stop()
    assert [(e.type, e.object["metadata"]["name"]) for e in events] == [("ADDED", "p1")]


def test_a_reflector_relists_when_its_history_expired_and_delivers_the_differences() -> None:
    clock = VirtualClock()
    backing = backing_store(clock, history=5)
    backing.create("pods", pod("kept"))
    backing.create("pods", pod("gone"))
    stale = backing.list("pods")
    backing.delete("pods", "default", "gone")
    for i in range(10):
        backing.create("pods", pod(f"new-{i}"))
    delivered: list[WatchEvent] = []
    with BackgroundServer(create_app(backing, clock)) as server:
        remote = RemoteStore(Connection(server.url))
        reflector = Reflector(
            "pods", "/api/v1/pods", remote._make_client, lambda: remote.list("pods"), delivered.append
        )
        reflector.start(ListResult(stale.items, stale.resource_version))
        eventually(lambda: len(delivered) == 11, "the re-list's differences")
        reflector.stop()
        remote.close()
    assert reflector.relists == 1
    assert [(e.type, e.object["metadata"]["name"]) for e in delivered if e.type != "ADDED"] == [
        ("DELETED", "gone")
    ]
    assert sorted(name for _, name in reflector.objects) == ["kept"] + [f"new-{i}" for i in range(10)]


# kubeconfigs ----------------------------------------------------------------------------------


def write_kubeconfig(path: Path, cluster: JSON, user: JSON) -> Path:
    import yaml

    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ctx",
            }
        )
    )
    return path


def test_https_with_ca_data_and_a_bearer_token(tmp_path: Path) -> None:
    tls = serving_pair(tmp_path / "pki")
    (tmp_path / "tokens.csv").write_text('admin-token,admin,uid-admin,"system:masters"\n')
    clock = VirtualClock()
    app = create_app(
        backing_store(clock), clock, security=SecurityConfig(token_auth_file=str(tmp_path / "tokens.csv"))
    )
    with BackgroundServer(app, tls=tls) as server:
        ca = base64.b64encode(ca_of(tls)).decode()
        good = write_kubeconfig(
            tmp_path / "good",
            {"server": server.url, "certificate-authority-data": ca},
            {"token": "admin-token"},
        )
        remote = RemoteStore(load_kubeconfig(good))
        assert [n["metadata"]["name"] for n in remote.list("nodes").items] == ["n1"]
        remote.close()
        (tmp_path / "bad-token").write_text("wrong\n")
        bad = write_kubeconfig(
            tmp_path / "bad",
            {"server": server.url, "certificate-authority-data": ca},
            {"tokenFile": "bad-token"},
        )
        remote = RemoteStore(load_kubeconfig(bad))
        with pytest.raises(StatusError) as info:
            remote.list("nodes")
        assert info.value.code == 401
        remote.close()


_HTTPS_CLUSTER = "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n" + (
    "clusters: [{name: c, cluster: {server: 'https://h'%s}}]\n"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            _HTTPS_CLUSTER % ", certificate-authority-data: 'bm90IGEgY2VydA=='"
            + "users: [{name: u, user: {}}]",
            "cannot use its certificates",
            id="CA data that is not a certificate",
        ),
        pytest.param(
            _HTTPS_CLUSTER % ""
            + "users: [{name: u, user: {client-certificate-data: 'bm8=', client-key-data: 'bm8='}}]",
            "cannot use its certificates",
            id="client certificate data that is not a certificate",
        ),
    ],
)
def test_unusable_certificates_in_a_kubeconfig_are_one_line_errors(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(StoreError, match=message) as info:
        load_kubeconfig(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("a: [", "not a kubeconfig", id="not YAML"),
        pytest.param("[]", "not a kubeconfig", id="not a mapping"),
        pytest.param("clusters: []", "no current-context", id="no current context"),
        pytest.param(
            "current-context: x\ncontexts: []",
            "context was not found for specified context: x",
            id="an unknown context",
        ),
        pytest.param(
            "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
            "clusters: [{name: c, cluster: {server: 'ftp://h'}}]",
            "has no http\\(s\\) server URL",
            id="a server that is not http",
        ),
        pytest.param(
            "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
            "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: '%%'}}]",
            "not base64 PEM",
            id="CA data that is not base64",
        ),
    ],
)
def test_bad_kubeconfigs_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(StoreError, match=message) as info:
        load_kubeconfig(path)
    assert "\n" not in str(info.value)


def test_a_missing_kubeconfig_and_an_unreachable_server(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot read the kubeconfig"):
        load_kubeconfig(tmp_path / "nope")
    remote = RemoteStore(Connection("http://127.0.0.1:9"))
    with pytest.raises(StoreError, match=r"cannot reach the API server at http://127\.0\.0\.1:9"):
        remote.list("nodes")
    remote.close()


# namespaces -----------------------------------------------------------------------------------


def test_a_registry_on_a_remote_store_finalizes_through_the_servers_finalize() -> None:
    clock = VirtualClock()
    backing = MemoryStore(clock)
    with BackgroundServer(create_app(backing, clock)) as server:
        remote = RemoteStore(Connection(server.url))
        registry = Registry(remote)
        created = remote.create(
            "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
        )
        assert created["spec"]["finalizers"] == ["kubernetes"]
        marked = remote.delete("namespaces", "", "a")
        assert marked["status"]["phase"] == "Terminating"
        registry.finalize_namespace({**marked, "spec": {"finalizers": []}})
        with pytest.raises(StatusError) as gone:
            backing.get("namespaces", "", "a")
        remote.close()
    assert gone.value.code == 404
