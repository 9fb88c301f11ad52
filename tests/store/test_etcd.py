"""What only the etcd store has: kube-apiserver's key layout in a real etcd, etcd revisions as
resourceVersions, and several servers sharing one etcd."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conformance import collect, eventually, pod, relabelled, rv, status_of
from etcd_server import EtcdServer

from kubetaint.clock import VirtualClock
from kubetaint.store.changes import each_event
from kubetaint.store.etcd import EtcdStore
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import StoreOptions, WatchEvent

_prefixes = itertools.count()


@pytest.fixture
def prefix() -> str:
    return f"/etcd-test-{next(_prefixes)}/registry"


@pytest.fixture
def stores(etcd_server: EtcdServer, prefix: str) -> Iterator[tuple[EtcdStore, EtcdStore]]:
    """Two servers' stores on one etcd, under the same prefix."""
    first = EtcdStore(etcd_server.url, VirtualClock(), options=StoreOptions(prefix=prefix))
    second = EtcdStore(
        f"etcd://127.0.0.1:{etcd_server.client_port}", VirtualClock(), options=StoreOptions(prefix=prefix)
    )
    yield first, second
    first.close()
    second.close()


def etcd_range(server: EtcdServer, key: str, prefix: bool = False) -> dict:
    body = {"key": base64.b64encode(key.encode()).decode()}
    if prefix:
        end = bytearray(key.encode())
        end[-1] += 1
        body["range_end"] = base64.b64encode(bytes(end)).decode()
    return httpx.post(f"{server.url}/v3/kv/range", json=body).json()


@pytest.mark.parametrize(
    ("resource", "namespace", "name", "suffix"),
    [
        pytest.param("pods", "default", "a", "/pods/default/a", id="namespaced"),
        pytest.param("nodes", "", "n1", "/nodes/n1", id="cluster-scoped"),
        pytest.param(
            "deployments.apps", "web", "d", "/deployments/web/d", id="grouped resources drop the group"
        ),
    ],
)
def test_objects_sit_under_kube_apiserver_keys_without_their_version(
    stores: tuple[EtcdStore, EtcdStore],
    etcd_server: EtcdServer,
    prefix: str,
    resource: str,
    namespace: str,
    name: str,
    suffix: str,
) -> None:
    store, _ = stores
    created = store.create(resource, {"metadata": {"name": name, "namespace": namespace}, "spec": {}})
    kvs = etcd_range(etcd_server, prefix + suffix)["kvs"]
    assert len(kvs) == 1
    value = json.loads(base64.b64decode(kvs[0]["value"]))
    assert "resourceVersion" not in value["metadata"]
    assert value["metadata"]["uid"] == created["metadata"]["uid"]
    assert kvs[0]["mod_revision"] == created["metadata"]["resourceVersion"]


def test_resource_versions_are_etcd_revisions(
    stores: tuple[EtcdStore, EtcdStore], etcd_server: EtcdServer, prefix: str
) -> None:
    store, _ = stores
    a = store.create("pods", pod("a"))
    header = etcd_range(etcd_server, prefix + "/pods/", prefix=True)["header"]
    assert int(header["revision"]) == rv(a)
    assert store.list("pods").resource_version == header["revision"]
    assert store.current_resource_version() == rv(a)


def test_servers_sharing_an_etcd_see_each_others_writes(stores: tuple[EtcdStore, EtcdStore]) -> None:
    first, second = stores
    seen: list[tuple[str, str]] = []
    second.subscribe(each_event(lambda e: seen.append((e.type, e.object["metadata"]["name"]))))
    log: list[str] = []
    informer = Informer(second, "pods", field_selector="spec.nodeName=n1")
    informer.add_handlers(EventHandlers(on_add=lambda o: log.append("add " + o["metadata"]["name"])))
    informer.start()
    a = first.create("pods", pod("a", "n1"))
    first.update("pods", relabelled(a, x="1"))
    first.delete("pods", "default", "a")
    eventually(lambda: len(seen) == 3, "the other server's three writes")
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert log == ["add a"] and len(informer) == 0
    informer.stop()


def test_a_stale_copy_from_another_server_conflicts(stores: tuple[EtcdStore, EtcdStore]) -> None:
    first, second = stores
    a = first.create("pods", pod("a"))
    copy = second.get("pods", "default", "a")
    first.update("pods", relabelled(a, x="1"))
    err = status_of(lambda: second.update("pods", relabelled(copy, x="2")))
    assert (err.code, err.reason) == (409, "Conflict")
    assert second.get("pods", "default", "a")["metadata"]["labels"] == {"x": "1"}


def test_own_subscribers_have_seen_a_write_when_it_returns(stores: tuple[EtcdStore, EtcdStore]) -> None:
    store, _ = stores
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    for name in "abc":
        created = store.create("pods", pod(name))
        assert seen[-1].resource_version == rv(created)


def test_a_watch_survives_many_events_and_pages_span_etcd_pages(stores: tuple[EtcdStore, EtcdStore]) -> None:
    store, other = stores
    stream = other.watch("pods", resource_version=str(store.current_resource_version()))
    for i in range(520):
        store.create("pods", pod(f"p{i:04d}", labels={"odd": str(i % 2)}))
    events = collect(stream, "p0519")
    assert len(events) == 520 and [e.resource_version for e in events] == sorted(
        e.resource_version for e in events
    )
    stream.stop()
    odd = store.list("pods", label_selector="odd=1")
    assert len(odd.items) == 260
    page = store.list("pods", label_selector="odd=1", limit=255)
    rest = store.list("pods", label_selector="odd=1", continue_token=page.continue_token)
    assert [o["metadata"]["name"] for o in page.items + rest.items] == [
        o["metadata"]["name"] for o in odd.items
    ]


def test_losing_etcd_ends_watches_and_fails_writes_clearly(tmp_path: Path) -> None:
    server = EtcdServer(tmp_path)
    try:
        store = EtcdStore(server.url, VirtualClock())
        store.subscribe(each_event(lambda e: None))
        stream = store.watch("pods", resource_version="0")
        store.create("pods", pod("a"))
        collect(stream, "a")
    finally:
        server.stop()
    eventually(lambda: stream.stopped, "the watch to end with its etcd")
    err = status_of(lambda: store.create("pods", pod("b")))
    assert (err.code, err.reason) == (503, "ServiceUnavailable")
    assert err.message == f"cannot reach etcd at {server.url}: [Errno 111] Connection refused"
    store.close()


def test_closing_the_store_ends_its_watches(etcd_server: EtcdServer, prefix: str) -> None:
    store = EtcdStore(etcd_server.url, VirtualClock(), options=StoreOptions(prefix=prefix))
    streams = [
        store.watch("pods"),
        store.watch("nodes", resource_version=str(store.current_resource_version())),
    ]
    store.close()
    assert all(stream.stopped for stream in streams)


def test_a_failing_handler_does_not_stall_the_subscription_feed(stores: tuple[EtcdStore, EtcdStore]) -> None:
    store, other = stores
    seen: list[str] = []

    def handler(event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        seen.append(name)
        if name == "boom":
            raise RuntimeError("handler bug")

    other.subscribe(each_event(handler))
    store.create("pods", pod("boom"))
    store.create("pods", pod("after"))
    eventually(lambda: "after" in seen, "the event after the failing one")
    assert seen == ["boom", "after"]
