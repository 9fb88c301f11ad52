"""The read half of the Store protocol for a writer that wraps another store: reads, watches,
subscriptions and the store's properties pass straight through to the wrapped one."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from kubetaint.store.interface import JSON, BatchHandler, Capabilities, ListResult, Store, Watch


class ReadsPassThrough:
    """Reads answered by `_reads`, the store this writer wraps; the writer adds no delay and no
    capability of its own."""

    _reads: Store

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        return self._reads.get(resource, namespace, name)

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        return self._reads.list(resource, **kwargs)

    def watch(self, resource: str, **kwargs: Any) -> Watch:
        return self._reads.watch(resource, **kwargs)

    def subscribe(self, handler: BatchHandler, resource: str | None = None) -> Callable[[], None]:
        return self._reads.subscribe(handler, resource)

    def current_resource_version(self) -> int:
        return self._reads.current_resource_version()

    @property
    def delivers_synchronously(self) -> bool:
        """The wrapped store's (`Store.delivers_synchronously`)."""
        return self._reads.delivers_synchronously

    @property
    def capabilities(self) -> Capabilities:
        """The wrapped store's (`Store.capabilities`)."""
        return self._reads.capabilities

    def list_keyed(self, resource: str) -> tuple[builtins.list[tuple[tuple[str, str], JSON]], int]:
        return self._reads.list_keyed(resource)

    def close(self) -> None:
        self._reads.close()
