"""Writing an Event to its sink as client-go's broadcasters do: one write (`record_event`, their
recordEvent) and the tries of it (`Attempts.record`, tools/record's recordToSink and
tools/events' attemptRecording), shared by the core/v1 recorder (`store.events`) and the
events.k8s.io/v1 broadcaster (`store.eventseries`).

- A write the server answers is done: what it stored is returned, or, when it refused the write
  (a `StatusError`), nothing (events are best effort; the refusal is logged as upstream logs it).
  An events.k8s.io/v1 series whose Event was gone and is created again meanwhile by another write
  (`AlreadyExists`) is tried again, as upstream does.
- A server that cannot be reached (a `StoreError`) is tried again after a sleep, on the
  component's clock, up to `MAX_TRIES_PER_EVENT` writes in all. tools/record sleeps a random part
  of `SLEEP_DURATION` before its second write (so that the clients of a server that comes back
  do not all write at once) and `SLEEP_DURATION` before each later one (`CORE_SLEEPS`);
  tools/events sleeps `SLEEP_DURATION` with up to a quarter more, at random, every time
  (`wait.Jitter(sleepDuration, 0.25)`, `EVENTS_V1_SLEEPS`).
- A name another writer took (`AlreadyExists` on the create of a new Event: another process on the
  same virtual clock) is tried again at once under the next nanosecond's name, up to
  `NAME_ATTEMPTS` names (upstream's wall clock makes such a collision unlikely; it drops the event).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock, Handle
from kubetaint.store.interface import JSON, Store, StoreError

log = logging.getLogger(__name__)

#: maxTriesPerEvent: how many writes of one event an unreachable server gets.
MAX_TRIES_PER_EVENT = 12
#: defaultSleepDuration: the sleep between two writes of an event the server did not get.
SLEEP_DURATION = 10.0
#: How many names (one nanosecond apart) the create of a new Event tries when the name is taken.
NAME_ATTEMPTS = 8
#: How many times a patch (a read and an update) is made again after losing a race with a writer.
CONFLICT_ATTEMPTS = 4
#: The cause of a refusal in a namespace being deleted (v1.NamespaceTerminatingCause).
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"

#: One write of an event to the sink: what the server stored, or a StatusError or StoreError raised.
Write = Callable[[], JSON]


@dataclass(frozen=True)
class Sleeps:
    """How long a broadcaster sleeps before its next write of an event (`tries`: the writes made)."""

    #: the part of SLEEP_DURATION drawn at random before the second write (1.0: the whole)
    first_random: float
    #: the part of SLEEP_DURATION drawn at random and added before every write
    jitter: float

    def before(self, tries: int, rng: random.Random) -> float:
        if tries == 1 and self.first_random:
            return SLEEP_DURATION * self.first_random * rng.random()
        return SLEEP_DURATION * (1 + self.jitter * rng.random())


#: tools/record's recordToSink: a random part of the sleep first, then the whole sleep.
CORE_SLEEPS = Sleeps(first_random=1.0, jitter=0.0)
#: tools/events' attemptRecording: the sleep and up to a quarter more, every time.
EVENTS_V1_SLEEPS = Sleeps(first_random=0.0, jitter=0.25)


def record_event(
    write: Write, *, rename: Callable[[], None] | None = None, series: bool = False
) -> tuple[JSON | None, bool]:
    """recordEvent: one write of an event (`rename`: give a new Event the next name, when its name
    is taken; `series`: the write of an events.k8s.io/v1 series); returns what was stored (None
    when nothing was) and whether to try again later (the server was not reached, or a series'
    Event was created meanwhile)."""
    names = 1
    while True:
        try:
            return write(), False
        except StoreError as error:
            log.warning("Unable to write event: '%s' (may retry after sleeping)", error)
            return None, True
        except StatusError as error:
            if error.reason == "AlreadyExists" and rename is not None and names < NAME_ATTEMPTS:
                names += 1
                rename()
                continue
            if error.reason == "AlreadyExists" and series:
                return None, True
            if error.reason == "AlreadyExists" or _namespace_terminating(error):
                log.debug("Server rejected event: '%s' (will not retry!)", error.message)
            else:
                log.warning("Server rejected event: '%s' (will not retry!)", error.message)
            return None, False


def _namespace_terminating(error: StatusError) -> bool:
    return any(cause.get("type") == NAMESPACE_TERMINATING_CAUSE for cause in error.causes)


def patch_event(store: Store, namespace: str, name: str, change: Callable[[JSON], JSON]) -> JSON:
    """The sink's Patch of a stored Event: `change` of what is stored, written (read and written
    again when another writer came between, as the API server retries a patch); the StatusError
    of the read or the write when the Event is gone or the write refused."""
    attempts = 1
    while True:
        current = store.get("events", namespace, name)
        try:
            return store.update("events", change(current))
        except StatusError as error:
            if error.code != 409 or attempts == CONFLICT_ATTEMPTS:
                raise
        attempts += 1


class Attempts:
    """The writes of one broadcaster's events: each tried at once and, while the server cannot be
    reached, again after its sleeps on `clock` (`rng` draws them), until `MAX_TRIES_PER_EVENT`
    writes; `stop` drops the tries still to come (a shut down broadcaster's)."""

    def __init__(self, clock: Clock, rng: random.Random, sleeps: Sleeps) -> None:
        self._clock = clock
        self._rng = rng
        self._sleeps = sleeps
        self._pending: set[Handle] = set()

    def record(
        self,
        write: Write,
        *,
        rename: Callable[[], None] | None = None,
        series: bool = False,
        recorded: Callable[[JSON], None] | None = None,
    ) -> JSON | None:
        """Write an event (as `record_event`); returns what was stored, None when nothing was yet
        (a later write, when one is due, calls `recorded` with what it stored)."""
        return self._attempt(write, rename, series, recorded, 0)

    def stop(self) -> None:
        """Drop the writes still to come."""
        for handle in self._pending:
            handle.cancel()
        if self._pending:
            log.warning("Unable to write %d events (broadcaster is shut down)", len(self._pending))
        self._pending.clear()

    def _attempt(
        self,
        write: Write,
        rename: Callable[[], None] | None,
        series: bool,
        recorded: Callable[[JSON], None] | None,
        tries: int,
    ) -> JSON | None:
        stored, retry = record_event(write, rename=rename, series=series)
        if stored is not None and recorded is not None:
            recorded(stored)
        if not retry:
            return stored
        tries += 1
        if tries >= MAX_TRIES_PER_EVENT:
            log.error("Unable to write event (retry limit exceeded!)")
            return None
        scheduled: list[Handle] = []

        def again() -> None:
            self._pending.difference_update(scheduled)
            self._attempt(write, rename, series, recorded, tries)

        scheduled.append(self._clock.call_later(self._sleeps.before(tries, self._rng), again))
        self._pending.update(scheduled)
        return None
