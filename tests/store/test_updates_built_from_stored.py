"""`MemoryStore.update_many` (and `update_group`) of an update built from the stored object (its
own spec object, and metadata copied with old's uid, creationTimestamp, resourceVersion and
generation objects: an adoption) stores without prepare_update exactly what prepare_update
makes of it: the same object, key order included, resourceVersion and event, or the same no-op.
Every other update (a value only equal to old's, a field missing, another spec object, a
generation that is no int) takes prepare_update."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store import memory
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from store.commits import update_many

Change = Callable[[JSON], JSON]
REFS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}]


def pod_body(name: str, **meta: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "labels": {"app": "a"}, **meta},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1"},
        "status": {"phase": "Running"},
    }


def with_meta(pod: JSON, **fields: Any) -> JSON:
    """`pod` with a copy of its metadata, `fields` set (a None value removes the field)."""
    meta = {**pod["metadata"], **fields}
    return {**pod, "metadata": {k: v for k, v in meta.items() if v is not None}}


def _copied(field: str) -> Change:
    """An adoption whose `field` value is an equal copy, not old's own object."""
    return lambda p: with_meta(p, ownerReferences=REFS, **{field: _copy_text(p["metadata"][field])})


def _copy_text(text: str) -> str:
    """An equal string that is another object (str() would return `text` itself)."""
    copied = (text + " ")[:-1]
    assert copied == text and copied is not text
    return copied


CHANGES = [
    pytest.param(
        lambda p: with_meta(p, ownerReferences=REFS), True, id="an adoption built from the stored pod"
    ),
    pytest.param(with_meta, True, id="a metadata copy changing nothing is a no-op"),
    pytest.param(
        lambda p: {**with_meta(p, ownerReferences=REFS), "status": {"phase": "Failed"}},
        True,
        id="an adoption with a status change",
    ),
    pytest.param(_copied("uid"), False, id="an equal uid copy"),
    pytest.param(_copied("creationTimestamp"), False, id="an equal creationTimestamp copy"),
    pytest.param(_copied("resourceVersion"), False, id="an equal resourceVersion copy"),
    pytest.param(
        lambda p: with_meta(p, resourceVersion="1"), False, id="a stale resourceVersion is a conflict"
    ),
    pytest.param(
        lambda p: with_meta(p, uid="other", ownerReferences=REFS), False, id="another uid is a conflict"
    ),
    pytest.param(
        lambda p: with_meta(p, creationTimestamp=None, ownerReferences=REFS),
        False,
        id="a missing creationTimestamp is set back (at the end of the metadata)",
    ),
    pytest.param(
        lambda p: with_meta(p, generation=None, ownerReferences=REFS),
        False,
        id="a missing generation is set back",
    ),
    pytest.param(
        lambda p: {**with_meta(p, ownerReferences=REFS), "spec": dict(p["spec"])},
        False,
        id="an equal spec copy keeps the generation",
    ),
    pytest.param(
        lambda p: {**with_meta(p), "spec": {**p["spec"], "activeDeadlineSeconds": 5}},
        False,
        id="a spec change bumps the generation",
    ),
]

#: how the stored pod's metadata differs from a plain created pod's
STORED = [
    pytest.param({}, id="a created pod"),
    pytest.param({"generation": True}, id="a generation stored as a bool"),
    pytest.param({"generation": 7}, id="a later generation"),
]


def _write(stored_meta: JSON, change: Change, *, grouped: bool) -> tuple[list[str], list[str], int]:
    """Create a pod (then give its metadata `stored_meta` behind prepare_update), write
    `change` of it (by update_group/update_many, or by `update`, which always prepares); the
    result or error, the events, and how often prepare_update ran for the write."""
    store = MemoryStore(VirtualClock(), uid_factory=lambda: "uid-1")
    created = store.create("pods", pod_body("p"))
    created["metadata"].update(stored_meta)  # (the store's own object: as if stored so)
    events: list[WatchEvent] = []
    store.subscribe(each_event(events.append), "pods")
    calls = [0]
    plain = memory.prepare_update

    def counting(resource: str, obj: JSON, old: JSON) -> JSON | None:
        calls[0] += 1
        return plain(resource, obj, old)

    memory.prepare_update = counting  # type: ignore[assignment]
    try:
        body = change(created)
        if grouped:
            done, failure = update_many(store, "pods", [body])
            shown = [f"{failure.code} {failure.message}"] if failure else [json.dumps(done[0])]
        else:
            try:
                shown = [json.dumps(store.update("pods", body))]
            except StatusError as err:
                shown = [f"{err.code} {err.message}"]
    finally:
        memory.prepare_update = plain  # type: ignore[assignment]
    seen = [json.dumps([e.type, e.resource_version, e.object, e.old_object]) for e in events]
    return shown, seen, calls[0]


@pytest.mark.parametrize("stored_meta", STORED)
@pytest.mark.parametrize(("change", "fast"), CHANGES)
def test_an_update_built_from_the_stored_object_stores_what_prepare_update_makes(
    stored_meta: JSON, change: Change, fast: bool
) -> None:
    shown, seen, prepared = _write(stored_meta, change, grouped=True)
    reference, reference_seen, _ = _write(stored_meta, change, grouped=False)
    assert (shown, seen) == (reference, reference_seen)  # json.dumps keeps the key order
    takes_fast_way = fast and type(stored_meta.get("generation", 1)) is int
    assert prepared == (0 if takes_fast_way else 1)


def test_a_generation_stored_as_a_bool_is_written_back_as_prepare_update_writes_it() -> None:
    shown, _, _ = _write({"generation": True}, lambda p: with_meta(p, ownerReferences=REFS), grouped=True)
    assert json.loads(shown[0])["metadata"]["generation"] == 1
