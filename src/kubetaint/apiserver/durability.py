"""Answering only with what is durable: before a response or a watch event leaves the server,
every write committed so far must have reached the disk (etcd answers after its raft log is
fsynced; a client must never see a state a power loss could take back).

With a store that syncs in the background (`store.interface.DeferredDurability`, the SQLite
store under `kubetaint up`), the event loop writes without waiting for the fsync and awaits the
barrier instead: one fsync acknowledges every request waiting for it, while the loop goes on
parsing and admitting the next requests.
With any other store the barrier costs nothing.
"""

from __future__ import annotations

import asyncio

from kubetaint.store.interface import Store


class DurabilityBarrier:
    """`await barrier.wait()`: returns once every write committed before the call is durable;
    raises the store's error when the sync failed."""

    def __init__(self, store: Store) -> None:
        self._store = store.capabilities.durability

    async def wait(self) -> None:
        store = self._store
        if store is None:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def synced(error: BaseException | None) -> None:
            loop.call_soon_threadsafe(_settle, future, error)

        if store.when_durable(synced):
            return
        await future


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():  # the waiter was cancelled (its client went away)
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
