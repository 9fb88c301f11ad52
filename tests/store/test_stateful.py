"""Laws of the store under interleaved writers (hypothesis stateful testing, on every backend).

Several clients each keep their own possibly stale copy of objects and write with preconditions,
as controllers do. Whatever the interleaving:
- a write succeeds exactly when the client's copy is current (no lost update), else Conflict;
- every committed write gets a resourceVersion larger than all before it;
- a watch opened at the start sees exactly the committed changes, in order;
- the store's contents equal the model's.
"""

from __future__ import annotations

import pytest
from conformance import OpenStore, collect, pod, relabelled, rv
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import JSON, Store

NAMES = st.sampled_from(["a", "b", "c"])
CLIENTS = st.integers(0, 2)
VALUES = st.sampled_from(["1", "2", "3"])
EXAMPLES = {"memory": 60, "sqlite": 25, "etcd": 8}


class WritersWithPreconditions(RuleBasedStateMachine):
    store: Store

    def __init__(self) -> None:
        super().__init__()
        self.store = self.open_store()
        self.start = self.store.current_resource_version()
        self.stream = self.store.watch("pods", resource_version=str(self.start))
        self.model: dict[str, JSON] = {}
        self.copies: list[dict[str, JSON]] = [{}, {}, {}]
        self.committed: list[tuple[str, str, int]] = []

    open_store: staticmethod  # set per backend before running

    def _committed(self, kind: str, obj: JSON) -> None:
        version = rv(obj)
        assert not self.committed or version > self.committed[-1][2], "resourceVersions must increase"
        assert version > self.start
        self.committed.append((kind, obj["metadata"]["name"], version))

    @rule(client=CLIENTS, name=NAMES)
    def create(self, client: int, name: str) -> None:
        try:
            created = self.store.create("pods", pod(name, labels={"v": "0"}))
        except StatusError as err:
            assert name in self.model and err.reason == "AlreadyExists"
            return
        assert name not in self.model
        self.model[name] = created
        self.copies[client][name] = created
        self._committed("ADDED", created)

    @rule(client=CLIENTS, name=NAMES)
    def read(self, client: int, name: str) -> None:
        try:
            self.copies[client][name] = self.store.get("pods", "default", name)
        except StatusError as err:
            assert name not in self.model and err.reason == "NotFound"
            self.copies[client].pop(name, None)
            return
        assert self.copies[client][name] == self.model[name]

    @rule(client=CLIENTS, name=NAMES, value=VALUES)
    def update(self, client: int, name: str, value: str) -> None:
        copy = self.copies[client].get(name)
        if copy is None:
            return
        current = self.model.get(name)
        try:
            updated = self.store.update("pods", relabelled(copy, v=value))
        except StatusError as err:
            if current is None:
                assert err.reason == "NotFound"
            else:
                assert err.reason == "Conflict" and rv(current) != rv(copy)
            return
        assert current is not None and rv(current) == rv(copy), "a stale copy must not overwrite"
        self.copies[client][name] = updated
        if copy["metadata"]["labels"] == {"v": value}:
            assert updated == current, "a no-op update keeps the object and its resourceVersion"
            return
        self.model[name] = updated
        self._committed("MODIFIED", updated)

    @rule(client=CLIENTS, name=NAMES, guarded=st.booleans())
    def delete(self, client: int, name: str, guarded: bool) -> None:
        copy = self.copies[client].get(name)
        precondition = copy["metadata"]["resourceVersion"] if guarded and copy else None
        current = self.model.get(name)
        try:
            gone = self.store.delete("pods", "default", name, resource_version=precondition)
        except StatusError as err:
            if current is None:
                assert err.reason == "NotFound"
            else:
                assert err.reason == "Conflict" and precondition != current["metadata"]["resourceVersion"]
            return
        assert current is not None
        del self.model[name]
        self.copies[client].pop(name, None)
        self._committed("DELETED", gone)

    @invariant()
    def contents_match_the_model(self) -> None:
        listed = self.store.list("pods")
        assert {o["metadata"]["name"]: o for o in listed.items} == self.model
        assert int(listed.resource_version) >= (self.committed[-1][2] if self.committed else self.start)

    def teardown(self) -> None:
        try:
            self.store.create("pods", pod("zz-end"))
            seen = collect(self.stream, "zz-end")[:-1]
            assert [
                (e.type, e.object["metadata"]["name"], e.resource_version) for e in seen
            ] == self.committed
        finally:
            self.stream.stop()
            self.store.close()


def test_writers_with_preconditions(open_store: OpenStore, request: pytest.FixtureRequest) -> None:
    backend = request.node.callspec.params["open_store"]

    opener = open_store

    class Machine(WritersWithPreconditions):
        open_store = staticmethod(opener)

    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=EXAMPLES[backend],
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
