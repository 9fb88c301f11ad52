"""The recorder interface of client-go's tools/events (`EventsRecorder`: kube-scheduler records
through it) and `EventRecorderAdapter`, which puts a core/v1 recorder behind it, as
record.NewEventRecorderAdapter does for an API server that does not serve events.k8s.io/v1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import JSON


class EventsRecorder(Protocol):
    """tools/events' EventRecorder: `event(...)` is its Eventf."""

    #: the reporting controller (kube-scheduler's: the profile's scheduler name)
    @property
    def component(self) -> str: ...

    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        kind: str = "",
        *,
        action: str,
        related: Mapping[str, Any] | None = None,
        related_kind: str = "",
    ) -> JSON | None:
        """Eventf(regarding, related, type, reason, action, note): record the event; returns the
        Event written, None when none was (yet)."""
        ...


class EventRecorderAdapter:
    """record.EventRecorderAdapter: a core/v1 `EventRecorder` (source.component: the reporting
    controller) behind tools/events' interface; the action and the related object are not
    recorded, as upstream's Eventf drops them."""

    def __init__(self, recorder: EventRecorder) -> None:
        self.recorder = recorder

    @property
    def component(self) -> str:
        return self.recorder.component

    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        note: str,
        kind: str = "",
        *,
        action: str,
        related: Mapping[str, Any] | None = None,
        related_kind: str = "",
    ) -> JSON | None:
        """Eventf: the core/v1 recorder's event about `regarding`."""
        return self.recorder.event(regarding, event_type, reason, note, kind)
