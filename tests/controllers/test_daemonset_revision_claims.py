"""The DaemonSet controller claims its ControllerRevisions as upstream's controlledHistories does
(ClaimControllerRevisions): a revision it controls that its selector no longer matches is
released, an orphan it matches is adopted, and while it is being deleted it does neither."""

from __future__ import annotations

from controllers.workload_builders import daemonset, make_env, node
from kubetaint.controllers.daemonset import DaemonSetController

NS = "kube-system"
REVISIONS = "controllerrevisions.apps"


def start_with_a_revision():
    clock, store, rng = make_env()
    DaemonSetController(store, clock, rng).start()
    ds = store.create("daemonsets.apps", daemonset("agent"))
    store.create("nodes", node("n1"))
    clock.run_pending()
    (revision,) = store.list(REVISIONS, namespace=NS).items
    return clock, store, ds, revision


def owners(store, name: str) -> list[str]:
    revision = store.get(REVISIONS, NS, name)
    return [ref["uid"] for ref in revision["metadata"].get("ownerReferences") or []]


def relabel(store, revision, labels: dict[str, str]) -> None:
    current = store.get(REVISIONS, NS, revision["metadata"]["name"])
    store.update(REVISIONS, {**current, "metadata": {**current["metadata"], "labels": labels}})


def test_a_revision_the_selector_no_longer_matches_is_released() -> None:
    clock, store, ds, revision = start_with_a_revision()
    assert owners(store, revision["metadata"]["name"]) == [ds["metadata"]["uid"]]
    relabel(store, revision, {"app": "elsewhere"})
    clock.run_pending()
    assert owners(store, revision["metadata"]["name"]) == []


def test_an_orphan_the_selector_matches_is_adopted() -> None:
    clock, store, ds, _revision = start_with_a_revision()
    orphan = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "agent-orphan", "namespace": NS, "labels": {"app": "agent"}},
        "data": {"spec": {"template": {"$patch": "replace"}}},
        "revision": 7,
    }
    store.create(REVISIONS, orphan)
    clock.run_pending()
    assert owners(store, "agent-orphan") == [ds["metadata"]["uid"]]


def test_a_daemonset_being_deleted_releases_nothing() -> None:
    clock, store, ds, revision = start_with_a_revision()
    current = store.get("daemonsets.apps", NS, "agent")
    store.update(
        "daemonsets.apps",
        {**current, "metadata": {**current["metadata"], "finalizers": ["example.com/hold"]}},
    )
    store.delete("daemonsets.apps", NS, "agent")
    relabel(store, revision, {"app": "elsewhere"})
    clock.run_pending()
    assert owners(store, revision["metadata"]["name"]) == [ds["metadata"]["uid"]]
