"""When the storage of a CRD's resources is torn down (customresource_handler.go's
removeDeadStorage and updateCustomResourceDefinition): on the CRD's deletion, on a change of its
spec or accepted names, never on a status change such as the Terminating condition."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.crd import CRDS, first_delete, resource_for
from kubetaint.apiserver.crd_teardown import StorageTeardowns
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .test_custom_resources_http import crontab_crd

JSON = dict[str, Any]


def established(crd: JSON) -> JSON:
    status = {
        "acceptedNames": {"plural": "crontabs", "kind": "CronTab"},
        "conditions": [{"type": "Established", "status": "True"}],
    }
    return {**crd, "status": status}


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore(VirtualClock())
    store.create(CRDS, established(crontab_crd()))
    return store


def _served(store: MemoryStore) -> Any:
    res = resource_for(store.get(CRDS, "", "crontabs.stable.example.com"), "v1")
    assert res is not None
    return res


def _changed(store: MemoryStore, change: Any) -> None:
    crd = store.get(CRDS, "", "crontabs.stable.example.com")
    store.update(CRDS, change(crd))


@pytest.mark.parametrize(
    ("change", "ends"),
    [
        pytest.param(
            lambda crd: {**crd, "spec": {**crd["spec"], "names": {**crd["spec"]["names"], "shortNames": []}}},
            True,
            id="a spec change ends the watch",
        ),
        pytest.param(
            lambda crd: {
                **crd,
                "status": {**crd["status"], "acceptedNames": {"plural": "crontabs", "kind": "Other"}},
            },
            True,
            id="an accepted names change ends the watch",
        ),
        pytest.param(
            lambda crd: first_delete(crd, "2026-01-01T00:00:00Z"),
            False,
            id="the first delete's Terminating condition keeps it",
        ),
        pytest.param(
            lambda crd: {**crd, "metadata": {**crd["metadata"], "labels": {"a": "b"}}},
            False,
            id="a label keeps it",
        ),
    ],
)
def test_a_crd_change_ends_the_watches_its_storage_serves(
    store: MemoryStore, change: Any, ends: bool
) -> None:
    teardowns = StorageTeardowns(store)
    end, forget = teardowns.watch(_served(store))
    woken: list[bool] = []
    end.wake_with(lambda: woken.append(True))
    _changed(store, change)
    assert end.is_set is ends and woken == ([True] if ends else [])
    forget()


def test_the_crds_deletion_ends_the_watch_and_a_later_watch_of_the_old_storage_ends_at_once(
    store: MemoryStore,
) -> None:
    teardowns = StorageTeardowns(store)
    served = _served(store)
    end, _ = teardowns.watch(served)
    store.delete(CRDS, "", "crontabs.stable.example.com")
    assert end.is_set
    late, _ = teardowns.watch(served)
    assert late.is_set


def test_a_forgotten_watch_is_not_ended(store: MemoryStore) -> None:
    teardowns = StorageTeardowns(store)
    end, forget = teardowns.watch(_served(store))
    forget()
    store.delete(CRDS, "", "crontabs.stable.example.com")
    assert not end.is_set
