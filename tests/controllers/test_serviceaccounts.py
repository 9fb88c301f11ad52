"""The serviceaccounts controller: the `default` ServiceAccount in every active namespace, created
again when deleted, none in a terminating namespace (serviceaccounts_controller_test.go cases)."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.workload_builders import make_env
from kubetaint.controllers.serviceaccounts import ServiceAccountsController

JSON = dict[str, Any]


def namespace(name: str, phase: str = "Active") -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": phase}}


def accounts(store: Any) -> list[tuple[str, str]]:
    return sorted(
        (o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("serviceaccounts").items
    )


def start() -> tuple[Any, Any]:
    clock, store, _ = make_env()
    ServiceAccountsController(store, clock).start()
    return clock, store


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        pytest.param("Active", [("team-a", "default")], id="an active namespace gets its default account"),
        pytest.param("Terminating", [], id="a terminating namespace gets none"),
    ],
)
def test_a_new_namespace(phase: str, expected: list[tuple[str, str]]) -> None:
    clock, store = start()
    store.create("namespaces", namespace("team-a", phase))
    clock.advance(0)
    assert accounts(store) == expected


def test_namespaces_existing_at_start_get_theirs() -> None:
    clock, store, _ = make_env()
    store.create("namespaces", namespace("a"))
    store.create("namespaces", namespace("b"))
    ServiceAccountsController(store, clock).start()
    clock.advance(0)
    assert accounts(store) == [("a", "default"), ("b", "default")]


def test_a_deleted_default_account_comes_back() -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    store.delete("serviceaccounts", "a", "default")
    clock.advance(0)
    assert accounts(store) == [("a", "default")]


def test_an_existing_account_is_kept_as_it_is() -> None:
    clock, store = start()
    mine = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": "a", "labels": {"mine": "yes"}},
    }
    store.create("serviceaccounts", mine)
    store.create("namespaces", namespace("a"))
    clock.advance(0)
    assert store.get("serviceaccounts", "a", "default")["metadata"]["labels"] == {"mine": "yes"}


def test_other_accounts_deleted_are_not_recreated() -> None:
    clock, store = start()
    store.create("namespaces", namespace("a"))
    other = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder", "namespace": "a"}}
    store.create("serviceaccounts", other)
    clock.advance(0)
    store.delete("serviceaccounts", "a", "builder")
    clock.advance(0)
    assert accounts(store) == [("a", "default")]


def test_a_create_the_api_server_refuses_is_retried_with_backoff() -> None:
    from kubetaint.api.errors import StatusError
    from kubetaint.store.memory import MemoryStore

    clock, _, _ = make_env()
    refusals = [True, True]

    class Refusing(MemoryStore):
        def create(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
            if resource == "serviceaccounts" and refusals and refusals.pop():
                raise StatusError(500, "InternalError", "etcd is down")
            return super().create(resource, obj, dry_run=dry_run)

    store = Refusing(clock)
    ServiceAccountsController(store, clock).start()
    store.create("namespaces", namespace("a"))
    clock.advance(0.01)
    assert accounts(store) == []  # refused at 0 and at 5 ms; retried at 15 ms
    clock.advance(0.01)
    assert accounts(store) == [("a", "default")]
