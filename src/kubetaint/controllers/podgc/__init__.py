"""The pod garbage collector."""

from kubetaint.controllers.podgc.controller import PodGCController

__all__ = ["PodGCController"]
