"""DELETE of a pod over HTTP is graceful (registry.graceful): a bound pod answers Terminating;
gracePeriodSeconds (query or DeleteOptions body, the body winning) of 0 removes it at once."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.store.memory import MemoryStore

URL = "/api/v1/namespaces/default/pods/p"


def bound_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"},
        "status": {"phase": "Running"},
    }


def test_delete_of_a_bound_pod_answers_with_the_terminating_pod(
    client: TestClient, store: MemoryStore, clock: VirtualClock
) -> None:
    store.create("pods", bound_pod())
    response = client.delete(URL)
    assert response.status_code == 200
    assert response.json()["metadata"]["deletionTimestamp"] == format_time(clock.now() + 30)
    assert store.get("pods", "default", "p")["metadata"]["deletionGracePeriodSeconds"] == 30
    again = client.delete(URL)  # pending: nothing changes
    assert again.json()["metadata"]["resourceVersion"] == response.json()["metadata"]["resourceVersion"]


def test_delete_of_an_unbound_pod_removes_it(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", {**bound_pod(), "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert client.delete(URL).status_code == 200
    assert store.list("pods").items == []


@pytest.mark.parametrize(
    ("url", "body"),
    [
        pytest.param(URL + "?gracePeriodSeconds=0", None, id="query parameter"),
        pytest.param(URL, {"gracePeriodSeconds": 0}, id="DeleteOptions body"),
        pytest.param(
            URL + "?gracePeriodSeconds=60", {"gracePeriodSeconds": 0}, id="the body wins over the query"
        ),
    ],
)
def test_grace_period_zero_deletes_at_once(
    client: TestClient, store: MemoryStore, url: str, body: Any
) -> None:
    store.create("pods", bound_pod())
    response = client.request("DELETE", url, json=body)
    assert response.status_code == 200
    assert store.list("pods").items == []


def test_a_shorter_grace_period_moves_the_deadline(
    client: TestClient, store: MemoryStore, clock: VirtualClock
) -> None:
    store.create("pods", bound_pod())
    client.delete(URL)
    shortened = client.request("DELETE", URL, json={"gracePeriodSeconds": 5}).json()
    assert shortened["metadata"]["deletionGracePeriodSeconds"] == 5
    assert shortened["metadata"]["deletionTimestamp"] == format_time(clock.now() + 5)


@pytest.mark.parametrize("value", ["soon", 1.5, True], ids=["a string", "a float", "a boolean"])
def test_a_grace_period_of_the_wrong_type_is_a_400(
    client: TestClient, store: MemoryStore, value: Any
) -> None:
    store.create("pods", bound_pod())
    response = client.request("DELETE", URL, json={"gracePeriodSeconds": value})
    assert response.status_code == 400
    assert response.json()["reason"] == "BadRequest"
    assert "deletionTimestamp" not in store.get("pods", "default", "p")["metadata"]


def test_a_bad_query_grace_period_is_a_400(client: TestClient, store: MemoryStore) -> None:
    store.create("pods", bound_pod())
    response = client.delete(URL + "?gracePeriodSeconds=later")
    assert response.status_code == 400
    assert "deletionTimestamp" not in store.get("pods", "default", "p")["metadata"]
