"""The front of a live server on etcd: health probes answered on its own thread while the
cluster loop is held, and kube-apiserver's request deadline (`?timeout=`, 60 s at most) ending
in a 504 Timeout Status for a request the cluster has not started answering."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from kubetaint.api import errors
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.front import REQUEST_TIMEOUT, Front, request_deadline
from kubetaint.apiserver.live import listen
from kubetaint.clock import VirtualClock
from kubetaint.store.memory import MemoryStore

from .builders import namespace

TIMEOUT_STATUS = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Timeout: request did not complete within requested timeout - context deadline exceeded",
    "reason": "Timeout",
    "code": 504,
}


async def _hold(request: Request) -> Response:
    time.sleep(float(request.query_params["seconds"]))  # a store call that waits for the network
    return PlainTextResponse("held")


class Served:
    """The app on a cluster loop of its own thread, reached through a Front served by uvicorn
    on another thread."""

    def __init__(self) -> None:
        clock = VirtualClock()
        store = MemoryStore(clock)
        store.create("namespaces", namespace("default"))
        app = create_app(store, clock, extra_routes=[Route("/hold", _hold)])
        self.cluster = asyncio.new_event_loop()
        self.cluster_thread = threading.Thread(target=self.cluster.run_forever, daemon=True)
        self.cluster_thread.start()
        self.sock = listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(Front(app, self.cluster), log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[self.sock])), daemon=True
        )
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.cluster.call_soon_threadsafe(self.cluster.stop)
        self.cluster_thread.join(10)
        self.cluster.close()
        self.sock.close()


@pytest.fixture
def served() -> Iterator[Served]:
    server = Served()
    yield server
    server.stop()


def test_health_probes_answer_while_the_cluster_loop_is_held(served: Served) -> None:
    holder = threading.Thread(target=lambda: httpx.get(f"{served.url}/hold?seconds=3", timeout=10))
    holder.start()
    time.sleep(0.3)
    before = time.monotonic()
    assert httpx.get(f"{served.url}/healthz", timeout=2).text == "ok"
    assert time.monotonic() - before < 1
    holder.join()


def test_a_request_the_cluster_does_not_start_within_its_timeout_gets_504(served: Served) -> None:
    holder = threading.Thread(target=lambda: httpx.get(f"{served.url}/hold?seconds=3", timeout=10))
    holder.start()
    time.sleep(0.3)
    before = time.monotonic()
    answer = httpx.post(
        f"{served.url}/api/v1/namespaces/default/pods?timeout=1s", json={"kind": "Pod"}, timeout=10
    )
    waited = time.monotonic() - before
    holder.join()
    assert (answer.status_code, answer.json()) == (504, TIMEOUT_STATUS)
    assert 0.9 < waited < 2
    # timed out before it started, it never ran: no pod was created
    listed = httpx.get(f"{served.url}/api/v1/namespaces/default/pods", timeout=10).json()
    assert listed["items"] == []


def test_a_request_answered_within_its_timeout_is_served(served: Served) -> None:
    answer = httpx.get(f"{served.url}/api/v1/namespaces?timeout=5s", timeout=10)
    assert answer.status_code == 200
    assert [n["metadata"]["name"] for n in answer.json()["items"]] == ["default"]


def test_a_timeout_that_is_not_a_go_duration_is_a_bad_request(served: Served) -> None:
    answer = httpx.get(f"{served.url}/api/v1/namespaces?timeout=soon", timeout=10)
    assert answer.status_code == 400
    assert answer.json()["message"] == (
        'invalid timeout specified in the request URL - time: invalid duration "soon"'
    )


@pytest.mark.parametrize(
    ("query", "seconds"),
    [
        pytest.param(b"", REQUEST_TIMEOUT, id="none: the server's 60 s"),
        pytest.param(b"timeout=5s", 5.0, id="a shorter one is taken"),
        pytest.param(b"timeout=1m30s", REQUEST_TIMEOUT, id="a longer one is capped"),
        pytest.param(b"timeout=0s", REQUEST_TIMEOUT, id="zero: the server's"),
        pytest.param(b"timeout=-2s", REQUEST_TIMEOUT, id="negative: the server's"),
        pytest.param(b"timeout=250ms&timeout=9s", 0.25, id="repeated: the first"),
        pytest.param(b"watch=true&timeout=bad", REQUEST_TIMEOUT, id="a watch's timeout is not looked at"),
    ],
)
def test_request_deadline_follows_with_request_deadline(query: bytes, seconds: float) -> None:
    assert request_deadline({"query_string": query}) == seconds


def test_request_deadline_refuses_a_bad_duration() -> None:
    with pytest.raises(errors.StatusError) as err:
        request_deadline({"query_string": b"timeout=1x"})
    assert err.value.code == 400
