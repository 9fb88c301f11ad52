"""A PodOwnerIndex of one owner kind (`owner_kind`, the DaemonSet controller's) files exactly the
pods whose controller reference names that kind, under the reference's uid, whatever the history
of adds, updates (alone or in groups: an adoption; keeping the very owner references or not)
and deletes; the callbacks are told of every
change as an index of every kind tells them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.test_pod_owner_index_listing import FakeInformer
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import Change, Changes

JSON = dict[str, Any]
Key = tuple[str, str]


def pod(name: str, owner: tuple[str, str] | None) -> JSON:
    """A pod of namespace `d`, controlled by `owner` ((kind, uid)) or by nobody."""
    meta: JSON = {"name": name, "namespace": "d", "labels": {"app": "x"}}
    if owner is not None:
        kind, uid = owner
        meta["ownerReferences"] = [{"kind": kind, "name": uid, "uid": uid, "controller": True}]
    return {"metadata": meta, "spec": {}}


def replay(steps: list[list[tuple[str, JSON]]], owner_kind: str | None) -> tuple[Any, ...]:
    """Feed the steps (each a batch of changes told at once) to an index; its owned pods, the
    on_change calls, the grouped calls, and the pods at the end."""
    informer = FakeInformer()
    calls: list[tuple[Any, Any]] = []
    grouped: list[list[tuple[JSON, JSON]]] = []
    index = PodOwnerIndex(
        informer,
        lambda old, new: calls.append((old, new)),
        orphans=False,
        owner_kind=owner_kind,
        on_changes=lambda pairs, keys: grouped.append(list(pairs)),
    )
    current: dict[Key, JSON] = {}
    for batch in steps:
        changes: list[Change] = []
        for op, obj in batch:
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            old = current.get(key)
            if any(change[1] == key for change in changes):
                continue  # one change per key in a batch, as an informer's commit makes
            if op == "delete":
                if old is not None:
                    changes.append(("DELETED", key, old, current.pop(key)))
            elif op == "touch":  # a status change: the very owner references and labels kept
                if old is not None:
                    touched = {**old, "metadata": {**old["metadata"]}, "status": {"n": len(steps)}}
                    changes.append(("MODIFIED", key, old, touched))
                    current[key] = touched
            elif old is None:
                changes.append(("ADDED", key, None, obj))
                current[key] = obj
            else:
                changes.append(("MODIFIED", key, old, obj))
                current[key] = obj
        if changes:
            informer.handlers[0](Changes(changes))
    owned = {uid: set(keys) for uid, keys in index.owned.items() if keys}
    return owned, calls, grouped, current


def daemonset_owned(current: dict[Key, JSON]) -> dict[str, set[Key]]:
    """The keys of the pods a DaemonSet controls, by its uid."""
    owned: dict[str, set[Key]] = {}
    for key, obj in current.items():
        for ref in obj["metadata"].get("ownerReferences") or ():
            if ref.get("controller") and ref["kind"] == "DaemonSet":
                owned.setdefault(ref["uid"], set()).add(key)
    return owned


OWNERS = st.one_of(
    st.none(), st.tuples(st.sampled_from(["DaemonSet", "ReplicaSet"]), st.sampled_from(["u1", "u2"]))
)
STEPS = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["put", "put", "touch", "delete"]),
            st.builds(pod, st.sampled_from(["a", "b", "c"]), OWNERS),
        ),
        min_size=1,
        max_size=3,
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_an_index_of_daemonset_pods_files_those_a_daemonset_controls(
    steps: list[list[tuple[str, JSON]]],
) -> None:
    owned, calls, grouped, current = replay(steps, "DaemonSet")
    assert owned == daemonset_owned(current)
    _, every_calls, every_grouped, _ = replay(steps, None)
    assert (calls, grouped) == (every_calls, every_grouped)


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(
            [
                [("put", pod("a", None)), ("put", pod("b", None))],
                [("put", pod("a", ("ReplicaSet", "u1"))), ("put", pod("b", ("ReplicaSet", "u1")))],
            ],
            id="orphans a ReplicaSet adopts in one group are not filed",
        ),
        pytest.param(
            [[("put", pod("a", ("DaemonSet", "u1")))], [("put", pod("a", ("ReplicaSet", "u1")))]],
            id="a pod whose controller becomes a ReplicaSet leaves the index",
        ),
        pytest.param(
            [[("put", pod("a", ("ReplicaSet", "u1")))], [("put", pod("a", ("DaemonSet", "u2")))]],
            id="a pod whose controller becomes a DaemonSet joins the index",
        ),
    ],
)
def test_changes_of_controller_kind(steps: list[list[tuple[str, JSON]]]) -> None:
    owned, _, _, current = replay(steps, "DaemonSet")
    assert owned == daemonset_owned(current)
