"""The ReplicaSet controller's pod-event shortcuts change nothing: an owner index that skips the
re-indexing of a pod keeping its owner (or, as an orphan, its labels) ends in the state a fresh
index of the same pods has, and the ReplicaSet handler that skips repeating the old pod's marks and
queue keys for the new pod queues and marks exactly what doing both gives."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, owner_index_state, pod, replicaset
from kubetaint.controllers.replicaset import ReplicaSetController, podutil
from kubetaint.controllers.replicaset.controller import _same_claim
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import Informer

JSON = dict[str, Any]
OWNERS = [None, "uid-a", "uid-b"]
LABELS = [{}, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}]


def _ref(uid: str) -> JSON:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": uid, "uid": uid, "controller": True}


writes = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=4),
        st.sampled_from(OWNERS),
        st.sampled_from(range(len(LABELS))),
        st.sampled_from(["write", "status", "delete"]),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(history=writes, orphans=st.booleans())
def test_an_index_after_any_history_equals_a_fresh_index_of_the_final_pods(
    history: list[tuple[int, str | None, int, str]], orphans: bool
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    kept = PodOwnerIndex(informer, lambda _old, _new: None, orphans=orphans)
    informer.start()
    for i, owner, labels, action in history:
        name = f"p{i}"
        current = informer.get("default", name)
        if action == "delete":
            if current is not None:
                store.delete("pods", "default", name)
            continue
        if action == "status" and current is not None:
            store.update("pods", {**current, "status": {"phase": "Running", "podIP": f"10.0.0.{i}"}})
            continue
        body = pod(name, labels=LABELS[labels])
        if owner is not None:
            body["metadata"]["ownerReferences"] = [_ref(owner)]
        if current is None:
            store.create("pods", body)
        else:
            store.update("pods", {**copy.deepcopy(current), "metadata": body["metadata"]})
    fresh_informer = Informer(store, "pods")
    fresh = PodOwnerIndex(fresh_informer, lambda _old, _new: None, orphans=orphans)
    fresh_informer.start()
    assert owner_index_state(kept, versions=False) == owner_index_state(fresh, versions=False)


@pytest.mark.parametrize(
    ("old_ref", "new_ref", "old_labels", "new_labels", "same"),
    [
        pytest.param("uid-a", "uid-a", {"app": "a"}, {"app": "b"}, True, id="the same owner whatever labels"),
        pytest.param("uid-a", "uid-b", {"app": "a"}, {"app": "a"}, False, id="another owner is news"),
        pytest.param(None, "uid-a", {"app": "a"}, {"app": "a"}, False, id="an adoption is news"),
        pytest.param("uid-a", None, {"app": "a"}, {"app": "a"}, False, id="a release is news"),
        pytest.param(None, None, {"app": "a"}, {"app": "a"}, True, id="an orphan keeping its labels"),
        pytest.param(None, None, {"app": "a"}, {"app": "b"}, False, id="an orphan relabelled is news"),
        pytest.param(None, None, {}, {}, True, id="an orphan without labels keeping none"),
    ],
)
def test_same_claim_table(
    old_ref: str | None, new_ref: str | None, old_labels: JSON, new_labels: JSON, same: bool
) -> None:
    old = pod("p", labels=old_labels)
    new = pod("p", labels=new_labels)
    refs = [_ref(u) if u else None for u in (old_ref, new_ref)]
    assert _same_claim(old, refs[0], new, refs[1]) is same


class _Recorder(ReplicaSetController):
    """Records what each pod event queues and marks, through both paths."""

    def both_ways(self, old: JSON | None, new: JSON | None) -> tuple[list[Any], list[Any]]:
        shortcut = self._effects(lambda: self._pod_changed(old, new))

        def full() -> None:
            for one in (old, new):
                if one is not None:
                    self._pod_seen(one, podutil.controller_ref_of(one))

        return shortcut, self._effects(full)

    def _effects(self, action: Any) -> list[Any]:
        queued = dict(self.queue._queued)
        marks = {uid: set(view.dirty) for uid, view in self.views._views.items()}
        self.queue._queued.clear()
        for view in self.views._views.values():
            view.dirty.clear()
        action()
        effect = [list(self.queue._queued), {uid: set(v.dirty) for uid, v in self.views._views.items()}]
        self.queue._queued.clear()
        self.queue._queued.update(queued)
        for uid, view in self.views._views.items():
            view.dirty = marks.get(uid, set())
        return effect


@settings(max_examples=60, deadline=None)
@given(
    old_owner=st.sampled_from([None, "a", "b"]),
    new_owner=st.sampled_from([None, "a", "b", "gone"]),
    old_labels=st.sampled_from(range(len(LABELS))),
    new_labels=st.sampled_from(range(len(LABELS))),
)
def test_the_handler_queues_and_marks_what_handling_old_and_new_in_full_does(
    old_owner: str | None, new_owner: str | None, old_labels: int, new_labels: int
) -> None:
    clock, store, rng = make_env()
    controller = _Recorder(store, clock, rng)
    controller.start()
    uids = {}
    for name, labels in (("a", {"app": "a"}), ("b", {"app": "b"})):
        created = store.create("replicasets.apps", replicaset(name, 0, labels))
        uids[name] = created["metadata"]["uid"]
    clock.run_until(clock.now() + 1)
    for name in ("a", "b"):  # a view per owner, so that marks are recorded
        rs = controller.replicasets.get("default", name)
        assert rs is not None
        controller.sync(("default", name))

    def body(owner: str | None, labels: int) -> JSON:
        made = pod("p", labels=LABELS[labels])
        if owner is not None:
            ref = {**_ref(uids.get(owner, "uid-gone")), "name": owner}
            made["metadata"]["ownerReferences"] = [ref]
        return made

    old, new = body(old_owner, old_labels), body(new_owner, new_labels)
    shortcut, full = controller.both_ways(old, new)
    assert shortcut == full
    for one in (old, new):  # an add and a delete as well
        assert controller.both_ways(None, one)[0] == controller.both_ways(None, one)[1]
        assert controller.both_ways(one, None)[0] == controller.both_ways(one, None)[1]
