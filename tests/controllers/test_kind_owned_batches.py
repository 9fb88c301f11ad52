"""`KindOwnedPods` told a batch of changes at once (pods sharing one ownerReferences list object
share its controller reference; pods without one of the kind are passed over) indexes the same
pods under the same owners, and tells the same changes in the same order, as the straightforward
handler looking at each change's old and new references."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.controllers.replicaset.kind_owned import KindOwnedPods, _controller_of_kind
from kubetaint.store.informer import Changes, Informer
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
Key = tuple[str, str]


def _straightforward(
    kind: str, changes: list[Any], owned: dict[str, set[Key]], owner_of: dict[Key, str], told: list[Any]
) -> None:
    for change, key, old, new in changes:
        before = _controller_of_kind(old, kind)
        after = _controller_of_kind(new, kind) if change != "DELETED" else None
        if before is None and after is None and key not in owner_of:
            continue
        previous = owner_of.pop(key, None)
        if previous is not None:
            keys = owned.get(previous)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del owned[previous]
        if after is not None:
            owner_of[key] = after[0]
            owned.setdefault(after[0], set()).add(key)
        for ref in sorted({before, after}, key=repr):
            if ref is not None:
                told.append((key[0], ref[1], old, None if change == "DELETED" else new))


def _ref(kind: str, uid: str, controller: bool = True) -> JSON:
    return {"apiVersion": "apps/v1", "kind": kind, "name": f"o-{uid}", "uid": uid, "controller": controller}


#: Reference lists, shared by the pods given the same one (as one template's pods share theirs).
REF_LISTS: list[Any] = [
    None,
    [],
    [_ref("StatefulSet", "s1")],
    [_ref("StatefulSet", "s2")],
    [_ref("ReplicaSet", "r1")],
    [_ref("StatefulSet", "s1", controller=False)],
    [_ref("ReplicaSet", "r1", controller=False), _ref("StatefulSet", "s2")],
]

changes_strategy = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["ADDED", "MODIFIED", "DELETED"]),
            st.sampled_from(["a", "b", "c", "d"]),
            st.integers(0, len(REF_LISTS) - 1),
            st.booleans(),  # a fresh copy of the list (not shared)
        ),
        min_size=1,
        max_size=8,
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(changes_strategy)
def test_batches_index_and_tell_what_each_change_alone_does(batches: list[list[Any]]) -> None:
    informer = Informer(MemoryStore(VirtualClock()), "pods")
    told: list[Any] = []
    owned = KindOwnedPods(
        informer, "StatefulSet", lambda ns, name, old, new: told.append((ns, name, old, new))
    )
    expected_owned: dict[str, set[Key]] = {}
    expected_owner_of: dict[Key, str] = {}
    expected_told: list[Any] = []
    current: dict[Key, JSON] = {}
    for batch in batches:
        changes = []
        for kind, name, refs_index, fresh in batch:
            key = ("ns", name)
            refs = REF_LISTS[refs_index]
            if fresh and refs is not None:
                refs = [dict(ref) for ref in refs]
            new: JSON = {"metadata": {"namespace": "ns", "name": name}}
            if refs is not None:
                new["metadata"]["ownerReferences"] = refs
            old = current.get(key)
            if kind == "DELETED":
                current.pop(key, None)
                changes.append((kind, key, old, old if old is not None else new))
            else:
                current[key] = new
                changes.append(("ADDED" if old is None else "MODIFIED", key, old, new))
        before = len(told)
        owned._changed(Changes(changes))
        told[before:] = sorted(told[before:], key=lambda t: (id(t[2]), id(t[3]), t[1]))
        start = len(expected_told)
        _straightforward("StatefulSet", changes, expected_owned, expected_owner_of, expected_told)
        expected_told[start:] = sorted(expected_told[start:], key=lambda t: (id(t[2]), id(t[3]), t[1]))
        assert owned._owned == expected_owned
        assert owned._owner_of == expected_owner_of
        assert told == expected_told
