"""The garbage collector: owner-reference cascading deletion (Background, Foreground, Orphan)."""

from kubetaint.controllers.garbagecollector.controller import GarbageCollector

__all__ = ["GarbageCollector"]
