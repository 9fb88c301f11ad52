"""Informer.start takes each listed object to the handler sets' on_add callbacks gathered once
(again whenever a handler set is added): every callback must see exactly the calls, in the same
order, that looping over the handler sets for each object gives, handler sets added by a handler
during the start included (they are replayed the cache so far, then told the rest)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import object_key
from kubetaint.store.memory import MemoryStore


class LoopingInformer(Informer):
    """The reference start: the handler sets looked up for each object."""

    def start(self) -> None:
        if self._unsubscribe is not None:
            return
        self._unsubscribe = self._store.subscribe(self, self.resource)
        listed = self._store.list(self.resource)
        self._synced_rv = int(listed.resource_version)
        for obj in listed.items:
            self._cache[object_key(obj)] = obj
            for handlers in self._handlers:
                if handlers.on_add is not None:
                    handlers.on_add(obj)


def run(kind: type[Informer], pods: int, plan: list[tuple[int, int, bool]]) -> list[Any]:
    """`plan`: (handler set, at which object, with on_add): when handler set h sees that object,
    it adds one more handler set (numbered next), with or without an on_add."""
    store = MemoryStore(VirtualClock())
    for i in range(pods):
        store.create("pods", {"metadata": {"name": f"p{i:02d}", "namespace": "default"}, "spec": {}})
    informer = kind(store, "pods")
    calls: list[Any] = []
    triggers = {(h, at): with_add for h, at, with_add in plan}
    count = [0]

    def make(number: int, with_add: bool) -> EventHandlers:
        def on_add(obj: Any) -> None:
            name = obj["metadata"]["name"]
            calls.append((number, name))
            with_add_next = triggers.pop((number, int(name[1:])), None)
            if with_add_next is not None:
                count[0] += 1
                informer.add_handlers(make(count[0], with_add_next))

        return EventHandlers(on_add=on_add if with_add else None)

    informer.add_handlers(make(0, True))
    informer.add_handlers(EventHandlers())
    informer.start()
    return calls


TABLE = [
    pytest.param([], id="no handler added during the start"),
    pytest.param([(0, 2, True)], id="a handler set added at the third object"),
    pytest.param([(0, 0, True), (1, 3, True)], id="a handler set added by an added one"),
    pytest.param([(0, 1, False), (0, 2, True)], id="a handler set without on_add, then one with"),
    pytest.param([(0, 4, True)], id="a handler set added at the last object"),
]


@pytest.mark.parametrize("plan", TABLE)
def test_on_add_calls_are_those_of_looping_over_the_handler_sets(plan: list[tuple[int, int, bool]]) -> None:
    assert run(Informer, 5, plan) == run(LoopingInformer, 5, plan)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 6),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5), st.booleans()), max_size=4),
)
def test_any_plan_of_added_handler_sets_gets_the_calls_of_the_loop(
    pods: int, plan: list[tuple[int, int, bool]]
) -> None:
    assert run(Informer, pods, plan) == run(LoopingInformer, pods, plan)
