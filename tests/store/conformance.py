"""The store contract, checked the same way on every backend (memory, SQLite, etcd).

`test_conformance.py` runs `Conformance` once per backend through the `open_store` fixture
(see conftest.py). Backends differ in their absolute resourceVersions (etcd starts at its own
revision) and in when in-process subscribers run (etcd feeds them from a watch thread), so the
tests compare versions relative to each other and wait for asynchronous deliveries with
`eventually`/`collect` (a bounded wait for a condition, never a timing assertion).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, Store, Watch, WatchEvent
from store.commits import update_many

UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
WAIT = 15.0


class OpenStore(Protocol):
    def __call__(self, *, history_size: int = ...) -> Store: ...


def pod(
    name: str, node: str = "", labels: dict[str, str] | None = None, namespace: str = "default", **status: Any
) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
        "status": dict(status),
    }


def node(name: str, **labels: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}}


def edited(obj: JSON, **meta: Any) -> JSON:
    """A copy of a stored object with some metadata fields replaced (None removes one)."""
    new_meta = {**obj["metadata"], **meta}
    return {**obj, "metadata": {k: v for k, v in new_meta.items() if v is not None}}


def relabelled(obj: JSON, **labels: str) -> JSON:
    return edited(obj, labels=labels)


def moved(obj: JSON, node_name: str) -> JSON:
    return {**obj, "spec": {**obj["spec"], "nodeName": node_name}}


def rv(obj: JSON) -> int:
    return int(obj["metadata"]["resourceVersion"])


def names(items: list[JSON]) -> list[str]:
    return [o["metadata"]["name"] for o in items]


def summary(events: list[WatchEvent]) -> list[tuple[str, str]]:
    return [(e.type, e.object["metadata"]["name"]) for e in events]


def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def collect(stream: Watch, until: str) -> list[WatchEvent]:
    """Events of `stream` up to and including the first one about object `until`."""
    events: list[WatchEvent] = []
    deadline = time.monotonic() + WAIT
    while not any(e.object["metadata"]["name"] == until for e in events):
        if time.monotonic() > deadline:
            raise AssertionError(f"no event for {until!r}; got {summary(events)}")
        events.extend(stream.wait(0.2))
    return events


def status_of(call: Callable[[], object]) -> StatusError:
    with pytest.raises(StatusError) as err:
        call()
    return err.value


class Conformance:
    """Every backend must pass these unchanged."""

    # create / get ----------------------------------------------------------------------------

    def test_create_sets_system_metadata(self, open_store: OpenStore) -> None:
        store = open_store()
        before = store.current_resource_version()
        created = store.create("pods", pod("a"))
        meta = created["metadata"]
        assert UID.match(meta["uid"])
        assert meta["creationTimestamp"] == "2026-01-01T00:00:00Z"
        assert meta["generation"] == 1
        assert rv(created) > before
        assert store.current_resource_version() == rv(created)
        assert store.get("pods", "default", "a") == created

    def test_objects_without_generation_get_none(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("nodes", node("n1"))
        assert "generation" not in created["metadata"]
        assert "generation" not in store.create("configmaps", pod("cm"))["metadata"]

    def test_create_keeps_fields_the_store_does_not_model(self, open_store: OpenStore) -> None:
        store = open_store()
        body = {**pod("a"), "x-unknown": {"nested": [1, 2.5, None, True, "ü"]}}
        store.create("pods", body)
        assert store.get("pods", "default", "a")["x-unknown"] == {"nested": [1, 2.5, None, True, "ü"]}

    def test_create_ignores_a_resource_version_in_the_body(self, open_store: OpenStore) -> None:
        store = open_store()
        first = store.create("pods", pod("a"))
        second = store.create("pods", edited(pod("b"), resourceVersion=first["metadata"]["resourceVersion"]))
        assert rv(second) > rv(first)
        assert store.get("pods", "default", "b")["metadata"]["resourceVersion"] == str(rv(second))

    def test_each_write_gets_a_larger_resource_version(self, open_store: OpenStore) -> None:
        store = open_store()
        a = store.create("pods", pod("a"))
        n = store.create("nodes", node("n1"))
        a2 = store.update("pods", relabelled(a, x="1"))
        gone = store.delete("nodes", "", "n1")
        assert rv(a) < rv(n) < rv(a2) < rv(gone) == store.current_resource_version()

    def test_duplicate_create_is_already_exists(self, open_store: OpenStore) -> None:
        store = open_store()
        store.create("pods", pod("a"))
        rv_before = store.current_resource_version()
        err = status_of(lambda: store.create("pods", pod("a")))
        assert (err.code, err.reason, err.message) == (409, "AlreadyExists", 'pods "a" already exists')
        assert err.to_status()["details"] == {"name": "a", "kind": "pods"}
        assert store.current_resource_version() == rv_before

    def test_same_name_in_other_namespace_or_group_is_distinct(self, open_store: OpenStore) -> None:
        store = open_store()
        store.create("pods", pod("a"))
        store.create("pods", pod("a", namespace="other"))
        store.create("deployments.apps", {"metadata": {"name": "a", "namespace": "default"}, "spec": {}})
        assert len(store.list("pods").items) == 2
        assert len(store.list("deployments.apps").items) == 1

    def test_group_qualified_already_exists_message(self, open_store: OpenStore) -> None:
        store = open_store()
        body = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1}}
        store.create("deployments.apps", body)
        err = status_of(lambda: store.create("deployments.apps", body))
        assert err.message == 'deployments.apps "web" already exists'
        assert err.to_status()["details"] == {"name": "web", "group": "apps", "kind": "deployments"}

    @pytest.mark.parametrize(
        "call",
        [
            pytest.param(lambda s: s.get("pods", "default", "nope"), id="get of a missing object"),
            pytest.param(lambda s: s.update("pods", pod("nope")), id="update of a missing object"),
            pytest.param(lambda s: s.delete("pods", "default", "nope"), id="delete of a missing object"),
            pytest.param(lambda s: s.get("pods", "elsewhere", "nope"), id="get in an unknown namespace"),
        ],
    )
    def test_missing_objects_are_not_found(
        self, open_store: OpenStore, call: Callable[[Store], object]
    ) -> None:
        store = open_store()
        store.create("pods", pod("a"))
        err = status_of(lambda: call(store))
        assert (err.code, err.reason, err.message) == (404, "NotFound", 'pods "nope" not found')

    def test_create_without_name_is_rejected(self, open_store: OpenStore) -> None:
        err = status_of(lambda: open_store().create("pods", {"metadata": {"namespace": "default"}}))
        assert err.code == 400

    # update ------------------------------------------------------------------------------------

    def test_stale_update_conflicts_with_upstream_message(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        store.update("pods", relabelled(created, x="1"))
        err = status_of(lambda: store.update("pods", relabelled(created, x="2")))
        assert (err.code, err.reason) == (409, "Conflict")
        assert err.message == (
            'Operation cannot be fulfilled on pods "a": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )
        assert store.get("pods", "default", "a")["metadata"]["labels"] == {"x": "1"}

    def test_update_many_writes_like_one_update_after_another(self, open_store: OpenStore) -> None:
        store = open_store()
        a, b, c = (store.create("pods", pod(n)) for n in ("a", "b", "c"))
        events: list[WatchEvent] = []
        store.subscribe(each_event(events.append))
        stored, err = update_many(store, "pods", [relabelled(a, x="1"), {**b}, relabelled(c, x="3")])
        assert err is None
        assert [o["metadata"]["labels"] for o in stored] == [{"x": "1"}, {}, {"x": "3"}]
        assert stored[1] == b, "a no-op update keeps the stored object"
        assert rv(stored[2]) > rv(stored[0]) > rv(c)
        assert [store.get("pods", "default", n) for n in ("a", "c")] == [stored[0], stored[2]]
        eventually(lambda: len(events) >= 2, "the two events")
        assert [(e.type, e.object["metadata"]["name"], e.resource_version) for e in events] == [
            ("MODIFIED", "a", rv(stored[0])),
            ("MODIFIED", "c", rv(stored[2])),
        ]

    @pytest.mark.parametrize(
        ("breaking", "code"),
        [
            pytest.param(
                lambda o: edited(o, resourceVersion="1"), 409, id="a stale resourceVersion conflicts"
            ),
            pytest.param(lambda o: edited(o, name="missing"), 404, id="a missing object is not found"),
        ],
    )
    def test_update_many_stops_at_the_first_failure(
        self, open_store: OpenStore, breaking: Callable[[JSON], JSON], code: int
    ) -> None:
        store = open_store()
        a, b, c = (store.create("pods", pod(n)) for n in ("a", "b", "c"))
        store.update("pods", relabelled(b, y="0"))
        stored, err = update_many(store, "pods", [relabelled(a, x="1"), breaking(b), relabelled(c, x="3")])
        assert err is not None and err.code == code
        assert [o["metadata"]["name"] for o in stored] == ["a"]
        assert store.get("pods", "default", "a")["metadata"]["labels"] == {"x": "1"}
        assert store.get("pods", "default", "c") == c, "nothing after the failure is written"

    def test_update_without_resource_version_is_unconditional(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        store.update("pods", relabelled(created, x="1"))
        forced = store.update("pods", edited(relabelled(created, x="2"), resourceVersion=None))
        assert forced["metadata"]["labels"] == {"x": "2"}
        assert store.get("pods", "default", "a") == forced

    def test_update_with_another_uid_fails_its_precondition(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        err = status_of(lambda: store.update("pods", edited(created, uid="other", labels={"x": "1"})))
        assert (err.code, err.reason) == (409, "Conflict")
        assert err.message == (
            'Operation cannot be fulfilled on pods "a": Precondition failed: '
            f"UID in precondition: other, UID in object meta: {created['metadata']['uid']}"
        )

    def test_noop_update_keeps_the_resource_version(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        events: list[WatchEvent] = []
        store.subscribe(each_event(events.append))
        same = store.update("pods", {**created})
        assert rv(same) == rv(created) == store.current_resource_version()
        assert same == created
        marker = store.create("pods", pod("marker"))
        eventually(lambda: len(events) >= 1, "the marker event")
        assert summary(events) == [("ADDED", "marker")] and events[0].resource_version == rv(marker)

    def test_update_keeps_uid_and_creation_timestamp(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        body = edited(created, uid=None, creationTimestamp="2000-01-01T00:00:00Z", labels={"x": "1"})
        updated = store.update("pods", body)
        assert updated["metadata"]["uid"] == created["metadata"]["uid"]
        assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]

    @pytest.mark.parametrize(
        ("change", "generation"),
        [
            pytest.param(lambda o: relabelled(o, x="1"), 1, id="a metadata change keeps the generation"),
            pytest.param(lambda o: {**o, "status": {"phase": "Running"}}, 1, id="a status change keeps it"),
            pytest.param(lambda o: moved(o, "n1"), 2, id="a spec change bumps it"),
            pytest.param(lambda o: edited(o, generation=7), 1, id="a generation in the body is ignored"),
        ],
    )
    def test_generation_follows_spec_changes(
        self, open_store: OpenStore, change: Callable[[JSON], JSON], generation: int
    ) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        assert store.update("pods", change(created))["metadata"]["generation"] == generation

    def test_update_returns_what_get_returns(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        updated = store.update("pods", {**relabelled(created, x="1"), "status": {"phase": "Running"}})
        assert store.get("pods", "default", "a") == updated
        assert rv(updated) == store.current_resource_version()

    # delete ------------------------------------------------------------------------------------

    def test_delete_returns_the_object_at_its_deletion_version(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        gone = store.delete("pods", "default", "a")
        assert rv(gone) > rv(created) and rv(gone) == store.current_resource_version()
        assert edited(gone, resourceVersion=None) == edited(created, resourceVersion=None)
        assert status_of(lambda: store.get("pods", "default", "a")).code == 404
        assert store.create("pods", pod("a"))["metadata"]["uid"] != created["metadata"]["uid"]

    def test_delete_with_wrong_uid_fails_its_precondition(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        err = status_of(lambda: store.delete("pods", "default", "a", uid="u-1"))
        assert (err.code, err.reason) == (409, "Conflict")
        assert err.message == (
            'Operation cannot be fulfilled on pods "a": Precondition failed: '
            f"UID in precondition: u-1, UID in object meta: {created['metadata']['uid']}"
        )
        store.delete("pods", "default", "a", uid=created["metadata"]["uid"])

    def test_delete_with_stale_resource_version_fails_its_precondition(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        updated = store.update("pods", relabelled(created, x="1"))
        stale = created["metadata"]["resourceVersion"]
        err = status_of(lambda: store.delete("pods", "default", "a", resource_version=stale))
        assert err.message == (
            'Operation cannot be fulfilled on pods "a": Precondition failed: '
            f"ResourceVersion in precondition: {stale}, "
            f"ResourceVersion in object meta: {updated['metadata']['resourceVersion']}"
        )
        store.delete("pods", "default", "a", resource_version=updated["metadata"]["resourceVersion"])
        assert store.list("pods").items == []

    def test_dry_run_changes_nothing(self, open_store: OpenStore) -> None:
        store = open_store()
        created = store.create("pods", pod("a"))
        before = store.current_resource_version()
        preview = store.create("pods", pod("b"), dry_run=True)
        assert preview["metadata"]["name"] == "b"
        assert store.update("pods", relabelled(created, x="1"), dry_run=True)["metadata"]["labels"] == {
            "x": "1"
        }
        store.delete("pods", "default", "a", dry_run=True)
        assert store.current_resource_version() == before
        assert store.list("pods").items == [created]

    # list ----------------------------------------------------------------------------------------

    def test_list_is_in_key_order_with_the_current_resource_version(self, open_store: OpenStore) -> None:
        store = open_store()
        for namespace, name in [("b", "x"), ("a", "z"), ("a", "y"), ("c", "a")]:
            store.create("pods", pod(name, namespace=namespace))
        store.create("nodes", node("n1"))
        listed = store.list("pods")
        assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed.items] == [
            ("a", "y"),
            ("a", "z"),
            ("b", "x"),
            ("c", "a"),
        ]
        assert listed.resource_version == str(store.current_resource_version())
        assert listed.continue_token is None
        assert names(store.list("pods", namespace="a").items) == ["y", "z"]
        assert names(store.list("nodes").items) == ["n1"]
        assert store.list("services").items == []

    def test_lists_come_in_etcd_key_order(self, open_store: OpenStore) -> None:
        store = open_store()
        for namespace, name in [
            ("team", "b"),
            ("team-a", "z"),
            ("team", "a"),
            ("team.x", "m"),
            ("teams", "k"),
        ]:
            store.create("pods", pod(name, "n1", namespace=namespace))
        expected = [("team-a", "z"), ("team.x", "m"), ("team", "a"), ("team", "b"), ("teams", "k")]
        for selector in (None, "spec.nodeName=n1"):
            listed = store.list("pods", field_selector=selector)
            assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed.items] == expected
            first = store.list("pods", field_selector=selector, limit=2)
            rest = store.list("pods", field_selector=selector, continue_token=first.continue_token)
            assert [
                (o["metadata"]["namespace"], o["metadata"]["name"]) for o in first.items + rest.items
            ] == expected
        assert names(store.list("pods", namespace="team").items) == ["a", "b"]

    def test_list_of_an_empty_resource_still_has_a_resource_version(self, open_store: OpenStore) -> None:
        store = open_store()
        store.create("pods", pod("a"))
        assert store.list("nodes").resource_version == str(store.current_resource_version())

    def test_paging_visits_every_object_once(self, open_store: OpenStore) -> None:
        store = open_store()
        for i in range(7):
            store.create("pods", pod(f"p{i}", namespace="ns1" if i % 2 else "ns2"))
        pages: list[list[str]] = []
        token: str | None = None
        while True:
            page = store.list("pods", limit=3, continue_token=token)
            pages.append(names(page.items))
            token = page.continue_token
            if token is None:
                break
        assert pages == [["p1", "p3", "p5"], ["p0", "p2", "p4"], ["p6"]]

    def test_paging_with_an_exact_fit_ends_without_a_token(self, open_store: OpenStore) -> None:
        store = open_store()
        for name in "abcd":
            store.create("pods", pod(name))
        first = store.list("pods", limit=2)
        second = store.list("pods", limit=2, continue_token=first.continue_token)
        assert names(second.items) == ["c", "d"]
        assert (
            second.continue_token is None
            or store.list("pods", continue_token=second.continue_token).items == []
        )

    def test_paging_combines_with_selectors(self, open_store: OpenStore) -> None:
        store = open_store()
        for i in range(6):
            store.create("pods", pod(f"p{i}", labels={"even": str(i % 2 == 0).lower()}))
        first = store.list("pods", label_selector="even=true", limit=2)
        rest = store.list("pods", label_selector="even=true", limit=2, continue_token=first.continue_token)
        assert (names(first.items), names(rest.items)) == (["p0", "p2"], ["p4"])

    def test_a_malformed_continue_token_is_a_bad_request(self, open_store: OpenStore) -> None:
        store = open_store()
        err = status_of(lambda: store.list("pods", limit=1, continue_token="not-a-token"))
        assert (err.code, err.reason) == (400, "BadRequest")

    @pytest.mark.parametrize(
        ("selector", "expected"),
        [
            pytest.param("app=web", ["a"], id="equality"),
            pytest.param("app!=web", ["b", "c", "d"], id="inequality includes objects without the key"),
            pytest.param("app in (db,cache)", ["b", "c"], id="set membership"),
            pytest.param("app notin (db)", ["a", "c", "d"], id="set exclusion"),
            pytest.param("tier", ["a", "b"], id="existence"),
            pytest.param("!tier", ["c", "d"], id="non-existence"),
            pytest.param("app=db,tier=back", ["b"], id="conjunction"),
            pytest.param("", ["a", "b", "c", "d"], id="empty selects everything"),
        ],
    )
    def test_label_selectors(self, open_store: OpenStore, selector: str, expected: list[str]) -> None:
        store = open_store()
        store.create("pods", pod("a", labels={"app": "web", "tier": "front"}))
        store.create("pods", pod("b", labels={"app": "db", "tier": "back"}))
        store.create("pods", pod("c", labels={"app": "cache"}))
        store.create("pods", pod("d"))
        assert names(store.list("pods", label_selector=selector).items) == expected

    @pytest.mark.parametrize(
        ("selector", "expected"),
        [
            pytest.param("spec.nodeName=n1", ["a", "c"], id="pods on a node use the node index"),
            pytest.param("spec.nodeName=", ["d"], id="unscheduled pods"),
            pytest.param("spec.nodeName!=n1", ["b", "d"], id="pods elsewhere"),
            pytest.param("spec.nodeName=n1,status.phase=Running", ["c"], id="node index plus another field"),
            pytest.param("metadata.name=b", ["b"], id="by name"),
            pytest.param("status.phase!=Running", ["a", "b", "d"], id="phase inequality"),
            pytest.param("spec.nodeName=nowhere", [], id="a node without pods"),
        ],
    )
    def test_field_selectors(self, open_store: OpenStore, selector: str, expected: list[str]) -> None:
        store = open_store()
        store.create("pods", pod("a", "n1", phase="Pending"))
        store.create("pods", pod("b", "n2"))
        store.create("pods", pod("c", "n1", phase="Running"))
        store.create("pods", pod("d"))
        assert names(store.list("pods", field_selector=selector).items) == expected

    def test_node_index_follows_moves_and_deletes(self, open_store: OpenStore) -> None:
        store = open_store()
        a = store.create("pods", pod("a"))
        store.create("pods", pod("b", "n1", namespace="other"))
        store.update("pods", moved(a, "n1"))
        on_n1 = store.list("pods", field_selector="spec.nodeName=n1")
        assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in on_n1.items] == [
            ("default", "a"),
            ("other", "b"),
        ]
        assert names(store.list("pods", namespace="other", field_selector="spec.nodeName=n1").items) == ["b"]
        store.delete("pods", "other", "b")
        assert names(store.list("pods", field_selector="spec.nodeName=n1").items) == ["a"]
        assert store.list("pods", field_selector="spec.nodeName=").items == []

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            pytest.param({"field_selector": "spec.foo=1"}, "field label not supported: spec.foo", id="field"),
            pytest.param({"label_selector": "a in b"}, None, id="label syntax"),
        ],
    )
    def test_bad_selectors_are_bad_requests(
        self, open_store: OpenStore, kwargs: dict[str, str], message: str | None
    ) -> None:
        err = status_of(lambda: open_store().list("pods", **kwargs))  # type: ignore[arg-type]
        assert err.code == 400
        assert message is None or err.message == message

    # watch ---------------------------------------------------------------------------------------

    def test_watch_from_a_version_delivers_every_later_change_in_order(self, open_store: OpenStore) -> None:
        store = open_store()
        a = store.create("pods", pod("a"))
        start = store.current_resource_version()
        b = store.create("pods", pod("b"))
        a2 = store.update("pods", relabelled(a, x="1"))
        store.create("nodes", node("n1"))
        gone = store.delete("pods", "default", "b")
        stream = store.watch("pods", resource_version=str(start))
        store.create("pods", pod("c"))
        events = collect(stream, "c")
        stream.stop()
        assert summary(events) == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "c")]
        versions = [e.resource_version for e in events]
        assert versions[:3] == [rv(b), rv(a2), rv(gone)] and versions == sorted(versions)
        assert [int(e.object["metadata"]["resourceVersion"]) for e in events] == versions
        assert events[1].old_object is not None and events[1].old_object["metadata"]["labels"] == {}
        assert events[2].object["metadata"]["resourceVersion"] == str(rv(gone))

    def test_watch_from_now_sees_only_later_changes(self, open_store: OpenStore) -> None:
        store = open_store()
        store.create("pods", pod("a"))
        stream = store.watch("pods", resource_version=str(store.current_resource_version()))
        store.create("pods", pod("b"))
        assert summary(collect(stream, "b")) == [("ADDED", "b")]
        stream.stop()

    @pytest.mark.parametrize("start", [None, "0"], ids=["unset", "zero"])
    def test_watch_without_a_version_starts_with_the_current_state(
        self, open_store: OpenStore, start: str | None
    ) -> None:
        store = open_store()
        a = store.create("pods", pod("a", labels={"app": "web"}))
        store.update("pods", relabelled(a, app="web", v="2"))
        store.create("pods", pod("b"))
        store.create("pods", pod("c", labels={"app": "web"}))
        store.delete("pods", "default", "b")
        stream = store.watch("pods", resource_version=start, label_selector="app=web")
        initial = stream.wait(WAIT)
        assert summary(initial) == [("ADDED", "a"), ("ADDED", "c")]
        assert initial[0].object == store.get("pods", "default", "a")
        store.create("pods", pod("d", labels={"app": "web"}))
        assert summary(collect(stream, "d")) == [("ADDED", "d")]
        stream.stop()

    def test_watch_filters_by_namespace(self, open_store: OpenStore) -> None:
        store = open_store()
        start = str(store.current_resource_version())
        stream = store.watch("pods", namespace="ns1", resource_version=start)
        store.create("pods", pod("x", namespace="ns2"))
        store.create("pods", pod("y", namespace="ns1"))
        assert summary(collect(stream, "y")) == [("ADDED", "y")]
        stream.stop()

    def test_label_watch_translates_entering_and_leaving(self, open_store: OpenStore) -> None:
        store = open_store()
        a = store.create("pods", pod("a", labels={"app": "web"}))
        stream = store.watch("pods", resource_version=str(rv(a)), label_selector="app=web")
        a2 = store.update("pods", relabelled(a, app="db"))
        a3 = store.update("pods", relabelled(a2, app="db", x="1"))
        a4 = store.update("pods", relabelled(a3, app="web"))
        a5 = store.update("pods", relabelled(a4, app="web", x="2"))
        end = store.create("pods", pod("end", labels={"app": "web"}))
        events = collect(stream, "end")
        assert [(e.type, e.resource_version) for e in events] == [
            ("DELETED", rv(a2)),
            ("ADDED", rv(a4)),
            ("MODIFIED", rv(a5)),
            ("ADDED", rv(end)),
        ]
        assert events[0].object["metadata"]["labels"] == {"app": "db"}
        stream.stop()

    def test_node_field_watch_sees_pods_scheduled_onto_and_off_a_node(self, open_store: OpenStore) -> None:
        store = open_store()
        a = store.create("pods", pod("a"))
        stream = store.watch("pods", resource_version=str(rv(a)), field_selector="spec.nodeName=n1")
        a2 = store.update("pods", moved(a, "n1"))
        store.update("pods", moved(a2, "n2"))
        store.create("pods", pod("end", "n1"))
        assert summary(collect(stream, "end")) == [("ADDED", "a"), ("DELETED", "a"), ("ADDED", "end")]
        stream.stop()

    def test_a_stopped_watch_gets_nothing_more(self, open_store: OpenStore) -> None:
        store = open_store()
        first = store.watch("pods", resource_version=str(store.current_resource_version()))
        second = store.watch("pods", resource_version=str(store.current_resource_version()))
        first.stop()
        first.stop()
        assert first.stopped and not second.stopped
        store.create("pods", pod("a"))
        collect(second, "a")
        assert first.drain() == []
        second.stop()

    def test_watch_with_a_malformed_version_is_a_bad_request(self, open_store: OpenStore) -> None:
        err = status_of(lambda: open_store().watch("pods", resource_version="abc"))
        assert (err.code, err.reason) == (400, "BadRequest")

    def test_compacted_history_expires_old_versions(self, open_store: OpenStore) -> None:
        store = open_store(history_size=3)
        first = store.create("pods", pod("p0"))
        for i in range(1, 12):
            store.create("pods", pod(f"p{i}"))
        err = status_of(lambda: store.watch("pods", resource_version=str(rv(first))))
        assert (err.code, err.reason) == (410, "Expired")
        match = re.fullmatch(r"too old resource version: (\d+) \((\d+)\)", err.message)
        assert (
            match
            and int(match[1]) == rv(first)
            and rv(first) < int(match[2]) < store.current_resource_version()
        )
        recent = store.current_resource_version() - 2
        stream = store.watch("pods", resource_version=str(recent))
        assert summary(collect(stream, "p11")) == [("ADDED", "p10"), ("ADDED", "p11")]
        stream.stop()

    # subscribe ----------------------------------------------------------------------------------

    def test_subscribers_see_every_resource_in_commit_order(self, open_store: OpenStore) -> None:
        store = open_store()
        seen: list[tuple[str, str, str, int]] = []
        store.subscribe(
            each_event(
                lambda e: seen.append((e.type, e.resource, e.object["metadata"]["name"], e.resource_version))
            )
        )
        a = store.create("pods", pod("a"))
        n = store.create("nodes", node("n1"))
        a2 = store.update("pods", moved(a, "n1"))
        gone = store.delete("nodes", "", "n1")
        eventually(lambda: len(seen) >= 4, "four events")
        assert seen == [
            ("ADDED", "pods", "a", rv(a)),
            ("ADDED", "nodes", "n1", rv(n)),
            ("MODIFIED", "pods", "a", rv(a2)),
            ("DELETED", "nodes", "n1", rv(gone)),
        ]

    def test_handlers_writing_from_a_handler_keep_commit_order(self, open_store: OpenStore) -> None:
        store = open_store()
        seen: list[tuple[str, str]] = []
        other: list[str] = []

        def react(event: WatchEvent) -> None:
            name = event.object["metadata"]["name"]
            seen.append((event.type, name))
            if name == "a" and event.type == "ADDED":
                store.create("pods", pod("from-handler"))
                store.update("pods", relabelled(event.object, touched="yes"))

        store.subscribe(each_event(react))
        store.subscribe(each_event(lambda e: other.append(e.object["metadata"]["name"])))
        store.create("pods", pod("a"))
        eventually(lambda: len(seen) >= 3 and len(other) >= 3, "the handler's own writes")
        assert seen == [("ADDED", "a"), ("ADDED", "from-handler"), ("MODIFIED", "a")]
        assert other == ["a", "from-handler", "a"]

    def test_unsubscribed_handlers_get_nothing_more(self, open_store: OpenStore) -> None:
        store = open_store()
        gone: list[str] = []
        kept: list[str] = []
        unsubscribe = store.subscribe(each_event(lambda e: gone.append(e.object["metadata"]["name"])))
        store.subscribe(each_event(lambda e: kept.append(e.object["metadata"]["name"])))
        store.create("pods", pod("a"))
        eventually(lambda: gone == ["a"] and kept == ["a"], "the first event")
        unsubscribe()
        unsubscribe()
        store.create("pods", pod("b"))
        eventually(lambda: kept == ["a", "b"], "the second event")
        assert gone == ["a"]

    # concurrency ---------------------------------------------------------------------------------

    def test_concurrent_read_modify_write_loses_no_update(self, open_store: OpenStore) -> None:
        store = open_store()
        store.create(
            "configmaps", {"metadata": {"name": "counter", "namespace": "default"}, "data": {"n": "0"}}
        )
        workers, increments = 4, 15
        conflicts = []

        def work() -> None:
            for _ in range(increments):
                while True:
                    current = store.get("configmaps", "default", "counter")
                    body = {**current, "data": {"n": str(int(current["data"]["n"]) + 1)}}
                    try:
                        store.update("configmaps", body)
                        break
                    except StatusError as err:
                        assert err.reason == "Conflict"
                        conflicts.append(err)

        threads = [threading.Thread(target=work) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.get("configmaps", "default", "counter")["data"]["n"] == str(workers * increments)

    def test_concurrent_creates_get_distinct_increasing_versions(self, open_store: OpenStore) -> None:
        store = open_store()
        seen: list[int] = []
        store.subscribe(each_event(lambda e: seen.append(e.resource_version)))
        results: list[list[int]] = [[] for _ in range(4)]

        def work(index: int) -> None:
            for i in range(10):
                results[index].append(rv(store.create("pods", pod(f"w{index}-{i}"))))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        everything = sorted(v for per_thread in results for v in per_thread)
        assert len(set(everything)) == 40
        assert all(per_thread == sorted(per_thread) for per_thread in results)
        eventually(lambda: len(seen) >= 40, "forty events")
        assert seen == everything
