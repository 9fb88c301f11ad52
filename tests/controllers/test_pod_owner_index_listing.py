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
from kubetaint.store.informer import EventHandlers, Informer

JSON = dict[str, Any]


class GeneralIndex(PodOwnerIndex):
    """The reference: every add through `_index`."""

    def _add(self, pod: JSON) -> None:
        self._index(pod)
        self._on_change(None, pod)


class FakeInformer(Informer):
    """An informer whose handlers are driven by hand."""

    def __init__(self) -> None:
        self.handlers: list[EventHandlers] = []

    def add_handlers(self, handlers: EventHandlers, *, replay: bool = True) -> None:
        self.handlers.append(handlers)


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
    handlers = informer.handlers[0]
    current: dict[tuple[str, str], JSON] = {}
    for op, obj in steps:
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        old = current.get(key)
        if op == "delete":
            if old is not None:
                assert handlers.on_delete is not None
                handlers.on_delete(current.pop(key))
        elif old is None or op == "add":
            assert handlers.on_add is not None
            handlers.on_add(obj)
            current[key] = obj
        else:
            assert handlers.on_update is not None
            handlers.on_update(old, obj)
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
        on_add = informer.handlers[0].on_add
        assert on_add is not None
        try:
            on_add(pod("a", "d", ["not", "a", "map"], None))
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
