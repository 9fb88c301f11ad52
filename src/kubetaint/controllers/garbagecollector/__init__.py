"""The garbage collector: owner-reference cascading deletion (Background, Foreground, Orphan)."""

from kubetaint.controllers.garbagecollector.controller import GarbageCollector
from kubetaint.controllers.garbagecollector.graph import FOLLOWED

__all__ = ["FOLLOWED", "GarbageCollector"]
