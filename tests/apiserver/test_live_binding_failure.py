"""A live server whose store refuses every binding (a full disk) keeps answering: the scheduler
retries the pod after its backoff instead of holding the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from controlplane.builders import BindingsFail
from kubetaint.apiserver.live import LiveCluster, listen, serve_forever
from kubetaint.clock import RealClock

from .builders import namespace

PROBE_TIMEOUT = 1.0


class LiveThread:
    """`LiveCluster` on a BindingsFail store and the real clock, served from a thread."""

    def __init__(self) -> None:
        self.sock = listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.started = threading.Event()
        self.store: BindingsFail | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    async def _serve(self) -> None:
        clock = RealClock(asyncio.get_running_loop())
        self.store = BindingsFail(clock)
        self.store.create("namespaces", namespace("default"))
        cluster = LiveCluster(self.store, clock, workers=1, seed=1, server_address=self.url)
        cluster.start()
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        self.started.set()
        with contextlib.suppress(asyncio.CancelledError):
            await serve_forever(cluster, self.sock)

    def __enter__(self) -> LiveThread:
        self._thread.start()
        assert self.started.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(10)
        self.sock.close()


@pytest.fixture
def live() -> Iterator[LiveThread]:
    with LiveThread() as server:
        yield server


def test_health_probes_answer_within_a_second_while_a_binding_keeps_failing(live: LiveThread) -> None:
    spec = {"containers": [{"name": "app", "image": "nginx"}]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}
    created = httpx.post(f"{live.url}/api/v1/namespaces/default/pods", json=pod, timeout=10)
    assert created.status_code == 201, created.text
    start = time.monotonic()
    slowest = 0.0
    while time.monotonic() - start < 4:
        before = time.monotonic()
        answer = httpx.get(f"{live.url}/healthz", timeout=PROBE_TIMEOUT)
        slowest = max(slowest, time.monotonic() - before)
        assert answer.text == "ok"
        time.sleep(0.1)
    assert slowest < PROBE_TIMEOUT
    assert live.store is not None
    # attempts 1 s, 2 s and 4 s apart: three or four in four seconds, not thousands
    assert 2 <= len(live.store.attempts) <= 4, live.store.attempts
