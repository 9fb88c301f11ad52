"""List requests over HTTP follow kube-apiserver's resourceVersion semantics: ListOptions
validation (apimachinery internalversion/validation ValidateListOptions, ported as data), the
watch cache's whole `resourceVersion=0` lists, exact and legacy-exact reads, 504 for versions in
the future, 410 for compacted ones, and `remainingItemCount` on paged lists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore
from kubetaint.store.snapshot import EXPIRED_LIST, INCONSISTENT_CONTINUE

from .builders import make_app, make_store, namespace, pod

PODS = "/api/v1/namespaces/default/pods"
INVALID = 'ListOptions.meta.k8s.io "" is invalid: '

# (query, message after INVALID) — upstream's TestValidateListOptions cases for list requests
LIST_OPTIONS = [
    pytest.param(
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        id="a match without a resourceVersion is forbidden",
    ),
    pytest.param(
        "resourceVersion=1&resourceVersionMatch=Exact&continue=abc",
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
        id="a match with continue is forbidden",
    ),
    pytest.param(
        "resourceVersion=1&resourceVersionMatch=foo",
        'resourceVersionMatch: Unsupported value: "foo": supported values: "Exact", "NotOlderThan", ""',
        id="an unknown match is not supported",
    ),
    pytest.param(
        "resourceVersion=0&resourceVersionMatch=Exact",
        'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        id="an exact match at version zero is forbidden",
    ),
    pytest.param(
        "resourceVersionMatch=foo&continue=abc",
        "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, "
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, "
        'resourceVersionMatch: Unsupported value: "foo": supported values: "Exact", "NotOlderThan", ""]',
        id="every broken rule is listed in upstream's order",
    ),
    pytest.param(
        "sendInitialEvents=true",
        "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        id="initial events are forbidden for a list",
    ),
]

WATCH_OPTIONS = [
    pytest.param(
        "sendInitialEvents=true",
        "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        id="initial events need NotOlderThan",
    ),
    pytest.param(
        "resourceVersion=1&resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
        "is provided",
        id="a watch match needs initial events",
    ),
    pytest.param(
        "sendInitialEvents=true&resourceVersionMatch=Exact",
        "[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, "
        'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
        id="a watch takes only NotOlderThan",
    ),
]


@pytest.fixture
def small_store(clock: VirtualClock) -> MemoryStore:
    store = make_store(clock, history_size=4)
    store.create("namespaces", namespace("default"))
    return store


@pytest.fixture
def small_client(small_store: MemoryStore, clock: VirtualClock) -> Iterator[TestClient]:
    with TestClient(make_app(small_store, clock), raise_server_exceptions=True) as test_client:
        yield test_client


def _pods(store: MemoryStore, *names: str) -> None:
    for name in names:
        store.create("pods", pod(name))


@pytest.mark.parametrize(("params", "message"), LIST_OPTIONS)
def test_invalid_list_options_are_refused_as_upstream(client: TestClient, params: str, message: str) -> None:
    response = client.get(f"{PODS}?{params}")
    assert response.status_code == 422
    body = response.json()
    assert (body["reason"], body["message"]) == ("Invalid", INVALID + message)
    assert body["details"]["kind"] == "ListOptions" and body["details"]["group"] == "meta.k8s.io"


def test_delete_collection_validates_its_list_options(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a")
    response = client.delete(f"{PODS}?resourceVersionMatch=Exact")
    assert response.status_code == 422
    assert response.json()["message"] == INVALID + LIST_OPTIONS[0].values[1]
    assert store.list("pods", namespace="default").items  # nothing deleted


@pytest.mark.parametrize(("params", "message"), WATCH_OPTIONS)
def test_invalid_watch_options_are_refused_as_upstream(client: TestClient, params: str, message: str) -> None:
    response = client.get(f"{PODS}?watch=true&{params}")
    assert response.status_code == 422
    assert response.json()["message"] == INVALID + message


def test_a_list_at_version_zero_is_served_whole(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a", "b", "c")
    body = client.get(f"{PODS}?resourceVersion=0&limit=1").json()
    assert [p["metadata"]["name"] for p in body["items"]] == ["a", "b", "c"]
    assert "continue" not in body["metadata"]
    assert body["metadata"]["resourceVersion"] == str(store.current_resource_version())


def test_pages_carry_the_remaining_item_count(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a", "b", "c")
    first = client.get(f"{PODS}?limit=1").json()
    assert first["metadata"]["remainingItemCount"] == 2
    second = client.get(f"{PODS}?limit=1&continue={first['metadata']['continue']}").json()
    assert second["metadata"]["remainingItemCount"] == 1
    selected = client.get(f"{PODS}?limit=1&labelSelector=x!=y").json()
    assert "remainingItemCount" not in selected["metadata"]  # etcd3 counts keys, not matches


def test_table_pages_carry_the_version_continue_and_remaining_count(
    client: TestClient, store: MemoryStore
) -> None:
    _pods(store, "a", "b", "c")
    accept = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    first = client.get(f"{PODS}?limit=2", headers=accept).json()
    store.create("pods", pod("b2"))
    rest = client.get(f"{PODS}?limit=2&continue={first['metadata']['continue']}", headers=accept).json()
    assert (first["kind"], first["metadata"]["remainingItemCount"]) == ("Table", 1)
    assert [row["cells"][0] for row in rest["rows"]] == ["c"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_later_pages_list_the_first_pages_version(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a", "b", "c")
    first = client.get(f"{PODS}?limit=1").json()
    store.delete("pods", "default", "b")
    store.create("pods", pod("d"))
    rest = client.get(f"{PODS}?continue={first['metadata']['continue']}").json()
    assert [p["metadata"]["name"] for p in rest["items"]] == ["b", "c"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    "params", ["resourceVersionMatch=Exact", "limit=5"], ids=["an exact match", "a limit without a match"]
)
def test_an_exact_read_lists_the_state_at_that_version(
    client: TestClient, store: MemoryStore, params: str
) -> None:
    _pods(store, "a")
    then = store.current_resource_version()
    _pods(store, "b")
    body = client.get(f"{PODS}?resourceVersion={then}&{params}").json()
    assert [p["metadata"]["name"] for p in body["items"]] == ["a"]
    assert body["metadata"]["resourceVersion"] == str(then)


def test_a_not_older_than_list_is_the_current_state(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a")
    then = store.current_resource_version()
    _pods(store, "b")
    body = client.get(f"{PODS}?resourceVersion={then}&resourceVersionMatch=NotOlderThan").json()
    assert [p["metadata"]["name"] for p in body["items"]] == ["a", "b"]
    assert body["metadata"]["resourceVersion"] == str(store.current_resource_version())


@pytest.mark.parametrize("match", ["NotOlderThan", "Exact"])
def test_a_version_in_the_future_is_too_large(client: TestClient, store: MemoryStore, match: str) -> None:
    now = store.current_resource_version()
    response = client.get(f"{PODS}?resourceVersion={now + 10}&resourceVersionMatch={match}")
    assert response.status_code == 504
    body = response.json()
    assert body["reason"] == "Timeout"
    assert body["message"] == f"Timeout: Too large resource version: {now + 10}, current: {now}"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_an_exact_list_at_a_compacted_version_is_gone(
    small_client: TestClient, small_store: MemoryStore
) -> None:
    _pods(small_store, "a")
    then = small_store.current_resource_version()
    _pods(small_store, *"bcdefgh")
    response = small_client.get(f"{PODS}?resourceVersion={then}&resourceVersionMatch=Exact")
    assert response.status_code == 410
    assert (response.json()["reason"], response.json()["message"]) == ("Expired", EXPIRED_LIST)


def test_a_compacted_continue_token_is_gone_with_a_token_for_the_rest(
    small_client: TestClient, small_store: MemoryStore
) -> None:
    _pods(small_store, "a", "b")
    first = small_client.get(f"{PODS}?limit=1").json()
    _pods(small_store, *"cdefgh")
    response = small_client.get(f"{PODS}?limit=100&continue={first['metadata']['continue']}")
    assert response.status_code == 410
    status = response.json()
    assert (status["reason"], status["message"]) == ("Expired", INCONSISTENT_CONTINUE)
    rest = small_client.get(f"{PODS}?continue={status['metadata']['continue']}").json()
    assert [p["metadata"]["name"] for p in rest["items"]] == list("bcdefgh")


def test_continue_takes_no_resource_version(client: TestClient, store: MemoryStore) -> None:
    _pods(store, "a", "b")
    token = client.get(f"{PODS}?limit=1").json()["metadata"]["continue"]
    response = client.get(f"{PODS}?continue={token}&resourceVersion=5")
    assert response.status_code == 400
    assert response.json()["message"] == "specifying resource version is not allowed when using continue"
