"""Running a component against a remote API server, optionally leader-elected: an asyncio loop
(the RealClock's), a `RemoteStore` whose watch events are handed to that loop, a registry
without local admission or validation (the server runs both), and start/stop on winning and
losing the lease (what kube-scheduler's and kube-controller-manager's `Run` do with
leaderelection.RunOrDie, ReleaseOnCancel set).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kubetaint.clock import RealClock
from kubetaint.clock.base import Clock
from kubetaint.controlplane.leaderelection import ElectionConfig, LeaderElector
from kubetaint.registry import Registry
from kubetaint.registry.validator import no_validation
from kubetaint.store.interface import StoreError
from kubetaint.store.remote import RemoteStore
from kubetaint.store.remote_config import Connection


class Component(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


#: Builds the component on (store, registry, clock); called once, before leading.
Builder = Callable[[RemoteStore, Registry, Clock], Component]


def remote_registry(store: RemoteStore) -> Registry:
    return Registry(store, admission=None, validator=no_validation)


def _soon(loop: asyncio.AbstractEventLoop, call: Callable[[], None]) -> None:
    loop.call_soon_threadsafe(call)


@dataclass
class Outcome:
    """How a run ended: 0 after a signal, 1 when leadership was lost or the server unreachable."""

    code: int = 0
    message: str = ""


async def run_component(
    connection: Connection,
    build: Builder,
    election: ElectionConfig | None,
    *,
    on_event: Callable[[str], None] = lambda line: None,
    user_agent: str | None = None,
) -> Outcome:
    """Serve until SIGINT/SIGTERM (or lost leadership); see the module docstring."""
    loop = asyncio.get_running_loop()
    clock = RealClock(loop)
    store = RemoteStore(connection, dispatch=lambda call: _soon(loop, call), user_agent=user_agent)
    outcome = Outcome()
    done = asyncio.Event()
    try:
        store.list("namespaces", limit=1)
    except StoreError as err:
        store.close()
        return Outcome(1, str(err))
    component = build(store, remote_registry(store), clock)
    elector: LeaderElector | None = None

    def lost() -> None:
        outcome.code, outcome.message = 1, "leaderelection lost"
        component.stop()
        done.set()

    def started() -> None:
        on_event("started leading")
        component.start()

    if election is None:
        component.start()
    else:
        elector = LeaderElector(
            store,
            clock,
            election,
            on_started_leading=started,
            on_stopped_leading=lost,
            on_new_leader=lambda holder: on_event(f"new leader elected: {holder}"),
        )
        elector.start()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, done.set)
    try:
        await done.wait()
    finally:
        component.stop()
        if elector is not None:
            elector.release()
        store.close()
    return outcome
