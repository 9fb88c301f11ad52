"""Steps inlined for a ReplicaSet's adoption group leave what their general steps leave:
`PodOwnerIndex._update_many` (an orphan's removal from the orphan indexes done inline, the
owners' version bumps counted and added once per reference list) ends with the index, versions
included, that `_update` of each pair ends with; and the garbage collector graph's
`link_followed` adds the edges `update_refs` adds for an orphan taking references."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.workload_builders import make_env, owner_index_state
from kubetaint.controllers.garbagecollector.graph import DependencyGraph, followed_refs
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]


def ref(name: str, *, controller: bool = True, kind: str = "ReplicaSet") -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": f"{name}-uid",
        "controller": controller,
    }


def pod(name: str, namespace: str = "default", labels: dict[str, str] | None = None, **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"{namespace}-{name}",
            "labels": labels,
            **meta,
        },
        "spec": {"nodeName": "n1"},
    }


def taking(old: JSON, refs: list[JSON] | None) -> JSON:
    return {**old, "metadata": {**old["metadata"], "ownerReferences": refs}}


A, B = [ref("a")], [ref("b")]  # one list per owner, shared by its adoptions
WEB = {"app": "web"}

#: (the pods indexed first, the (old index, new pod of it) pairs of the group)
Group = tuple[list[JSON], list[tuple[int, JSON]]]


def _adoptions(pods: list[JSON], refs: list[list[JSON] | None]) -> Group:
    return pods, [(i, taking(p, r)) for i, (p, r) in enumerate(zip(pods, refs, strict=True))]


def _status_changes(pods: list[JSON]) -> Group:
    """Each pod's status changed, its very metadata object kept (its references and labels)."""
    return pods, [(i, {**p, "status": {"phase": "Running"}}) for i, p in enumerate(pods)]


GROUPS = [
    pytest.param(
        _adoptions([pod(f"p{i}", labels=WEB) for i in range(4)], [A] * 4), id="one list for every pod"
    ),
    pytest.param(
        _adoptions([pod(f"p{i}", labels=WEB) for i in range(4)], [A, B, A, B]),
        id="two owners' lists alternating: each owner's bumps counted apart",
    ),
    pytest.param(
        _adoptions(
            [
                pod("p0", labels={"app": "web", "tier": "x"}),
                pod("p1", "team", labels=WEB),
                pod("p2", labels=None),
            ],
            [A, A, A],
        ),
        id="several labels, the last orphan of a namespace, a pod without labels",
    ),
    pytest.param(
        _adoptions([pod("p0", labels=WEB), pod("p1", ownerReferences=B, labels=WEB)], [A, A]),
        id="a pod owned by another owner moves to the new one",
    ),
    pytest.param(
        _adoptions([pod("p0", labels=WEB), pod("p1", ownerReferences=A, labels=WEB)], [A, A]),
        id="a pod owned already by the owner (its very list) moves nothing",
    ),
    pytest.param(
        _adoptions([pod("p0", labels=WEB), pod("p1", labels=WEB), pod("p2", labels=WEB)], [A, None, A]),
        id="an orphan staying one between two adoptions",
    ),
    pytest.param(
        _adoptions([pod("p0", labels=WEB), pod("p1", labels=WEB)], [[ref("x", controller=False)], A]),
        id="references without a controller keep an orphan",
    ),
    pytest.param(
        (
            [pod("p0", labels=WEB), pod("p1", labels=WEB)],
            [(0, taking(pod("p0", labels=WEB), A)), (0, pod("p0"))],
        ),
        id="the same pod adopted then relabeled in one group",
    ),
    pytest.param(
        _status_changes(
            [pod("p0", labels=WEB, ownerReferences=A), pod("p1", labels=WEB), pod("p2", labels=WEB)]
        ),
        id="status changes keeping the very references and labels move nothing",
    ),
    pytest.param(
        _status_changes(
            [pod("p0", ownerReferences=[ref("d", kind="DaemonSet")]), pod("p1", ownerReferences=B)]
        ),
        id="status changes of a DaemonSet's pod and a ReplicaSet's",
    ),
]


def _indexed(pods: list[JSON], *, orphans: bool, kind: str | None = None) -> tuple[PodOwnerIndex, Informer]:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    index = PodOwnerIndex(
        informer, lambda _o, _n: None, orphans=orphans, owner_kind=kind, on_changes=lambda _p, _k: None
    )
    for body in pods:
        index._add(body)
    return index, informer


def _fed(group: Group, *, at_once: bool, orphans: bool, kind: str | None = None) -> tuple[Any, ...]:
    pods, changes = group
    index, _ = _indexed(pods, orphans=orphans, kind=kind)
    current = list(pods)
    pairs = []
    for i, new in changes:
        pairs.append((current[i], new))
        current[i] = new
    if at_once:
        index._update_many(pairs)
    else:
        for old, new in pairs:
            index._update(old, new)
    return owner_index_state(index)


@pytest.mark.parametrize("orphans", [True, False], ids=["orphans tracked", "owned pods only"])
@pytest.mark.parametrize("group", GROUPS)
def test_an_adoption_group_indexes_what_each_update_indexes(group: Group, orphans: bool) -> None:
    assert _fed(group, at_once=True, orphans=orphans) == _fed(group, at_once=False, orphans=orphans)


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_indexes_what_each_update_indexes_in_an_index_of_daemonset_pods(group: Group) -> None:
    assert _fed(group, at_once=True, orphans=False, kind="DaemonSet") == (
        _fed(group, at_once=False, orphans=False, kind="DaemonSet")
    )


def test_the_versions_count_each_pod_of_the_group_once() -> None:
    pods, changes = _adoptions([pod(f"p{i}", labels=WEB) for i in range(3)], [A, B, A])
    index, _ = _indexed(pods, orphans=True)
    index._update_many([(pods[i], new) for i, new in changes])
    assert (index.version("a-uid"), index.version("b-uid")) == (2, 1)
    assert index.orphans == {} and index._orphan_labels == {}


OBJECTS = [
    pytest.param(taking(pod("p0"), A), id="one controller reference"),
    pytest.param(
        taking(pod("p0"), [ref("x", controller=False, kind="ConfigMap"), *A]), id="two references, two edges"
    ),
    pytest.param(
        {"metadata": {"name": "bare", "ownerReferences": A}},
        id="no namespace nor uid: empty strings as uid_of",
    ),
]


@pytest.mark.parametrize("obj", OBJECTS)
def test_link_followed_adds_what_update_refs_adds_for_an_orphan(obj: JSON) -> None:
    orphan = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "ownerReferences"}}
    general, inline = DependencyGraph(), DependencyGraph()
    for graph in (general, inline):
        graph.add("pods", orphan)
        graph.add("pods", {"metadata": {"name": "other", "uid": "o"}})
    general.update_refs("pods", orphan, obj)
    inline.link_followed("pods", obj, followed_refs(obj))
    owners = {str(r["uid"]) for r in obj["metadata"]["ownerReferences"]}
    for owner in owners:
        assert inline.dependents(owner) == general.dependents(owner)
    assert inline.present == general.present
    assert list(inline.absent_owners()) == list(general.absent_owners())
