"""A component's informers: for each resource it reads, the shared informer it is given (the
control plane's one cache per resource, as client-go's SharedInformerFactory hands out) or, built
alone, one of its own, which it starts and stops with itself.

A component asks for each informer (`shared_or_own`), registers its handlers on it, and calls
`start` and `stop` from its own: a shared informer is started and stopped by whoever shares it
(an informer started before the handlers were added replays its cache to them as one batch of
ADDED, see `store.informer`).
"""

from __future__ import annotations

from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store


class ComponentInformers:
    """The informers one component reads, remembering which of them it owns."""

    __slots__ = ("_own", "_read", "_store")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._own: list[Informer] = []
        self._read: list[Informer] = []

    def shared_or_own(self, given: Informer | None, resource: str, *, namespace: str = "") -> Informer:
        """`given` when the component was given a shared informer, else a new informer of
        `resource` (in `namespace`; "" for every namespace) that this component owns."""
        informer = given
        if informer is None:
            informer = Informer(self._store, resource, namespace=namespace)
            self._own.append(informer)
        self._read.append(informer)
        return informer

    def owns(self, informer: Informer) -> bool:
        """Whether `informer` is one of this component's own (not a shared one it was given)."""
        return any(own is informer for own in self._own)

    def start(self) -> None:
        """Start the owned informers, in the order they were asked for (each lists its resource
        and tells its handlers that listing as one batch of ADDED)."""
        for informer in self._own:
            informer.start()

    def start_all(self) -> None:
        """Start every informer the component reads, in the order it asked for them, the shared
        ones too (for a component that promises to start the informers it is given; one already
        started stays as it is)."""
        for informer in self._read:
            informer.start()

    def stop(self) -> None:
        """Stop the owned informers (a shared informer is its sharer's to stop)."""
        for informer in self._own:
            informer.stop()
