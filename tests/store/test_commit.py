"""`Store.commit`, the one write method, on every backend (memory, SQLite, etcd): a table of
batches and what each gives, per object, with the events subscribers are told, in order."""

from __future__ import annotations

from typing import Any

import pytest
from conformance import OpenStore, node, pod

from kubetaint.api.errors import StatusError
from kubetaint.store.etcd import EtcdStore
from kubetaint.store.interface import JSON, ChangeBatch, Create, Delete, SetField, Store, Update, WriteOp

RENEW = ("spec", "renewTime")
LEASES = "leases.coordination.k8s.io"


def lease(name: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": name, "renewTime": "t0"},
    }


def _outcome(result: JSON | StatusError) -> str:
    if isinstance(result, StatusError):
        return f"{result.code} {result.reason}"
    meta = result["metadata"]
    return f"{meta['name']}@{meta.get('resourceVersion') or 0}"


def _stored(store: Store, name: str, resource: str = "pods") -> JSON:
    return store.get(resource, "default" if resource == "pods" else "kube-node-lease", name)


def _relabel(store: Store, name: str, **labels: str) -> Update:
    current = _stored(store, name)
    return Update("pods", {**current, "metadata": {**current["metadata"], "labels": labels}})


def _stale(store: Store, name: str) -> Update:
    current = _stored(store, name)
    return Update("pods", {**current, "metadata": {**current["metadata"], "resourceVersion": "1"}})


def _renew(store: Store, *names: str) -> SetField:
    return SetField(LEASES, [_stored(store, n, LEASES) for n in names], RENEW, "t1")


def _post(store: Store, name: str) -> SetField:
    return SetField("nodes", [store.get("nodes", "", name)], ("status", "conditions"), [{"type": "Ready"}])


def _stale_renew(store: Store, name: str) -> SetField:
    current = _stored(store, name, LEASES)
    return SetField(
        LEASES, [{**current, "metadata": {**current["metadata"], "resourceVersion": "1"}}], RENEW, "t1"
    )


#: (id, batch builder, stop_at_failure, expected outcomes (rv relative to the start), events)
CASES: list[Any] = [
    pytest.param(
        lambda s: [Create("pods", pod("c")), Create("pods", pod("d"))],
        False,
        ["c@1", "d@2"],
        [("ADDED", "c"), ("ADDED", "d")],
        id="creates each get their own resourceVersion and event, in order",
    ),
    pytest.param(
        lambda s: [Create("pods", pod("a")), Create("pods", pod("c"))],
        False,
        ["409 AlreadyExists", "c@1"],
        [("ADDED", "c")],
        id="a failing create changes nothing and the next one still commits",
    ),
    pytest.param(
        lambda s: [Create("pods", pod("a")), Create("pods", pod("c"))],
        True,
        ["409 AlreadyExists"],
        [],
        id="with stop_at_failure the batch ends at the first failure",
    ),
    pytest.param(
        lambda s: [_relabel(s, "a", x="1"), _stale(s, "b"), _relabel(s, "b", y="2")],
        True,
        ["a@1", "409 Conflict"],
        [("MODIFIED", "a")],
        id="the writes before a stopping failure stay committed",
    ),
    pytest.param(
        lambda s: [
            _relabel(s, "a", x="1"),
            Delete("pods", "default", "b"),
            Create("pods", pod("b")),
        ],
        False,
        ["a@1", "b@2", "b@3"],
        [("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "b")],
        id="an update, a delete and a create of the deleted name in one batch",
    ),
    pytest.param(
        lambda s: [Delete("pods", "default", "a", uid="other"), Delete("pods", "default", "zz")],
        False,
        ["409 Conflict", "404 NotFound"],
        [],
        id="delete preconditions and missing objects fail each on its own",
    ),
    pytest.param(
        lambda s: [_renew(s, "n1", "n2")],
        False,
        ["n1@1", "n2@2"],
        [("MODIFIED", "n1"), ("MODIFIED", "n2")],
        id="a field write is one result and one event per object",
    ),
    pytest.param(
        lambda s: [_renew(s, "n1"), Create("pods", pod("c")), _renew(s, "n2")],
        False,
        ["n1@1", "c@2", "n2@3"],
        [("MODIFIED", "n1"), ("ADDED", "c"), ("MODIFIED", "n2")],
        id="field writes mixed with other operations keep the batch order",
    ),
    pytest.param(
        lambda s: [_renew(s, "n1"), _post(s, "n0"), _renew(s, "n2")],
        False,
        ["n1@1", "n0@2", "n2@3"],
        [("MODIFIED", "n1"), ("MODIFIED", "n0"), ("MODIFIED", "n2")],
        id="field writes of leases and a node in turn keep the batch order",
    ),
    pytest.param(
        lambda s: [_renew(s, "n1"), _stale_renew(s, "n2"), _post(s, "n0")],
        True,
        ["n1@1", "409 Conflict"],
        [("MODIFIED", "n1")],
        id="a field write of a changed object ends the batch with stop_at_failure",
    ),
    pytest.param(
        lambda s: [
            Update("pods", {**pod("a")}, dry_run=True),
            Create("pods", pod("c"), dry_run=True),
        ],
        False,
        ["a", "c"],
        [],
        id="dry runs store nothing and tell nothing",
    ),
    pytest.param(lambda s: [], False, [], [], id="an empty batch commits nothing"),
]


def _prepared(open_store: OpenStore) -> tuple[Store, int, list[ChangeBatch]]:
    store = open_store()
    for name in "ab":
        store.create("pods", pod(name))
    store.create("nodes", node("n0"))
    for name in ("n1", "n2"):
        store.create(LEASES, lease(name))
    seen: list[ChangeBatch] = []
    store.subscribe(seen.append)
    return store, store.current_resource_version(), seen


@pytest.mark.parametrize(("build", "stop", "expected", "events"), CASES)
def test_commit(
    open_store: OpenStore, build: Any, stop: bool, expected: list[str], events: list[Any]
) -> None:
    store, start, seen = _prepared(open_store)
    ops: list[WriteOp] = build(store)
    results = store.commit(ops, stop_at_failure=stop)
    outcomes = []
    for result in results:
        text = _outcome(result)
        if "@" in text:
            name, rv = text.split("@")
            relative = int(rv) - start
            text = f"{name}@{relative}" if relative > 0 else name
        outcomes.append(text)
    assert outcomes == expected
    told = [(e.type, e.object["metadata"]["name"]) for batch in seen for e in batch]
    # a store fed by a watch (etcd) has told its subscribers by the time the write returns
    assert told == events
    if not isinstance(store, EtcdStore):  # (etcd publishes each revision as its own batch)
        assert len(seen) == (1 if events else 0), "one commit, one batch"
    assert store.current_resource_version() == start + len(events)


def test_create_update_and_delete_are_one_operation_commits(open_store: OpenStore) -> None:
    store, start, seen = _prepared(open_store)
    created = store.create("pods", pod("c"))
    updated = store.update("pods", {**created, "metadata": {**created["metadata"], "labels": {"x": "1"}}})
    gone = store.delete("pods", "default", "c", resource_version=updated["metadata"]["resourceVersion"])
    assert [int(o["metadata"]["resourceVersion"]) - start for o in (created, updated, gone)] == [1, 2, 3]
    with pytest.raises(StatusError) as refused:
        store.delete("pods", "default", "c")
    assert refused.value.code == 404
    assert [e.type for batch in seen for e in batch] == ["ADDED", "MODIFIED", "DELETED"]
