"""A registry commit of Event creates (a recorder's events written at once): each admitted and
validated as `Registry.create` does, those admitted stored in one store commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubetaint.admission import CREATE, Attributes
from kubetaint.api.errors import StatusError
from kubetaint.store.interface import JSON, Create, Result, object_key

if TYPE_CHECKING:
    from kubetaint.registry.registry import Registry

EVENTS = "events"


def create_events(registry: Registry, ops: Sequence[Create], stop_at_failure: bool) -> list[Result]:
    """A run of Event creates (a recorder's events written at once): each admitted and
    validated as `create` does, those admitted stored in one store commit. No Event's
    admission reads another Event, so admitting them before storing any is what creating
    them one by one does."""
    results: list[Result | None] = []
    admitted: list[tuple[int, JSON]] = []
    for op in ops:
        try:
            obj = registry._before_create(EVENTS, op.object)
            namespace, name = object_key(obj)
            attrs = Attributes(CREATE, EVENTS, obj, None, namespace, name, "", False, None)
            admitted.append((len(results), registry._admit(attrs, None)))
            results.append(None)
        except StatusError as err:
            results.append(err)
            if stop_at_failure:
                break
    stored = registry.store.commit(
        [Create(EVENTS, obj) for _, obj in admitted], stop_at_failure=stop_at_failure
    )
    for (index, _), result in zip(admitted, stored, strict=False):
        results[index] = result
    if len(stored) < len(admitted):  # the store stopped at a failure: nothing after it counts
        results = results[: admitted[len(stored)][0]]
    return [r for r in results if r is not None]
