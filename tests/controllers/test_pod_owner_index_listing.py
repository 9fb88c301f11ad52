"""PodOwnerIndex takes a pod whose key it has not indexed (an informer's listing or replay) by a
shorter path (`_index_new`): the index it builds, and every on_change call, must equal what the
general `_index` builds from the same adds, updates and deletes, whatever the mix."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import owner_index_state
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.store.informer import ChangeKind, Changes, ChangesHandler, Informer

JSON = dict[str, Any]


class GeneralIndex(PodOwnerIndex):
    """The reference: every add through `_index`."""

    def _index_new(self, key: tuple[str, str], pod: JSON) -> None:
        self._index(pod)


class FakeInformer(Informer):
    """An informer whose handlers are driven by hand."""

    def __init__(self) -> None:
        self.handlers: list[ChangesHandler] = []

    def add_handlers(self, handler: ChangesHandler, *, replay: bool = True) -> None:
        self.handlers.append(handler)


def _one(kind: ChangeKind, old: JSON | None, obj: JSON) -> Changes:
    """An informer's batch of one change."""
    return Changes([(kind, (obj["metadata"]["namespace"], obj["metadata"]["name"]), old, obj)])


def pod(name: str, namespace: str, labels: Any, owner: str | None) -> JSON:
    meta: JSON = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    if owner is not None:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": owner, "uid": owner, "controller": True}]
    return {"metadata": meta, "spec": {}}


def run(kind: type[PodOwnerIndex], steps: list[tuple[str, JSON]], orphans: bool) -> tuple[Any, ...]:
    informer = FakeInformer()
    calls: list[tuple[Any, Any]] = []
    index = kind(informer, lambda old, new: calls.append((old, new)), orphans=orphans)
    handler = informer.handlers[0]
    current: dict[tuple[str, str], JSON] = {}
    for op, obj in steps:
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        old = current.get(key)
        if op == "delete":
            if old is not None:
                gone = current.pop(key)
                handler(_one("DELETED", gone, gone))
        elif old is None or op == "add":
            handler(_one("ADDED", None, obj))
            current[key] = obj
        else:
            handler(_one("MODIFIED", old, obj))
            current[key] = obj
    return owner_index_state(index), calls


TABLE = [
    pytest.param([("add", pod("a", "d", {"app": "x"}, None))], id="an orphan with a label"),
    pytest.param([("add", pod("a", "d", None, None))], id="an orphan without labels"),
    pytest.param([("add", pod("a", "d", {}, "rs-1"))], id="an owned pod"),
    pytest.param(
        [("add", pod("a", "d", {"app": "x"}, None)), ("add", pod("a", "d", {"app": "y"}, "rs-1"))],
        id="an add of an indexed key (a relist) takes the general path",
    ),
    pytest.param(
        [
            ("add", pod("a", "d", {"app": "x"}, None)),
            ("delete", pod("a", "d", {}, None)),
            ("add", pod("a", "d", {"app": "x"}, "rs-2")),
        ],
        id="a key deleted and added again",
    ),
]


@pytest.mark.parametrize("orphans", [True, False], ids=["tracking orphans", "owned pods only"])
@pytest.mark.parametrize("steps", TABLE)
def test_adds_index_as_the_general_path_does(steps: list[tuple[str, JSON]], orphans: bool) -> None:
    assert run(PodOwnerIndex, steps, orphans) == run(GeneralIndex, steps, orphans)


@pytest.mark.parametrize("orphans", [True, False], ids=["tracking orphans", "owned pods only"])
def test_labels_that_are_no_mapping_fail_alike_and_leave_no_trace(orphans: bool) -> None:
    outcomes = []
    for kind in (PodOwnerIndex, GeneralIndex):
        informer = FakeInformer()
        index = kind(informer, lambda old, new: None, orphans=orphans)
        try:
            informer.handlers[0](_one("ADDED", None, pod("a", "d", ["not", "a", "map"], None)))
            outcome = "ok"
        except AttributeError:
            outcome = "AttributeError"
        outcomes.append((outcome, owner_index_state(index)))
    assert outcomes[0] == outcomes[1]


LABELS = st.one_of(
    st.none(), st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]), max_size=2)
)
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "update", "delete"]),
        st.builds(
            pod,
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["d", "e"]),
            LABELS,
            st.one_of(st.none(), st.sampled_from(["rs-1", "rs-2"])),
        ),
    ),
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(STEPS, st.booleans())
def test_any_history_indexes_as_the_general_path_does(steps: list[tuple[str, JSON]], orphans: bool) -> None:
    assert run(PodOwnerIndex, steps, orphans) == run(GeneralIndex, steps, orphans)
