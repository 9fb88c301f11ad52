"""A live server's clocks run long work in time slices: the event loop gets a turn at least every
slice (plus one item) however much is due, and the work keeps its order."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from kubetaint.apiserver.clockapi import LoopVirtualClock
from kubetaint.clock import RealClock
from kubetaint.controllers.replicaset.workqueue import WorkQueue

ITEMS = 150
ITEM_SECONDS = 0.004  # 0.6 s of work in all
#: The longest the loop may wait for a turn: a slice (clock.slices.SLICE_SECONDS, 50 ms) and an
#: item, with room for a loaded machine; without slices it waits for all 0.6 s.
MAX_GAP = 0.3


def _work(done: list[int], index: int) -> Callable[[], None]:
    def item() -> None:
        time.sleep(ITEM_SECONDS)
        done.append(index)

    return item


async def _longest_wait(work: Awaitable[None], finished: Callable[[], bool]) -> float:
    """Run `work` while a ticker asks the loop for turns; the longest wait for one."""
    longest = 0.0
    task = asyncio.ensure_future(work)
    last = time.monotonic()
    while not finished():
        await asyncio.sleep(0)
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    await task
    return longest


def test_the_virtual_clock_runs_callbacks_due_now_in_slices() -> None:
    async def scenario() -> tuple[float, list[int]]:
        clock = LoopVirtualClock(0.0, asyncio.get_running_loop())
        done: list[int] = []
        for index in range(ITEMS):
            clock.call_soon(_work(done, index))
        return await _longest_wait(asyncio.sleep(0), lambda: len(done) == ITEMS), done

    longest, done = asyncio.run(scenario())
    assert done == list(range(ITEMS))
    assert longest < MAX_GAP


def test_an_advance_of_the_virtual_clock_runs_in_slices() -> None:
    async def scenario() -> tuple[float, list[int], float]:
        clock = LoopVirtualClock(0.0, asyncio.get_running_loop())
        done: list[int] = []
        for index in range(ITEMS):
            clock.call_at(1.0 + index, _work(done, index))
        longest = await _longest_wait(clock.advance_in_slices(3600), lambda: len(done) == ITEMS)
        return longest, done, clock.now()

    longest, done, now = asyncio.run(scenario())
    assert done == list(range(ITEMS))
    assert now == 3600.0
    assert longest < MAX_GAP


def test_a_work_queue_on_the_real_clock_yields_between_keys() -> None:
    async def scenario() -> tuple[float, list[int]]:
        done: list[int] = []
        queue: WorkQueue[int] = WorkQueue(
            RealClock(asyncio.get_running_loop()), lambda k: _work(done, k)(), "test"
        )
        for index in range(ITEMS):
            queue.add(index)
        return await _longest_wait(asyncio.sleep(0), lambda: len(done) == ITEMS), done

    longest, done = asyncio.run(scenario())
    assert done == list(range(ITEMS))
    assert longest < MAX_GAP
