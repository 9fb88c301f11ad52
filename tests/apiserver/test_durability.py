"""The API server answers only with what is on disk: `DurabilityBarrier.wait()` returns once the
store says every committed write is durable, raises when the store cannot sync, and costs
nothing with stores that make each write durable before returning."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kubetaint.api import errors
from kubetaint.apiserver.app import create_app
from kubetaint.apiserver.durability import DurabilityBarrier
from kubetaint.apiserver.server import BackgroundServer
from kubetaint.clock import VirtualClock
from kubetaint.store.interface import Capabilities
from kubetaint.store.memory import MemoryStore
from kubetaint.store.sqlite import SqliteStore

Callback = Callable[[BaseException | None], None]


class ManualStore(MemoryStore):
    """A memory store whose durability the test decides: `pending` callbacks wait for `sync()`."""

    def __init__(self) -> None:
        super().__init__(VirtualClock())
        self.capabilities = Capabilities(durability=self)
        self.durable = True
        self.pending: list[Callback] = []

    def defer_durability(self) -> None:
        pass

    def when_durable(self, callback: Callback) -> bool:
        if self.durable:
            return True
        self.pending.append(callback)
        return False

    def sync(self, error: BaseException | None = None) -> None:
        """From another thread, as the SQLite store's syncer does."""
        waiting, self.pending = self.pending, []
        thread = threading.Thread(target=lambda: [cb(error) for cb in waiting])
        thread.start()
        thread.join()


async def _outcome(barrier: DurabilityBarrier, store: ManualStore, error: BaseException | None) -> object:
    task = asyncio.ensure_future(barrier.wait())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not task.done() and len(store.pending) == 1  # waiting for the disk
    store.sync(error)
    try:
        return await asyncio.wait_for(task, 15)
    except errors.StatusError as err:
        return err


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(None, None, id="returns once the store says the writes are durable"),
        pytest.param(
            errors.internal_error("cannot sync"), 500, id="raises the store's error when it cannot sync"
        ),
    ],
)
def test_the_barrier_waits_for_the_store(error: BaseException | None, expected: int | None) -> None:
    store = ManualStore()
    store.durable = False
    outcome = asyncio.run(_outcome(DurabilityBarrier(store), store, error))
    assert (outcome.code if isinstance(outcome, errors.StatusError) else outcome) == expected


def test_the_barrier_returns_at_once_when_everything_is_durable() -> None:
    store = ManualStore()
    asyncio.run(DurabilityBarrier(store).wait())
    assert store.pending == []


def test_the_barrier_is_free_with_a_store_without_deferred_durability() -> None:
    barrier = DurabilityBarrier(MemoryStore(VirtualClock()))
    assert barrier._store is None
    asyncio.run(barrier.wait())


def test_a_response_waits_for_the_sync_and_a_failed_sync_is_a_500() -> None:
    store = ManualStore()
    store.durable = False
    with BackgroundServer(create_app(store, VirtualClock())) as server:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
        result: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: result.append(httpx.post(f"{server.url}/api/v1/namespaces", json=body, timeout=15))
        )
        thread.start()
        for _ in range(1500):
            if store.pending:
                break
            thread.join(0.01)
        assert result == [] and len(store.pending) == 1  # written, not answered
        store.sync(errors.internal_error("cannot sync /data/kubetaint.db-wal: [Errno 5] EIO"))
        thread.join(15)
    assert result[0].status_code == 500
    assert (
        result[0].json()["message"]
        == "Internal error occurred: cannot sync /data/kubetaint.db-wal: [Errno 5] EIO"
    )


def test_a_live_sqlite_store_answers_creates_durably(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, VirtualClock())
    with BackgroundServer(create_app(store, VirtualClock())) as server:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
        response = httpx.post(f"{server.url}/api/v1/namespaces", json=body, timeout=15)
        assert response.status_code == 201
        assert store._syncer.durable >= int(response.json()["metadata"]["resourceVersion"])
    store.close()
