"""ControllerRevisions as pkg/controller/history does them (controller_history_test.go's
TestSortControllerRevisions and TestFindEqualRevisions as data, with revisions of distinct
names; HashControllerRevision's and CreateControllerRevision's rules on a real store)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock.virtual import VirtualClock
from kubetaint.controllers import history
from kubetaint.controllers.history import History
from kubetaint.store.informer import Informer
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
SET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "ss1", "namespace": "default", "uid": "ss1"},
}


def _revision(name: str, number: int, created: str = "2026-01-01T00:00:00Z", image: str = "nginx") -> JSON:
    data = {
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}, "$patch": "replace"}}
    }
    revision = history.new_controller_revision(SET, "apps/v1", "StatefulSet", {"foo": "bar"}, data, number, 0)
    revision["metadata"].update(name=name, creationTimestamp=created)
    return revision


REV1, REV2, REV3 = _revision("rev1", 1), _revision("rev2", 2), _revision("rev3", 3)
REV3_TIME2 = _revision("rev3-time2", 3, "2026-01-01T00:00:01Z")
REV3_TIME2_NAME2 = _revision("rev3-time2-name2", 3, "2026-01-01T00:00:01Z")


@pytest.mark.parametrize(
    ("revisions", "want"),
    [
        pytest.param([REV2, REV1, REV3], ["rev1", "rev2", "rev3"], id="out of order"),
        pytest.param([REV1, REV2, REV3], ["rev1", "rev2", "rev3"], id="sorted"),
        pytest.param([REV3, REV2, REV1], ["rev1", "rev2", "rev3"], id="reversed"),
        pytest.param(
            [REV3_TIME2_NAME2, REV3, REV3_TIME2, REV2, REV1],
            ["rev1", "rev2", "rev3", "rev3-time2", "rev3-time2-name2"],
            id="with ties",
        ),
        pytest.param([], [], id="empty"),
    ],
)
def test_sort_controller_revisions(revisions: list[JSON], want: list[str]) -> None:
    assert [r["metadata"]["name"] for r in history.sort_revisions(revisions)] == want


OTHER_REV1 = _revision("ss2-rev1", 1, image="httpd")
OTHER_REV2 = _revision("ss2-rev2", 2, image="redis")


@pytest.mark.parametrize(
    ("revisions", "want"),
    [
        pytest.param([REV1, OTHER_REV1, OTHER_REV2], ["rev1"], id="finds equivalent"),
        pytest.param([], [], id="finds nothing when empty"),
        pytest.param([OTHER_REV2, OTHER_REV1], [], id="finds nothing with no matches"),
    ],
)
def test_find_equal_revisions(revisions: list[JSON], want: list[str]) -> None:
    assert [r["metadata"]["name"] for r in history.find_equal_revisions(revisions, REV1)] == want


def test_a_revision_is_named_for_its_parent_and_the_hash_of_its_data_and_collision_count() -> None:
    data = REV1["data"]
    hash_ = history.hash_controller_revision(data, 0)
    assert REV1["metadata"]["labels"] == {"foo": "bar", history.HASH_LABEL: hash_}
    assert history.hash_controller_revision(data, 0) == hash_  # deterministic
    assert history.hash_controller_revision(data, 1) != hash_  # the probe is hashed
    assert history.hash_controller_revision(OTHER_REV1["data"], 0) != hash_
    assert set(hash_) <= set("bcdfghjklmnpqrstvwxz2456789")  # rand.SafeEncodeString's alphabet
    assert history.revision_name("x" * 300, hash_) == "x" * 223 + "-" + hash_
    (ref,) = REV1["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"], ref["controller"], ref["blockOwnerDeletion"]) == (
        "StatefulSet",
        "ss1",
        True,
        True,
    )


def test_the_next_revision_follows_the_last_one() -> None:
    assert history.next_revision([]) == 1
    assert history.next_revision([REV1, REV3]) == 4


def test_go_json_sorts_keys_and_escapes_html_as_go_does() -> None:
    assert (
        history.go_json({"b": "<&>", "a": [1, "\u2028"]})
        == b'{"a":[1,"\\u2028"],"b":"\\u003c\\u0026\\u003e"}'
    )


def test_creating_a_revision_whose_name_is_taken_by_other_data_raises_the_collision_count() -> None:
    store = MemoryStore(VirtualClock())
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    revisions = History(store, Informer(store, history.RESOURCE))
    created, collisions = revisions.create(SET, REV1, 0)
    assert (created["metadata"]["name"], collisions) == (
        f"ss1-{history.hash_controller_revision(REV1['data'], 0)}",
        0,
    )
    again, collisions = revisions.create(SET, REV1, 0)  # the same data: the existing revision
    assert (again["metadata"]["uid"], collisions) == (created["metadata"]["uid"], 0)
    squatter = {**OTHER_REV1, "metadata": {**OTHER_REV1["metadata"], "name": created["metadata"]["name"]}}
    store.delete(history.RESOURCE, "default", created["metadata"]["name"])
    store.create(history.RESOURCE, squatter)
    moved, collisions = revisions.create(SET, REV1, 0)
    assert collisions == 1
    assert moved["metadata"]["name"] == f"ss1-{history.hash_controller_revision(REV1['data'], 1)}"
